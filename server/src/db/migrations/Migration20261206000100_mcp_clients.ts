import { Migration } from '@mikro-orm/migrations';

// Taskbay's MCP server (server/src/mcp/, docs/MCP.md): an MCP host asking through /mcp is an agent
// of kind MCP_CLIENT (no card, no endpoint, no hook user), one per API token and client name,
// kept in mcp_client. The gateway: the MCP servers an admin put behind approval (mcp_upstream,
// with their call rules) and the tool calls they held (mcp_held_call, forwarded at most once).
export class Migration20261206000100_mcp_clients extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table agent drop constraint agent_kind_check;
alter table agent add constraint agent_kind_check check (kind in ('A2A', 'COMMAND_HOOK', 'AG_UI', 'MCP_CLIENT'));
alter table agent drop constraint agent_kind_shape;
alter table agent add constraint agent_kind_shape check (
  (kind = 'A2A' and card_url is not null and hook_user_id is null and endpoint_url is null)
  or (kind = 'COMMAND_HOOK' and card_url is null and hook_user_id is not null and endpoint_url is null)
  or (kind = 'AG_UI' and endpoint_url is not null and card_url is null and hook_user_id is null)
  or (kind = 'MCP_CLIENT' and card_url is null and hook_user_id is null and endpoint_url is null)
);

create table mcp_client (
  agent_id uuid primary key references agent(id) deferrable initially deferred,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  token_key text not null,
  client_name text not null,
  created_at timestamptz not null default now(),
  constraint mcp_client_one_per_token_and_name unique (tenant_id, token_key, client_name)
);

create table mcp_upstream (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  name text not null,
  transport text not null check (transport in ('HTTP', 'STDIO')),
  url text,
  command text,
  args jsonb,
  rules jsonb not null check (jsonb_typeof(rules) = 'array'),
  hold_seconds integer,
  created_by_id uuid not null references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  constraint mcp_upstream_tenant_name unique (tenant_id, name),
  constraint mcp_upstream_transport_shape check ((transport = 'HTTP' and url is not null and command is null) or (transport = 'STDIO' and command is not null and url is null))
);

create table mcp_held_call (
  approval_id uuid primary key references approval(id) deferrable initially deferred,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  upstream_id uuid not null references mcp_upstream(id) deferrable initially deferred,
  tool text not null,
  forwarded_at timestamptz,
  result_digest text,
  result_is_error boolean,
  waiting_seen_at timestamptz,
  created_at timestamptz not null default now()
);
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop table mcp_held_call;
drop table mcp_upstream;
drop table mcp_client;
alter table agent drop constraint agent_kind_shape;
alter table agent add constraint agent_kind_shape check (
  (kind = 'A2A' and card_url is not null and hook_user_id is null and endpoint_url is null)
  or (kind = 'COMMAND_HOOK' and card_url is null and hook_user_id is not null and endpoint_url is null)
  or (kind = 'AG_UI' and endpoint_url is not null and card_url is null and hook_user_id is null)
);
alter table agent drop constraint agent_kind_check;
alter table agent add constraint agent_kind_check check (kind in ('A2A', 'COMMAND_HOOK', 'AG_UI'));
`);
  }
}
