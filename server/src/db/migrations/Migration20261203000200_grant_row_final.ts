import { Migration } from '@mikro-orm/migrations';

// A command grant that has left PENDING (consumed, revoked or expired) is final as a whole row.
// The first approval_grant_final only froze its status, fingerprint and command approval, so
// consumed_at and closed_at of a consumed grant could still be rewritten, also by the app role,
// moving when the command ran (and the outcome reconciler's deadline, which is counted from it).
// What a grant is (its id, tenant, command approval, fingerprint, created_at) never changes;
// while PENDING it may still be consumed, revoked or expired (and its expiry moved).
export class Migration20261203000200_grant_row_final extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create or replace function approval_grant_final() returns trigger language plpgsql as $$
begin
  if (new.id, new.tenant_id, new.command_approval_id, new.fingerprint, new.created_at)
       is distinct from (old.id, old.tenant_id, old.command_approval_id, old.fingerprint, old.created_at) then
    raise exception 'grant % is immutable', old.id using errcode = 'P0001';
  end if;
  if old.status <> 'PENDING' and new is distinct from old then
    raise exception 'grant % is % and final', old.id, old.status using errcode = 'P0001';
  end if;
  return new;
end $$;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
create or replace function approval_grant_final() returns trigger language plpgsql as $$
begin
  if old.status <> 'PENDING' and new.status is distinct from old.status then
    raise exception 'grant % is % and final', old.id, old.status using errcode = 'P0001';
  end if;
  if (new.fingerprint, new.command_approval_id) is distinct from (old.fingerprint, old.command_approval_id) then
    raise exception 'grant % is immutable', old.id using errcode = 'P0001';
  end if;
  return new;
end $$;
`);
  }
}
