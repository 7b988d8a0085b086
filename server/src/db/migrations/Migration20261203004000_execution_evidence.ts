import { Migration } from '@mikro-orm/migrations';

// Executed-as-approved evidence (docs/VERIFYING-APPROVALS.md "Reporting
// execution"): what a cooperating agent reports executing for an approved decision, one row per
// agent message (a replayed message records nothing twice), apart from the task state Taskbay
// observes. The row says whether the reported digest is the approved one, and the database holds
// it to that. Append-only like the audit log: a report is a fact, never edited.
export class Migration20261203004000_execution_evidence extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table execution_evidence (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  approval_id uuid not null references approval(id) deferrable initially deferred,
  decision_id uuid not null references decision(id) deferrable initially deferred,
  delivery_id uuid not null references delivery(id) deferrable initially deferred,
  task_id uuid not null references task(id) deferrable initially deferred,
  message_id text not null,
  reported_digest text not null check (reported_digest ~ '^[0-9a-f]{64}$'),
  approved_digest text not null,
  digest_matches boolean not null,
  outcome text not null check (outcome in ('SUCCEEDED', 'FAILED')),
  detail text check (char_length(detail) <= 2000),
  reported_at timestamptz not null default now(),
  unique (task_id, message_id),
  constraint execution_evidence_match check (digest_matches = (reported_digest = approved_digest))
);
create index execution_evidence_approval on execution_evidence (approval_id, reported_at);
create trigger execution_evidence_no_update before update or delete on execution_evidence
  for each row execute function audit_append_only();
create trigger execution_evidence_no_truncate before truncate on execution_evidence
  for each statement execute function audit_append_only();
`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table execution_evidence;`);
  }
}
