import { Migration } from '@mikro-orm/migrations';

// What a task keeps of what its agent sends is bounded (limits.ts TASK_LIMITS): each message
// records its size, the task what it holds and why Taskbay stopped following it. Rows stored
// before are measured here as Postgres prints their JSON (a few bytes more than the server's
// measure); a task already over a limit stops being followed at its next observation.
export class Migration20261204005000_task_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table task_message add column bytes int not null default 0;
update task_message set bytes = least(2147483647,
  octet_length(parts::text)::bigint + coalesce(octet_length(metadata::text), 4) + coalesce(octet_length(form::text), 4) + coalesce(octet_length(a2ui::text), 4));
alter table task_message alter column bytes drop default;
alter table task add column stored_bytes int not null default 0;
alter table task add column status_changes int not null default 0;
alter table task add column limit_reason text null;
update task set
  stored_bytes = least(2147483647, coalesce((select sum(m.bytes) from task_message m where m.task_id = task.id), 0)),
  status_changes = (select count(*) from task_status s where s.task_id = task.id)
where exists (select 1 from task_message m where m.task_id = task.id) or exists (select 1 from task_status s where s.task_id = task.id);
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
alter table task drop column limit_reason;
alter table task drop column status_changes;
alter table task drop column stored_bytes;
alter table task_message drop column bytes;
`);
  }
}
