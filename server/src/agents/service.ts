import { randomUUID } from 'node:crypto';
import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { AgentCardError, fetchAgentCard } from '../a2a/card.js';
import { A2AError } from '../a2a/client.js';
import { AgUiError } from '../agui/protocol/client.js';
import { appendEvents, stream, type Actor } from '../audit/module.js';
import type { AgentCard } from '../a2a/types.js';
import type { Access } from '../access.js';
import { agentKindSpec } from './kinds.js';
import { badInput, notFound } from '../errors.js';
import { Agent, CardSnapshot, type AgentFailureRecord, type AgentRow, type CardSnapshotRow } from './entities.js';
import { violatedConstraint } from '../db/constraint.js';
import { sql } from '../db/sql.js';
import { storable } from '../db/storable.js';
import { log } from '../log.js';
import { outboundUrl } from '../net/outbound-url.js';

export type CardFetcher = (url: string) => Promise<AgentCard>;

/** What an admin may read of a failed exchange; null for errors that are not the agent's. */
export function agentFailureRecord(e: unknown): AgentFailureRecord | null {
  if (!(e instanceof A2AError) && !(e instanceof AgentCardError) && !(e instanceof AgUiError)) return null;
  return storable({ kind: e.kind, message: e.message, detail: e.detail ?? null });
}

/**
 * Keeps the failure on the agent for admins (Agent.lastError). Written on its own connection so
 * a rolled-back caller keeps it; a failure to write it never hides the original error.
 */
export async function recordAgentFailure(em: EntityManager, agentId: string, e: unknown): Promise<void> {
  const record = agentFailureRecord(e);
  if (!record) return;
  await em
    .fork()
    .nativeUpdate(Agent, { id: agentId }, { lastError: record, lastErrorAt: new Date() })
    .catch((err: unknown) => log.error(`[agents] could not record the last error of agent ${agentId}: ${(err as Error).message}`));
}

async function fetchCardOrBadInput(fetchCard: CardFetcher, url: string, onFailure?: (e: unknown) => Promise<void>): Promise<AgentCard> {
  try {
    return storable(await fetchCard(url));
  } catch (e) {
    await onFailure?.(e);
    if (e instanceof AgentCardError) throw badInput(e.message, { cardUrl: url, failure: e.kind });
    throw e;
  }
}

function normaliseCardUrl(raw: string): string {
  return outboundUrl(raw, 'cardUrl').toString();
}

/**
 * The answer to registering an agent that exists (the same card URL, or the same AG-UI endpoint):
 * BAD_USER_INPUT whose `extensions.agentId` is the existing agent's id as the API gives it (what
 * agent(id:) and startTask take), so a client that retried or lost a race goes on with that agent.
 */
export async function alreadyRegistered(em: EntityManager, existing: FilterQuery<AgentRow>, message: string) {
  // Its own connection: after a unique violation the caller's transaction is gone.
  const agent = await em.fork().findOne(Agent, existing, { fields: ['id'] });
  return agent ? badInput(message, { agentId: encodeGlobalID('Agent', agent.id) }) : badInput(message);
}

/** Fetches the card first: an unreachable or invalid card stores nothing. */
export async function registerAgent(em: EntityManager, tenantId: string, actor: Actor, rawUrl: string, fetchCard: CardFetcher = fetchAgentCard) {
  const cardUrl = normaliseCardUrl(rawUrl);
  const taken = () => alreadyRegistered(em, { tenantId, cardUrl }, `an agent with card ${cardUrl} is already registered`);
  if (await em.count(Agent, { tenantId, cardUrl })) throw await taken();
  const card = await fetchCardOrBadInput(fetchCard, cardUrl);
  // A concurrent registration of the same URL can pass the check above while the card is fetched;
  // the unique (tenant_id, card_url) index decides, and the loser gets the same answer.
  return em
    .transactional(async (tem) => {
      const agent = tem.create(Agent, { id: randomUUID(), tenantId, kind: 'A2A', cardUrl, endpointUrl: null, hookUserId: null, name: card.name });
      tem.create(CardSnapshot, { id: randomUUID(), agentId: agent.id, number: 1, card });
      await tem.flush();
      await appendEvents(tem, [
        {
          tenantId,
          stream: stream.tenant(tenantId),
          type: 'agent.registered',
          actor,
          data: { agentId: agent.id, cardUrl, snapshot: 1, name: card.name },
        },
      ]);
      return agent;
    })
    .catch(async (e) => {
      if (violatedConstraint(e) === 'agent_tenant_id_card_url_key') throw await taken();
      throw e;
    });
}

