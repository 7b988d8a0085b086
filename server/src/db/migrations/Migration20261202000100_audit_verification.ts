import { Migration } from '@mikro-orm/migrations';

// Audit verification off the request path (audit/verification.ts): per tenant, how far the
// worker has verified the log (every event up to verified_seq, every checkpoint up to
// verified_checkpoint_seq), the verifier's state to resume from (signed by the audit key, so a
// rewritten row is found), and the progress of a full re-verification an admin started. No
// foreign key to tenant: events of a tenant without a row (tests, a removed tenant) still verify.
// audit_event (tenant_id, seq) serves reading a tenant's log from a seq on, in order.
export class Migration20261202000100_audit_verification extends Migration {
  override async up(): Promise<void> {
    // Earlier migrations of the same run may leave deferred constraint checks on these tables
    // pending (all pending migrations run in one transaction), and Postgres refuses CREATE INDEX
    // on a table with pending trigger events: run those checks now.
    this.addSql('set constraints all immediate;');
    this.addSql(`
create index audit_event_tenant_seq on audit_event (tenant_id, seq);
create table audit_verification (
  tenant_id uuid primary key,
  version bigint not null default 0,
  verified_seq bigint not null default 0,
  verified_checkpoint_seq bigint not null default 0,
  state jsonb,
  checked_at timestamptz,
  sig text,
  key_id text,
  full_requested_at timestamptz,
  full_started_at timestamptz,
  full_finished_at timestamptz,
  full_processed bigint not null default 0,
  full_total bigint not null default 0,
  full_error text
);
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table audit_verification; drop index audit_event_tenant_seq;');
  }
}
