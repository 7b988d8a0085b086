import { Migration } from '@mikro-orm/migrations';

// Signed audit (the key lives outside the database): every event and checkpoint written from
// now on carries an Ed25519 signature and the id of the key that made it. Checkpoints become
// one chain per tenant (so a tenant's export names only its own streams); the global unsigned
// checkpoints and unsigned events written before this migration stay, and verify as before.
export class Migration20261201000400_audit_signatures extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table audit_event add column sig text, add column key_id text;
alter table audit_checkpoint add column tenant_id uuid, add column sig text, add column key_id text,
  add column first_signed_event_seq bigint;
-- One chain per tenant (the legacy global chain is the one with no tenant): one first
-- checkpoint and one successor per checkpoint in each.
drop index audit_checkpoint_chain;
create unique index audit_checkpoint_chain on audit_checkpoint (coalesce(tenant_id::text, ''), coalesce(prev_hash, ''));
create index audit_checkpoint_tenant on audit_checkpoint (tenant_id, seq);
`);
  }
}
