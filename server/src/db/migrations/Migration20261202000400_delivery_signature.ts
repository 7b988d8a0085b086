import { Migration } from '@mikro-orm/migrations';

// The signature of the approved message (metadata.approval.signature, a compact JWS), made once
// at the first attempt and stored, so every retry sends the same message even across a key
// rotation. Null until then (and for deliveries sent before signing existed).
export class Migration20261202000400_delivery_signature extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table delivery add column approval_signature text;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table delivery drop column approval_signature;`);
  }
}
