import { Migration } from '@mikro-orm/migrations';

// The person's replies that must reach the agent once (seed 003: the console supplies
// "idempotent delivery of the answer"): one row per answered agent message (a form or an A2UI
// action) and per client idempotency key of a free-text reply. The row is written before the
// send, so a second submission finds it; it is removed again when the send fails, so a retry
// sends (with the same derived messageId).
export class Migration20261201000900_task_replies extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table task_reply (
  id uuid primary key,
  task_id uuid not null references task(id) on delete cascade deferrable initially deferred,
  reply_key text not null,
  message_id text not null,
  created_by_id uuid references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  unique (task_id, reply_key)
);
`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table task_reply;`);
  }
}
