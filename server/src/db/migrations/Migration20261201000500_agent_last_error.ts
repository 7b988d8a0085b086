import { Migration } from '@mikro-orm/migrations';

// The last failed exchange with an agent, for admins: the classification callers saw and the
// upstream detail they did not (status, the start of the body, the low-level error), truncated.
export class Migration20261201000500_agent_last_error extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table agent add column last_error jsonb;
alter table agent add column last_error_at timestamptz;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
alter table agent drop column last_error_at;
alter table agent drop column last_error;
`);
  }
}
