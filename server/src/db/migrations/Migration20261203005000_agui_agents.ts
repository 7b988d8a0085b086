import { Migration } from '@mikro-orm/migrations';

// AG-UI agents (docs/AG-UI.md): an agent of kind AG_UI is registered by its endpoint URL (no
// card); its runs are kept per task (agui_run) with the interrupts each run ended with
// (agui_interrupt, one approval each). A run may end with several interrupts, each an approval of
// its own on the same task: the "one live request per task" index now covers every request but
// those opened for an AG-UI interrupt (key prefix 'agui:'), whose live set is the run's.
export class Migration20261203005000_agui_agents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table agent drop constraint agent_kind_check;
alter table agent add constraint agent_kind_check check (kind in ('A2A', 'COMMAND_HOOK', 'AG_UI'));
alter table agent add column endpoint_url text;
alter table agent drop constraint agent_kind_shape;
alter table agent add constraint agent_kind_shape check (
  (kind = 'A2A' and card_url is not null and hook_user_id is null and endpoint_url is null)
  or (kind = 'COMMAND_HOOK' and card_url is null and hook_user_id is not null and endpoint_url is null)
  or (kind = 'AG_UI' and endpoint_url is not null and card_url is null and hook_user_id is null)
);
alter table agent add constraint agent_tenant_id_endpoint_url_key unique (tenant_id, endpoint_url);

drop index approval_one_pending_per_task;
create unique index approval_one_pending_per_task on approval (task_id) where status = 'PENDING' and (key is null or key not like 'agui:%');

create table agui_run (
  id uuid primary key,
  task_id uuid not null references task(id) deferrable initially deferred,
  run_id text not null,
  thread_id text not null,
  resumes_id uuid references agui_run(id) deferrable initially deferred,
  status text not null check (status in ('RUNNING', 'SUCCESS', 'INTERRUPTED', 'ERROR', 'CANCELLED')),
  error text,
  events integer not null default 0,
  messages jsonb not null,
  state jsonb,
  result jsonb,
  resume_status text check (resume_status in ('QUEUED', 'DELIVERED', 'FAILED')),
  resume_run_id text,
  resume_attempts integer not null default 0,
  resume_error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  unique (task_id, run_id)
);
create index agui_run_task on agui_run (task_id, created_at);

create table agui_interrupt (
  id uuid primary key,
  run_row_id uuid not null references agui_run(id) deferrable initially deferred,
  interrupt_id text not null,
  approval_id uuid not null references approval(id) deferrable initially deferred,
  interrupt jsonb not null,
  unique (run_row_id, interrupt_id),
  unique (approval_id)
);
`);
  }
}
