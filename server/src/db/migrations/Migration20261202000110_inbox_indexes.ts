import { Migration } from '@mikro-orm/migrations';

// The orders the console's lists read approvals in (graphql/pagination.ts: created_at desc, id
// desc), under each filter the inbox and the task page offer, so a page is read from an index in
// order and stops after first + 1 rows instead of sorting the tenant's approvals: unfiltered,
// by status, by agent, assigned to the viewer, by task. approval_tenant_status gains the id
// tie-breaker. superseded_by_id: the approval page asks which request this one superseded.
export class Migration20261202000110_inbox_indexes extends Migration {
  override async up(): Promise<void> {
    // Pending migrations run in one transaction: Migration20261201000600_approver_scope's updates
    // of approval leave deferred foreign-key checks pending, and Postgres refuses to drop or
    // create an index on a table with pending trigger events (55006). They run now instead.
    this.addSql(`set constraints all immediate;
drop index approval_tenant_status;
create index approval_tenant_status on approval (tenant_id, status, created_at desc, id desc);
create index approval_tenant_created on approval (tenant_id, created_at desc, id desc);
create index approval_tenant_agent on approval (tenant_id, agent_id, created_at desc, id desc);
create index approval_assignee on approval (assignee_id, created_at desc, id desc) where assignee_id is not null;
create index approval_task on approval (task_id, created_at desc, id desc) where task_id is not null;
create index approval_superseded_by on approval (superseded_by_id) where superseded_by_id is not null;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop index approval_superseded_by;
drop index approval_task;
drop index approval_assignee;
drop index approval_tenant_agent;
drop index approval_tenant_created;
drop index approval_tenant_status;
create index approval_tenant_status on approval (tenant_id, status, created_at desc);
`);
  }
}
