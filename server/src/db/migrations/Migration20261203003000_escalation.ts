import { Migration } from '@mikro-orm/migrations';

// Escalation (escalation/sweeper.ts, docs/ESCALATION.md). A request whose frozen policy
// (approval.policy) has an escalation rule is due to escalate afterSeconds after it opened,
// unless that is at or after its deadline. The database derives that due time from the policy
// (escalate_at, whoever writes the policy), tells every instance's sweeper of it on commit
// (NOTIFY taskbay_escalation, the due time in epoch ms), and lets a request escalate once, while
// PENDING: escalated_at is set once and never changes, and a closed request's group assignment
// is as final as its person assignee (approval_final).
export class Migration20261203003000_escalation extends Migration {
  override async up(): Promise<void> {
    // Pending deferred checks of earlier migrations in this transaction would refuse an ALTER of approval (55006).
    this.addSql(`set constraints all immediate;
alter table approval
  add column assignee_group_id uuid references reviewer_group(id) deferrable initially deferred,
  add column escalate_at timestamptz,
  add column escalated_at timestamptz;

create index approval_pending_escalation on approval (escalate_at) where status = 'PENDING' and escalated_at is null and escalate_at is not null;
create index approval_assignee_group on approval (assignee_group_id, created_at desc, id desc) where assignee_group_id is not null;

create function approval_escalation_due() returns trigger language plpgsql as $$
begin
  if new.escalated_at is null and new.status = 'PENDING' then
    new.escalate_at := null;
    if jsonb_typeof(new.policy #> '{escalation,afterSeconds}') = 'number' then
      new.escalate_at := new.created_at + make_interval(secs => (new.policy #>> '{escalation,afterSeconds}')::double precision);
      -- At or after the deadline the request expires instead: it never escalates.
      if new.expires_at is not null and new.escalate_at >= new.expires_at then
        new.escalate_at := null;
      end if;
    end if;
    if new.escalate_at is not null then
      perform pg_notify('taskbay_escalation', (extract(epoch from new.escalate_at) * 1000)::bigint::text);
    end if;
  end if;
  return new;
end $$;
create trigger approval_escalation_due before insert or update of policy, created_at, expires_at on approval
  for each row execute function approval_escalation_due();

create function approval_escalated_once() returns trigger language plpgsql as $$
begin
  if old.escalated_at is not null and new.escalated_at is distinct from old.escalated_at then
    raise exception 'approval % escalated already', old.id using errcode = 'P0001';
  end if;
  if old.escalated_at is null and new.escalated_at is not null and (old.status <> 'PENDING' or new.status <> 'PENDING') then
    raise exception 'approval % is % and cannot escalate', old.id, old.status using errcode = 'P0001';
  end if;
  if old.status <> 'PENDING' and new.assignee_group_id is distinct from old.assignee_group_id then
    raise exception 'approval % is % and final', old.id, old.status using errcode = 'P0001';
  end if;
  return new;
end $$;
create trigger approval_escalated_once before update on approval for each row execute function approval_escalated_once();
`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger approval_escalated_once on approval;
drop function approval_escalated_once();
drop trigger approval_escalation_due on approval;
drop function approval_escalation_due();
drop index approval_assignee_group;
drop index approval_pending_escalation;
alter table approval drop column escalated_at, drop column escalate_at, drop column assignee_group_id;`);
  }
}
