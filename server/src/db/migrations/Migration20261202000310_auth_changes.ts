import { Migration } from '@mikro-orm/migrations';

// Revocation reaches every instance's viewer cache (auth/viewer-cache.ts): a change to a user,
// or the deletion or change of one of their API tokens or sessions, notifies taskbay_auth with
// the user's id, delivered when (and only if) the changing transaction commits. Whoever makes
// the change (Taskbay, an operator's SQL) notifies alike. New tokens and sessions need nothing.
export class Migration20261202000310_auth_changes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function notify_auth_change() returns trigger language plpgsql as $$
declare
  old_user uuid;
  new_user uuid;
begin
  -- PL/pgSQL compiles a trigger function per table, so each branch names only its table's columns.
  if tg_table_name = 'app_user' then
    old_user := old.id;
    if tg_op = 'UPDATE' then new_user := new.id; end if;
  else
    old_user := old.user_id;
    if tg_op = 'UPDATE' then new_user := new.user_id; end if;
  end if;
  perform pg_notify('taskbay_auth', old_user::text);
  if new_user is distinct from old_user and new_user is not null then perform pg_notify('taskbay_auth', new_user::text); end if;
  return null;
end $$;
create trigger api_token_auth_change after update or delete on api_token for each row execute function notify_auth_change();
create trigger web_session_auth_change after update or delete on web_session for each row execute function notify_auth_change();
create trigger app_user_auth_change after update or delete on app_user for each row execute function notify_auth_change();
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop trigger app_user_auth_change on app_user;
drop trigger web_session_auth_change on web_session;
drop trigger api_token_auth_change on api_token;
drop function notify_auth_change();
`);
  }
}
