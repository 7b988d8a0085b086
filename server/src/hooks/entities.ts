import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Tenant, User } from '../auth/entities.js';
import { CommandApproval } from '../commands/entities.js';
import { manyToOneId, sharedPrimaryKey } from '../db/relations.js';
import { HOOK_HOSTS } from './contracts.js';
import type { CommandRule } from './rules.js';

// Coding-agent hooks (hooks/, docs/COMMAND-APPROVALS.md): a tenant's command rules, and which
// held tool call consumed which command grant, so the host's PostToolUse can close the audit
// cycle (seed 002, "Event chain").

/** A tenant's command rules: one row, replaced whole; version counts the saves (0: never saved). */
export const CommandRuleSet = defineEntity({
  name: 'CommandRuleSet',
  tableName: 'command_rule_set',
  properties: {
    tenantId: sharedPrimaryKey(Tenant, 'tenant_id'),
    rules: p.json<CommandRule[]>(),
    version: p.integer(),
    updatedById: manyToOneId(User, 'updated_by_id').nullable(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  checks: [{ property: 'rules', expression: `jsonb_typeof(rules) = 'array'` }],
});

/**
 * A tool call a hook allowed after consuming a command grant: the host's session and tool_use_id
 * (a PermissionRequest has none) and the command approval whose grant it consumed. PostToolUse
 * reports EXECUTED for it once (reportedAt); a PermissionRequest right after the PreToolUse that
 * allowed the same command is that call's prompt and is answered once (promptUsedAt).
 */
export const HookCall = defineEntity({
  name: 'HookCall',
  tableName: 'hook_call',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    /** The person whose API token the hook used. */
    userId: manyToOneId(User, 'user_id'),
    host: p.enum([...HOOK_HOSTS]),
    sessionId: p.text(),
    toolUseId: p.text().nullable(),
    event: p.enum(['PreToolUse', 'PermissionRequest']),
    command: p.text(),
    commandApprovalId: manyToOneId(CommandApproval, 'command_approval_id'),
    promptUsedAt: p.datetime().nullable(),
    reportedAt: p.datetime().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  indexes: [{ name: 'hook_call_session', properties: ['tenantId', 'host', 'sessionId', 'createdAt'] }],
});

export type CommandRuleSetRow = InferEntity<typeof CommandRuleSet>;
export type HookCallRow = InferEntity<typeof HookCall>;

export const HOOK_ENTITIES = [CommandRuleSet, HookCall];
