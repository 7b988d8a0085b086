import { Migration } from '@mikro-orm/migrations';

// Every approving decision carries its signed approval (docs/VERIFYING-APPROVALS.md
// "Approvals of requests without an A2A task"): the compact JWS the approval signing key made in
// the very transaction that recorded the decision (decisions/service.ts), written with the row at
// insert and never read back to be signed. Null for rejections, requests for changes,
// delegations, quorum votes and decisions made before this migration.
export class Migration20261205000100_decision_signature extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table decision add column signature text;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table decision drop column signature;`);
  }
}
