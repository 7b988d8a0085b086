import { Migration } from '@mikro-orm/migrations';

// Command approvals for coding-agent hooks (seed 002). The request itself is an `approval` row
// (source COMMAND) so it shows in the one inbox and is decided by the one decision path; these
// tables add what seed 002 keeps beside it: the sealed payload and its fingerprint, the seed's
// lowercase approval status, and the single-use grant with its UPPERCASE status. Events go into
// the one audit_event hash chain; the CHECK below admits exactly the seed's nine upper-case
// event types there (the existing dotted lower-case types are untouched).
export class Migration20261130000000_command_approvals extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table command_approval (
  id uuid primary key references approval(id) deferrable initially deferred,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  approval_id text not null check (approval_id ~ '^P-[0-9a-f]{32}$'),
  kind text not null check (kind in ('COMMAND', 'COMMAND_SET')),
  agent_id text not null check (agent_id ~ '^a[0-9a-f]{5,}$' and length(agent_id) <= 160),
  commands jsonb not null check (jsonb_typeof(commands) = 'array' and jsonb_array_length(commands) >= 1),
  payload jsonb not null,
  fingerprint text not null check (fingerprint ~ '^[0-9a-f]{64}$'),
  status text not null check (status in ('pending', 'approved', 'rejected', 'revoked', 'expired')),
  requested_by_id uuid not null references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((kind = 'COMMAND') = (jsonb_array_length(commands) = 1)),
  unique (tenant_id, approval_id)
);

-- Single-use: at most one grant per command approval, and it leaves PENDING once.
create table approval_grant (
  id uuid primary key,
  command_approval_id uuid not null unique references command_approval(id) deferrable initially deferred,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  status text not null check (status in ('PENDING', 'CONSUMED', 'REVOKED', 'EXPIRED')),
  fingerprint text not null check (fingerprint ~ '^[0-9a-f]{64}$'),
  expires_at timestamptz not null,
  consumed_at timestamptz,
  closed_at timestamptz,
  created_at timestamptz not null default now()
);

create function approval_grant_final() returns trigger language plpgsql as $$
begin
  if old.status <> 'PENDING' and new.status is distinct from old.status then
    raise exception 'grant % is % and final', old.id, old.status using errcode = 'P0001';
  end if;
  if (new.fingerprint, new.command_approval_id) is distinct from (old.fingerprint, old.command_approval_id) then
    raise exception 'grant % is immutable', old.id using errcode = 'P0001';
  end if;
  return new;
end $$;
create trigger approval_grant_final before update on approval_grant for each row execute function approval_grant_final();
create trigger approval_grant_no_delete before delete on approval_grant for each row execute function audit_append_only();

-- The sealed payload never changes once stored (the fingerprint check at activation is the
-- second line; this trigger is the first).
create function command_approval_sealed() returns trigger language plpgsql as $$
begin
  if (new.approval_id, new.kind, new.agent_id, new.commands, new.payload, new.fingerprint, new.requested_by_id)
       is distinct from (old.approval_id, old.kind, old.agent_id, old.commands, old.payload, old.fingerprint, old.requested_by_id) then
    raise exception 'command approval % is sealed', old.approval_id using errcode = 'P0001';
  end if;
  if old.status <> 'pending' and new.status is distinct from old.status
     and not (old.status = 'approved' and new.status = 'revoked') then
    raise exception 'command approval % is % and final', old.approval_id, old.status using errcode = 'P0001';
  end if;
  return new;
end $$;
create trigger command_approval_sealed before update on command_approval for each row execute function command_approval_sealed();

-- A request that expires (approval row PENDING -> EXPIRED, by the expiry job) is expired here too.
create function command_approval_follow_expiry() returns trigger language plpgsql as $$
begin
  if new.status = 'EXPIRED' and old.status = 'PENDING' then
    update command_approval set status = 'expired', updated_at = now() where id = new.id and status = 'pending';
  end if;
  return new;
end $$;
create trigger command_approval_follow_expiry after update of status on approval
  for each row execute function command_approval_follow_expiry();

-- Seed 002 "The approval_events.event_type CHECK admits nine values": any upper-case event type
-- in the one audit log must be one of them.
alter table audit_event add constraint audit_event_command_types check (
  type !~ '^[A-Z_]+$' or type in ('REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'NOOP', 'REVOKED', 'REVERTED')
);
-- One REQUESTED per stream (per approval).
create unique index audit_event_one_requested on audit_event (stream) where type = 'REQUESTED';
`);
  }
}
