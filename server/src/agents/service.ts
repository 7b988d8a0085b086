import { randomUUID } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentCardError, fetchAgentCard } from '../a2a/card.js';
import { A2AError } from '../a2a/client.js';
import type { AgentCard } from '../a2a/types.js';
import { appendEvents, stream, type Actor } from '../audit/log.js';
import { badInput, notFound } from '../errors.js';
import { Agent, CardSnapshot, type AgentFailureRecord } from './entities.js';
import { storable } from '../db/storable.js';

export type CardFetcher = (url: string) => Promise<AgentCard>;

/** What an admin may read of a failed exchange; null for errors that are not the agent's. */
export function agentFailureRecord(e: unknown): AgentFailureRecord | null {
  if (!(e instanceof A2AError) && !(e instanceof AgentCardError)) return null;
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
    .catch((err: unknown) => console.error(`[agents] could not record the last error of agent ${agentId}: ${(err as Error).message}`));
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
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badInput(`cardUrl is not a URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badInput('cardUrl must be http or https');
  return url.toString();
}

/** Fetches the card first: an unreachable or invalid card stores nothing. */
export async function registerAgent(
  em: EntityManager,
  tenantId: string,
  actor: Actor,
  rawUrl: string,
  fetchCard: CardFetcher = fetchAgentCard,
) {
  const cardUrl = normaliseCardUrl(rawUrl);
  const existing = await em.findOne(Agent, { tenantId, cardUrl });
  if (existing) throw badInput(`an agent with card ${cardUrl} is already registered`, { agentId: existing.id });
  const card = await fetchCardOrBadInput(fetchCard, cardUrl);
  const alreadyRegistered = () => badInput(`an agent with card ${cardUrl} is already registered`);
  // A concurrent registration of the same URL can pass the check above while the card is fetched;
  // the unique (tenant_id, card_url) index decides, and the loser gets the same answer.
  return em.transactional(async (tem) => {
    const agent = tem.create(Agent, { id: randomUUID(), tenantId, cardUrl, name: card.name });
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
  }).catch((e) => {
    if (e instanceof UniqueConstraintViolationException) throw alreadyRegistered();
    throw e;
  });
}

export async function refreshAgentCard(
  em: EntityManager,
  tenantId: string,
  actor: Actor,
  agentId: string,
  fetchCard: CardFetcher = fetchAgentCard,
) {
  const agent = await em.findOne(Agent, { id: agentId, tenantId });
  if (!agent) throw notFound('agent');
  const card = await fetchCardOrBadInput(fetchCard, agent.cardUrl, (e) => recordAgentFailure(em, agent.id, e));
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

/** Negotiation always reads the latest stored snapshot. */
export function latestSnapshot(em: EntityManager, agentId: string) {
  return em.findOne(CardSnapshot, { agentId }, { orderBy: { number: 'desc' } });
}
