import { Migration } from '@mikro-orm/migrations';

// An email belongs to one person across all tenants (else another tenant's admin creating a
// person with your email would refuse you sign-in for good). Sign-in finds the person by email alone,
// so the email must name one row.
//
// Databases that already hold one email in several rows (case-insensitively) keep every row: the
// earliest (created_at, then id) keeps the email for sign-in; each later one is marked
// duplicate_email, signs in with no password (answered as a wrong password) and is left out of the
// unique index. Its API tokens, grants and history are untouched. The earliest is kept because
// the lock-out as found is a later row made to collide with an existing person. An operator who
// wants the other row to sign in swaps the two marks in one transaction (docs/choices.md,
// "Issue 22: tenants and the person lifecycle"); the server logs how many are marked at start.
export class Migration20261204002000_email_one_tenant extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table app_user add column duplicate_email boolean not null default false;
update app_user u set duplicate_email = true
  where exists (select 1 from app_user e where lower(e.email) = lower(u.email) and (e.created_at, e.id) < (u.created_at, u.id));
create unique index app_user_email_one_tenant on app_user (lower(email)) where not duplicate_email;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop index app_user_email_one_tenant;
alter table app_user drop column duplicate_email;
`);
  }
}
