import { Migration } from '@mikro-orm/migrations';

// Every approval has an approver scope. Agents get a kind: `A2A` (registered from an Agent Card)
// or `COMMAND_HOOK`, the agent record of one person's coding-agent hook (one per tenant and
// hook token owner, no card). Command approvals belong to their hook's agent, so VIEW/OPERATE
// grants on it decide who sees and decides them, like any agent's requests. Existing command
// approvals (agent_id null) are moved to the hook agent of their requester here.
export class Migration20261201000600_approver_scope extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table agent add column kind text not null default 'A2A' check (kind in ('A2A', 'COMMAND_HOOK'));
alter table agent add column hook_user_id uuid references app_user(id) deferrable initially deferred;
alter table agent alter column card_url drop not null;
-- An A2A agent has a card URL and no hook owner; a hook agent the other way round.
alter table agent add constraint agent_kind_shape check (
  (kind = 'A2A' and card_url is not null and hook_user_id is null)
  or (kind = 'COMMAND_HOOK' and card_url is null and hook_user_id is not null)
);
create unique index agent_one_hook_per_user on agent (tenant_id, hook_user_id) where kind = 'COMMAND_HOOK';

-- A hook agent has no card: the database refuses a snapshot of it.
create function card_snapshot_needs_a2a() returns trigger language plpgsql as $$
begin
  if exists (select 1 from agent where id = new.agent_id and kind <> 'A2A') then
    raise exception 'agent % has no Agent Card (it is a command hook)', new.agent_id using errcode = 'P0001';
  end if;
  return new;
end $$;
create trigger card_snapshot_needs_a2a before insert on card_snapshot
  for each row execute function card_snapshot_needs_a2a();

insert into agent (id, tenant_id, kind, card_url, hook_user_id, name, created_at)
select gen_random_uuid(), c.tenant_id, 'COMMAND_HOOK', null, c.requested_by_id, 'Command hook of ' || u.email, min(c.created_at)
  from command_approval c join app_user u on u.id = c.requested_by_id
 group by c.tenant_id, c.requested_by_id, u.email;

update approval a set agent_id = h.id
  from command_approval c
  join agent h on h.kind = 'COMMAND_HOOK' and h.tenant_id = c.tenant_id and h.hook_user_id = c.requested_by_id
 where a.id = c.id and a.agent_id is null;
`);
  }
}
