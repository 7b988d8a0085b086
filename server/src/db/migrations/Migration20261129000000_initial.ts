import { Migration } from '@mikro-orm/migrations';

// The initial schema. Written by hand as SQL because the rules that must hold (a request leaves
// PENDING once, the audit log is append-only) live in constraints and triggers, which the
// schema generator does not express. Foreign keys are checked at commit (deferred), so one
// transaction may write a request and the row that supersedes it in either order.
export class Migration20261129000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table tenant (
  id uuid primary key,
  name text not null unique,
  created_at timestamptz not null default now()
);

create table app_user (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  email text not null,
  name text not null,
  role text not null check (role in ('ADMIN', 'MEMBER')),
  password_hash text,
  created_at timestamptz not null default now(),
  unique (tenant_id, email)
);

create table api_token (
  id uuid primary key,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  label text not null,
  token_hash text not null unique,
  created_at timestamptz not null default now()
);

create table agent (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  card_url text not null,
  name text not null,
  created_at timestamptz not null default now(),
  unique (tenant_id, card_url)
);

-- Immutable: every fetch of the card adds one; negotiation reads the latest.
create table card_snapshot (
  id uuid primary key,
  agent_id uuid not null references agent(id) deferrable initially deferred,
  number int not null,
  card jsonb not null,
  fetched_at timestamptz not null default now(),
  unique (agent_id, number)
);

create table agent_grant (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  agent_id uuid not null references agent(id) deferrable initially deferred,
  skill_id text,
  permission text not null check (permission in ('VIEW', 'OPERATE')),
  created_at timestamptz not null default now()
);
create unique index agent_grant_scope on agent_grant (user_id, agent_id, coalesce(skill_id, ''));

create table task (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  agent_id uuid not null references agent(id) deferrable initially deferred,
  skill_id text,
  remote_task_id text,
  context_id text,
  state text not null,
  created_by_id uuid references app_user(id) deferrable initially deferred,
  last_step_seq int not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (agent_id, remote_task_id)
);
create index task_tenant_created on task (tenant_id, created_at desc);

create table task_status (
  id uuid primary key,
  task_id uuid not null references task(id) deferrable initially deferred,
  state text not null,
  message_id text,
  at timestamptz not null default now()
);
create index task_status_task on task_status (task_id, at);

create table task_message (
  id uuid primary key,
  task_id uuid not null references task(id) deferrable initially deferred,
  step_seq int not null check (step_seq >= 1),
  message_id text not null,
  role text not null,
  parts jsonb not null,
  metadata jsonb,
  created_at timestamptz not null default now(),
  unique (task_id, message_id),
  unique (task_id, step_seq)
);

create table approval (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  key text unique,
  source text not null check (source in ('AGENT', 'USER', 'COMMAND')),
  status text not null check (status in ('PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED')),
  title text not null,
  summary text,
  risk text not null check (risk in ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL')),
  requester_id uuid references app_user(id) deferrable initially deferred,
  assignee_id uuid references app_user(id) deferrable initially deferred,
  agent_id uuid references agent(id) deferrable initially deferred,
  task_id uuid references task(id) deferrable initially deferred,
  skill_id text,
  source_message_id text,
  step_seq int,
  revision int not null check (revision >= 1),
  digest text not null,
  action jsonb not null,
  superseded_by_id uuid references approval(id) deferrable initially deferred,
  expires_at timestamptz,
  closed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index approval_tenant_status on approval (tenant_id, status, created_at desc);
-- One live approval per task.
create unique index approval_one_pending_per_task on approval (task_id) where status = 'PENDING';

-- A request leaves PENDING once, and a closed request's content never changes.
create function approval_final() returns trigger language plpgsql as $$
begin
  if old.status <> 'PENDING' and (new.status, new.revision, new.digest, new.action, new.assignee_id)
       is distinct from (old.status, old.revision, old.digest, old.action, old.assignee_id) then
    raise exception 'approval % is % and final', old.id, old.status using errcode = 'P0001';
  end if;
  return new;
end $$;
create trigger approval_final before update on approval for each row execute function approval_final();

create table approval_revision (
  id uuid primary key,
  approval_id uuid not null references approval(id) deferrable initially deferred,
  number int not null check (number >= 1),
  action jsonb not null,
  digest text not null,
  created_by_type text not null check (created_by_type in ('agent', 'user', 'service')),
  created_by_id text,
  created_at timestamptz not null default now(),
  unique (approval_id, number)
);

create table decision (
  id uuid primary key,
  approval_id uuid not null references approval(id) deferrable initially deferred,
  outcome text not null check (outcome in ('APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE')),
  revision int not null,
  digest text not null,
  reviewer_id uuid not null references app_user(id) deferrable initially deferred,
  comment text,
  delegated_to_id uuid references app_user(id) deferrable initially deferred,
  decided_at timestamptz not null default now()
);
-- At most one final decision per request, whatever the code above does.
create unique index decision_one_final on decision (approval_id) where outcome <> 'DELEGATE';
create index decision_approval on decision (approval_id, decided_at);

create table delivery (
  id uuid primary key,
  approval_id uuid not null unique references approval(id) deferrable initially deferred,
  decision_id uuid not null unique references decision(id) deferrable initially deferred,
  status text not null check (status in ('QUEUED', 'DELIVERED', 'FAILED')),
  attempts int not null default 0,
  message_id text not null,
  last_error text,
  observed_task_state text,
  observed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The audit log: one append-only table, hash-chained per stream.
create table audit_event (
  seq bigserial primary key,
  id uuid not null unique,
  tenant_id uuid not null,
  stream text not null,
  type text not null,
  actor_type text not null check (actor_type in ('user', 'agent', 'service', 'system')),
  actor_id text,
  at timestamptz not null,
  data jsonb not null,
  prev_hash text,
  hash text not null unique
);
-- A stream never forks: one successor per head (and one first event per stream).
create unique index audit_event_chain on audit_event (stream, coalesce(prev_hash, ''));
create index audit_event_stream on audit_event (stream, seq);

create table audit_checkpoint (
  seq bigserial primary key,
  at timestamptz not null,
  heads jsonb not null,
  prev_hash text,
  hash text not null unique
);
create unique index audit_checkpoint_chain on audit_checkpoint (coalesce(prev_hash, ''));

create function audit_append_only() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only: % refused', tg_table_name, tg_op using errcode = 'P0001';
end $$;
create trigger audit_event_no_update before update or delete on audit_event
  for each row execute function audit_append_only();
create trigger audit_event_no_truncate before truncate on audit_event
  for each statement execute function audit_append_only();
create trigger audit_checkpoint_no_update before update or delete on audit_checkpoint
  for each row execute function audit_append_only();
create trigger audit_checkpoint_no_truncate before truncate on audit_checkpoint
  for each statement execute function audit_append_only();

create table web_session (
  id text primary key,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
`);
  }
}
