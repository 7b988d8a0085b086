import { Migration } from '@mikro-orm/migrations';

// Failed verifications of a tenant's audit log, kept until an admin acknowledges them (audit/
// failures.ts). Append-only like the log: a failure found once stays found even if what showed
// it is removed later (a cut tail, a restarted verification). Each row is signed with the audit
// key; an acknowledgement is a signed audit event, not a change of the row.
export class Migration20261204000100_audit_failure extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table audit_failure (
  id uuid primary key,
  tenant_id uuid not null references tenant(id),
  found_at timestamptz not null,
  found_by text not null check (found_by in ('worker', 'request', 'checkpoint')),
  reason text not null,
  stream text,
  seq bigint,
  checkpoint_seq bigint,
  sig text not null,
  key_id text not null
);
create index audit_failure_tenant on audit_failure (tenant_id, found_at);
create trigger audit_failure_no_update before update or delete on audit_failure
  for each row execute function audit_append_only();
create trigger audit_failure_no_truncate before truncate on audit_failure
  for each statement execute function audit_append_only();
create index audit_event_acknowledgements on audit_event ((data->>'failureId')) where type = 'audit.failure_acknowledged';
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index audit_event_acknowledgements; drop table audit_failure;');
  }
}
