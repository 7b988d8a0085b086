import { Migration } from '@mikro-orm/migrations';

// Approval policies (policies/, docs/POLICIES.md). A policy is a tenant's named, ordered,
// enabled-or-not rule; what it says lives in its versions, which never change: editing a policy
// adds a version and moves policy.current_version. Requests keep the snapshot they opened with
// (approval.policy), so deleting a policy (its versions go with it) changes no request.
// Any change to a policy row notifies taskbay_policies with the tenant's id when the transaction
// commits, so every instance drops its cached compiled policies (policies/cache.ts).
export class Migration20261203001000_policies extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table policy (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  name text not null,
  position int not null,
  enabled boolean not null default true,
  current_version int not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, name)
);
create index policy_tenant_position on policy (tenant_id, position);

create table policy_version (
  id uuid primary key,
  policy_id uuid not null references policy(id) on delete cascade deferrable initially deferred,
  version int not null,
  condition text not null,
  rules jsonb not null,
  created_by_id uuid references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  unique (policy_id, version)
);

create function policy_version_immutable() returns trigger language plpgsql as $$
begin
  raise exception 'policy versions are immutable: edit the policy to add a version';
end $$;
create trigger policy_version_immutable before update on policy_version for each row execute function policy_version_immutable();

create function notify_policy_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    perform pg_notify('taskbay_policies', old.tenant_id::text);
  else
    perform pg_notify('taskbay_policies', new.tenant_id::text);
  end if;
  return null;
end $$;
create trigger policy_change after insert or update or delete on policy for each row execute function notify_policy_change();
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop trigger policy_change on policy;
drop function notify_policy_change();
drop table policy_version;
drop function policy_version_immutable();
drop table policy;
`);
  }
}
