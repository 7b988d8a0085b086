import { Migration } from '@mikro-orm/migrations';

// Coding-agent hooks (hooks/, docs/COMMAND-APPROVALS.md). A tenant's command rules:
// one row per tenant, its ordered list of {condition (CEL), outcome, reason} replaced whole by
// setCommandRules (version counts the saves; every save is an audit event). And the tool calls a
// hook allowed after consuming a command grant, keyed by the host's session and tool_use_id, so
// the host's PostToolUse reports EXECUTED for the grant that call consumed (seed 002, "Event chain").
export class Migration20261205001000_command_rules extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table command_rule_set (
  tenant_id uuid primary key references tenant(id) deferrable initially deferred,
  rules jsonb not null check (jsonb_typeof(rules) = 'array'),
  version int not null,
  updated_by_id uuid references app_user(id) deferrable initially deferred,
  updated_at timestamptz not null default now()
);

create table hook_call (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  user_id uuid not null references app_user(id) deferrable initially deferred,
  host text not null check (host in ('claude-code', 'codex')),
  session_id text not null,
  tool_use_id text,
  event text not null check (event in ('PreToolUse', 'PermissionRequest')),
  command text not null,
  command_approval_id uuid not null references command_approval(id) deferrable initially deferred,
  prompt_used_at timestamptz,
  reported_at timestamptz,
  created_at timestamptz not null default now()
);
create index hook_call_session on hook_call (tenant_id, host, session_id, created_at);
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop table hook_call;
drop table command_rule_set;
`);
  }
}
