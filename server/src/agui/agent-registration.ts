import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream, type Actor } from '../audit/module.js';
import { alreadyRegistered } from '../agents/module.js';
import { violatedConstraint } from '../db/constraint.js';
import { badInput } from '../errors.js';
import { AGENT_LIMITS, codePointLength } from '../limits.js';
import type { AgentNetwork } from '../net/agent-network.js';
import { NetworkPolicyRefusal } from '../net/agent-network.js';
import { outboundUrl } from '../net/outbound-url.js';
import { Agent } from '../agents/entities.js';

// Registering an AG-UI agent (docs/AG-UI.md): by its endpoint URL, where runs are POSTed. AG-UI
// has no card to fetch, so the admin names the agent; the URL must pass the agent network policy
// (net/) now, and every run goes through the same guarded network later.

function endpointOf(raw: string): URL {
  if (raw.length > AGENT_LIMITS.urlMax) throw badInput(`endpointUrl is longer than ${AGENT_LIMITS.urlMax} characters`);
  return outboundUrl(raw, 'endpointUrl');
}

export async function registerAgUiAgent(
  em: EntityManager,
  network: AgentNetwork,
  tenantId: string,
  actor: Actor,
  input: { endpointUrl: string; name: string },
) {
  const url = endpointOf(input.endpointUrl);
  const name = input.name.trim();
  if (!name || codePointLength(name, AGENT_LIMITS.nameMax) > AGENT_LIMITS.nameMax) throw badInput(`name must be 1 to ${AGENT_LIMITS.nameMax} characters`);
  const endpointUrl = url.toString();
  try {
    await network.admit(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80));
  } catch (e) {
    if (e instanceof NetworkPolicyRefusal) throw badInput(e.message, { endpointUrl, failure: 'refused' });
    throw badInput(`endpointUrl: ${url.hostname} could not be resolved`, { endpointUrl, failure: 'unreachable' });
  }
  const taken = () => alreadyRegistered(em, { tenantId, endpointUrl }, `an agent with endpoint ${endpointUrl} is already registered`);
  if (await em.count(Agent, { tenantId, endpointUrl })) throw await taken();
  return em
    .transactional(async (tem) => {
      const agent = tem.create(Agent, { id: randomUUID(), tenantId, kind: 'AG_UI', cardUrl: null, endpointUrl, hookUserId: null, name });
      await tem.flush();
      await appendEvents(tem, [
        { tenantId, stream: stream.tenant(tenantId), type: 'agent.registered', actor, data: { agentId: agent.id, protocol: 'AG_UI', endpointUrl, name } },
      ]);
      return agent;
    })
    .catch(async (e) => {
      if (violatedConstraint(e) === 'agent_tenant_id_endpoint_url_key') throw await taken();
      throw e;
    });
}
