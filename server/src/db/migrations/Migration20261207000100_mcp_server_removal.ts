import { Migration } from '@mikro-orm/migrations';

// The MCP gateway in the console: an admin removes an MCP server (removeMcpServer) and its row
// stays, marked removed_at, so the requests its calls held still name it; a new server may take
// the name of a removed one, so the name is unique among the servers not removed. The console
// lists a server's recent held calls, newest first, by the index on (upstream_id, created_at).
export class Migration20261207000100_mcp_server_removal extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table mcp_upstream add column removed_at timestamptz;
alter table mcp_upstream drop constraint mcp_upstream_tenant_name;
create unique index mcp_upstream_tenant_name on mcp_upstream (tenant_id, name) where removed_at is null;
create index mcp_held_call_upstream_recent on mcp_held_call (upstream_id, created_at desc);
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop index mcp_held_call_upstream_recent;
drop index mcp_upstream_tenant_name;
delete from mcp_upstream where removed_at is not null;
alter table mcp_upstream add constraint mcp_upstream_tenant_name unique (tenant_id, name);
alter table mcp_upstream drop column removed_at;
`);
  }
}
