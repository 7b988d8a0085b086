import { Migration } from '@mikro-orm/migrations';

// One-time sign-in links (auth/sign-in-links.ts): the way in of a person without a password (the
// admin of TASKBAY_ADMIN_TOKEN, someone an admin added without one) and a password reset. Only
// the SHA-256 of the link's secret is kept (id), as for sessions; a link is deleted when used.
// created_by_id is the admin who made it; null: made at start-up for the admin of
// TASKBAY_ADMIN_EMAIL.
export class Migration20261207002600_sign_in_links extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table sign_in_link (
  id text primary key,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  created_by_id uuid references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sign_in_link_user_id_index on sign_in_link (user_id);
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table sign_in_link;');
  }
}
