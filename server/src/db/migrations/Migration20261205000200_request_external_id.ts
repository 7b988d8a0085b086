import { Migration } from '@mikro-orm/migrations';

// Two fields a request is opened with (createApproval and the command-approvals REST body), both
// fixed for the life of the request (the approval_final trigger does not need them: no code path
// writes either after the insert):
// - external_id: the integration's own call or thread id (limits.ts EXTERNAL_ID_LIMITS), not
//   unique (a thread can ask several times), outside the digest, signed with the approval. Indexed
//   per tenant for `approvals(externalId:)`, newest first as the list orders.
// - editable: false when the requester offers no edit-then-approve (edit-rules.ts editOffered).
//   Every request before this migration was editable (command approvals never were: the rule of
//   commands/decision.ts stays, and their rows say so too).
export class Migration20261205000200_request_external_id extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table approval add column external_id text;
alter table approval add column editable boolean not null default true;
update approval set editable = false where source = 'COMMAND';
create index approval_tenant_external_id on approval (tenant_id, external_id, created_at desc, id desc) where external_id is not null;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop index approval_tenant_external_id;
alter table approval drop column editable;
alter table approval drop column external_id;
`);
  }
}
