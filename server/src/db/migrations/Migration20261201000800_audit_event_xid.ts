import { Migration } from '@mikro-orm/migrations';

// The transaction that appended each audit event, so the LISTEN loop can tell exactly which
// events committed while its connection was down (events/listener.ts). Added without a default
// first, so existing rows stay null (no rewrite; the append-only triggers are row triggers and
// do not fire for ALTER TABLE), then defaulted for every new row. pg_current_xact_id() is the
// top-level transaction's id even inside a savepoint.
export class Migration20261201000800_audit_event_xid extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table audit_event add column xid xid8;
alter table audit_event alter column xid set default pg_current_xact_id();
create index audit_event_xid on audit_event (xid) where xid is not null;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop index audit_event_xid;
alter table audit_event drop column xid;
`);
  }
}
