import { Migration } from '@mikro-orm/migrations';

// A card snapshot records what an agent advertised when it was fetched; negotiation and the
// audit trail rely on it never changing. The database refuses UPDATE and DELETE, as it does for
// the audit log.
export class Migration20261130000200_card_snapshots_immutable extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function card_snapshot_immutable() returns trigger language plpgsql as $$
begin
  raise exception 'card_snapshot is immutable: % refused', tg_op using errcode = 'P0001';
end $$;
create trigger card_snapshot_no_change before update or delete on card_snapshot
  for each row execute function card_snapshot_immutable();
`);
  }
}