export async function refreshAgentCard(em: EntityManager, tenantId: string, actor: Actor, agentId: string, fetchCard: CardFetcher = fetchAgentCard) {
  const agent = await em.findOne(Agent, { id: agentId, tenantId });
  if (!agent) throw notFound('agent');
  const cardUrl = requireCard(agent, 'has no Agent Card to refresh');
  const card = await fetchCardOrBadInput(fetchCard, cardUrl, (e) => recordAgentFailure(em, agent.id, e));
  return em.transactional(async (tem) => {
    // The agent row lock serialises concurrent refreshes, so snapshot numbers never collide.
    const a = await tem.findOneOrFail(Agent, { id: agent.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const latest = await latestSnapshot(tem, agent.id);
    const number = (latest?.number ?? 0) + 1;
    tem.create(CardSnapshot, { id: randomUUID(), agentId: agent.id, number, card });
    a.name = card.name;
    await tem.flush();
    await appendEvents(tem, [
      {
        tenantId,
        stream: stream.tenant(tenantId),
        type: 'agent.card_refreshed',
        actor,
        data: { agentId: agent.id, snapshot: number, name: card.name },
      },
    ]);
    return a;
  });
}

/** The agents of the viewer's tenant the viewer sees (access.ts), by name: the catalog. */
export async function listVisibleAgents(em: EntityManager, access: Access): Promise<AgentRow[]> {
  const ids = await access.visibleAgentIds();
  const tenantId = access.viewer.tenantId;
  return em.find(Agent, ids === null ? { tenantId } : { tenantId, id: { $in: ids } }, { orderBy: { name: 'asc', id: 'asc' } });
}

/** The latest stored snapshot of each agent (those without a card have none). */
export async function latestSnapshots(em: EntityManager, agentIds: string[]): Promise<Map<string, CardSnapshotRow>> {
  if (!agentIds.length) return new Map();
  const latest = await sql<{ id: string }>(
    em,
    `select distinct on (agent_id) id from card_snapshot where agent_id in (${agentIds.map(() => '?').join(', ')}) order by agent_id, number desc`,
    agentIds,
  );
  const rows = latest.length ? await em.find(CardSnapshot, { id: { $in: latest.map((r) => r.id) } }) : [];
  return new Map(rows.map((s) => [s.agentId, s]));
}

/** Negotiation always reads the latest stored snapshot. */
export function latestSnapshot(em: EntityManager, agentId: string) {
  return em.findOne(CardSnapshot, { agentId }, { orderBy: { number: 'desc' } });
}

/**
 * The one check that an agent is an A2A agent (has a card, takes tasks). A command hook's agent
 * record only scopes its person's command approvals. Returns the card URL.
 */
export function requireCard(agent: Pick<AgentRow, 'kind' | 'cardUrl' | 'name'>, refusal: string): string {
  if (agent.kind !== 'A2A' || !agent.cardUrl) {
    throw badInput(`"${agent.name}" is ${agentKindSpec(agent.kind).noun} and ${refusal}`, { agentKind: agent.kind });
  }
  return agent.cardUrl;
}

export const commandHookName = (email: string) => `Command hook of ${email}`;

/**
 * The agent record of a person's coding-agent hook: one per tenant and hook token owner, made on
 * that person's first command request and reused afterwards. Runs in the caller's transaction;
 * concurrent first requests meet on the unique index (the loser reads the winner's row).
 */
export async function ensureCommandHookAgent(tem: EntityManager, user: { userId: string; tenantId: string; email: string }): Promise<string> {
  const id = randomUUID();
  const name = commandHookName(user.email);
  const inserted = await sql<{ id: string }>(
    tem,
    `insert into agent (id, tenant_id, kind, card_url, hook_user_id, name)
     values (?, ?, 'COMMAND_HOOK', null, ?, ?)
     on conflict (tenant_id, hook_user_id) where kind = 'COMMAND_HOOK' do nothing
     returning id`,
    [id, user.tenantId, user.userId, name],
  );
  if (inserted.length) {
    await appendEvents(tem, [
      {
        tenantId: user.tenantId,
        stream: stream.tenant(user.tenantId),
        type: 'agent.command_hook_created',
        actor: { type: 'user', id: user.userId },
        data: { agentId: id, hookUserId: user.userId, name },
      },
    ]);
    return id;
  }
  const [existing] = await sql<{ id: string }>(tem, `select id from agent where tenant_id = ? and hook_user_id = ? and kind = 'COMMAND_HOOK'`, [
    user.tenantId,
    user.userId,
  ]);
  return existing!.id;
}
