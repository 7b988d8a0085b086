import { Migration } from '@mikro-orm/migrations';

// Every instance keeps each tenant's enabled webhook endpoints in memory (webhooks/endpoint-cache.ts),
// so an audit append does not look them up. A change to an endpoint (a new one, an edit, a
// disable, a delete), by Taskbay or by an operator's SQL, notifies taskbay_webhooks with the
// endpoint's tenant, delivered when (and only if) the changing transaction commits.
export class Migration20261203006001_webhook_endpoint_changes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function notify_webhook_endpoint_change() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then perform pg_notify('taskbay_webhooks', old.tenant_id::text); end if;
  if tg_op <> 'DELETE' and (tg_op = 'INSERT' or new.tenant_id is distinct from old.tenant_id) then
    perform pg_notify('taskbay_webhooks', new.tenant_id::text);
  end if;
  return null;
end $$;
create trigger webhook_endpoint_change after insert or update or delete on webhook_endpoint
  for each row execute function notify_webhook_endpoint_change();
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop trigger webhook_endpoint_change on webhook_endpoint;
drop function notify_webhook_endpoint_change();
`);
  }
}
