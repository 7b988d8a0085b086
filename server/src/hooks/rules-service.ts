import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream } from '../audit/module.js';
import { requireAdmin, type Access } from '../access.js';
import { sql } from '../db/sql.js';
import { unstorableReason } from '../db/storable.js';
import { badInput } from '../errors.js';
import { CommandRuleSet } from './entities.js';
import { checkedCommandRules, loadRules, type CommandRule, type LoadedRule } from './rules.js';

// Reading and replacing a tenant's command rules (admins; GraphQL commandRules and
// setCommandRules). The list is checked whole before anything is written (hooks/rules.ts: every
// condition compiles, within the cost bounds, alone and together); a save replaces it, counts a
// version and is an audit event in the tenant's stream carrying the rules it wrote.

export interface CommandRulesView {
  rules: CommandRule[];
  /** 0: never saved (no rules: every shell command waits for a person). */
  version: number;
  updatedAt: Date | null;
  updatedById: string | null;
}

const NEVER_SAVED: CommandRulesView = { rules: [], version: 0, updatedAt: null, updatedById: null };

async function read(em: EntityManager, tenantId: string): Promise<CommandRulesView> {
  const row = await em.findOne(CommandRuleSet, { tenantId }, { refresh: true });
  if (!row) return NEVER_SAVED;
  return { rules: row.rules, version: row.version, updatedAt: row.updatedAt, updatedById: row.updatedById ?? null };
}

export async function getCommandRules(em: EntityManager, access: Access): Promise<CommandRulesView> {
  requireAdmin(access, 'manages command rules');
  return read(em, access.viewer.tenantId);
}

export async function setCommandRules(em: EntityManager, access: Access, input: unknown): Promise<CommandRulesView> {
  requireAdmin(access, 'manages command rules');
  const rules = checkedCommandRules(input);
  const unstorable = unstorableReason(rules);
  if (unstorable) throw badInput(`the rules cannot be stored: ${unstorable}`, { field: 'rules' });
  const tenantId = access.viewer.tenantId;
  return em.transactional(async (tem) => {
    const [row] = await sql<{ version: number; updated_at: Date }>(
      tem,
      `insert into command_rule_set (tenant_id, rules, version, updated_by_id, updated_at) values (?, ?::jsonb, 1, ?, now())
       on conflict (tenant_id) do update set rules = excluded.rules, version = command_rule_set.version + 1,
         updated_by_id = excluded.updated_by_id, updated_at = excluded.updated_at
       returning version, updated_at`,
      [tenantId, JSON.stringify(rules), access.viewer.userId],
    );
    await appendEvents(tem, [
      {
        tenantId,
        stream: stream.tenant(tenantId),
        type: 'command_rules.set',
        actor: { type: 'user', id: access.viewer.userId },
        data: { version: row!.version, rules },
      },
    ]);
    return { rules, version: row!.version, updatedAt: new Date(row!.updated_at), updatedById: access.viewer.userId };
  });
}

/** The tenant's rules, compiled, for one tool call (a stored condition that no longer compiles fails closed there). */
export async function tenantCommandRules(em: EntityManager, tenantId: string): Promise<LoadedRule[]> {
  return loadRules((await read(em, tenantId)).rules);
}
