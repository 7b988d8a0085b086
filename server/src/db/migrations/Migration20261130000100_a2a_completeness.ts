import { Migration } from '@mikro-orm/migrations';

// A2A completeness (seed 003): per-task push token (only its SHA-256 is stored), and what an
// agent message offers the console, decided once when the message is observed: a valid
// structured form, an A2UI surface (only when the card advertised the extension).
export class Migration20261130000100_a2a_completeness extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table task add column push_token_hash text;
alter table task_message add column form jsonb;
alter table task_message add column a2ui jsonb;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
alter table task_message drop column a2ui;
alter table task_message drop column form;
alter table task drop column push_token_hash;
`);
  }
}
