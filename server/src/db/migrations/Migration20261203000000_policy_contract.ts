import { Migration } from '@mikro-orm/migrations';

// Approval policies, first part (policies/snapshot.ts): every request carries the policy it
// opened under, frozen (requests opened before policies existed carry the built-in default),
// and admins group reviewers so a policy can name them.
export class Migration20261203000000_policy_contract extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table reviewer_group (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  name text not null,
  created_at timestamptz not null default now(),
  unique (tenant_id, name)
);

create table reviewer_group_member (
  id uuid primary key,
  group_id uuid not null references reviewer_group(id) deferrable initially deferred,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  added_at timestamptz not null default now(),
  unique (group_id, user_id)
);
create index reviewer_group_member_user on reviewer_group_member (user_id);

alter table approval add column policy jsonb not null default '{"policyId":null,"name":"default","version":0,"allowedOutcomes":["APPROVE","EDIT_AND_APPROVE","REJECT","REQUEST_CHANGES","DELEGATE"],"excludeTaskStarter":false,"quorum":{"approvals":1,"fromGroupIds":[],"rejectionRejects":true},"escalation":null}'::jsonb;
-- The default only fills the requests that exist; every new request is written with its policy.
alter table approval alter column policy drop default;
`);
  }
}
