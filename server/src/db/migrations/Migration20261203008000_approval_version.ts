import { Migration } from '@mikro-orm/migrations';

// approval.version: 1 when the request is opened, one more with every change of its row, made by
// the database (a trigger) so that no writer can forget it, the ORM's flushes and plain SQL alike.
// It is read with the row, in the same statement: a client holding two answers about a request
// keeps the one with the higher version (web/src/lib/approval-freshness.ts).
export class Migration20261203008000_approval_version extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table approval add column version int not null default 1;
create function approval_next_version() returns trigger language plpgsql as $$
begin
  new.version := old.version + 1;
  return new;
end $$;
create trigger approval_next_version before update on approval for each row execute function approval_next_version();
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop trigger approval_next_version on approval;
drop function approval_next_version();
alter table approval drop column version;
`);
  }
}
