import type { ApprovalKeys } from './approval-signing/keys.js';
import type { Config } from './config.js';
import { fetchAgentCard } from './a2a/card.js';
import type { AgentCard } from './a2a/types.js';
import { InFlightWork } from './lib/in-flight.js';
import { AgentNetwork, dnsServersResolver, systemResolver, type Resolver } from './net/agent-network.js';

/** What the domain needs from the outside world, passed explicitly (tests use the real ones). */
export interface Deps {
  config: Config;
  /** Every connection to an agent goes through it: the network policy judges each address. */
  network: AgentNetwork;
  fetchCard: (url: string) => Promise<AgentCard>;
  /** The key that signs approved messages (it lives outside the database) and the JWKS agents verify with. */
  approvalKeys: ApprovalKeys;
  /** What this instance started and did not await (direct deliveries); its graceful stop waits for it. */
  inFlight: InFlightWork;
}

/** Tests only: their own resolver, and where a judged address is really dialled (loopback). */
export interface NetworkOverrides {
  resolve?: Resolver;
  dial?: (address: string) => string;
}

export function realDeps(config: Config, approvalKeys: ApprovalKeys, opts: { databaseUrl?: string | null; network?: NetworkOverrides } = {}): Deps {
  const network = new AgentNetwork({
    rules: config.agentNetworks,
    databaseUrl: opts.databaseUrl ?? config.databaseUrl,
    ownPorts: [config.port],
    resolve: config.agentDnsServers.length ? dnsServersResolver(config.agentDnsServers) : systemResolver,
    resolveDatabase: systemResolver,
    ...opts.network,
  });
  return {
    config,
    network,
    fetchCard: (url) => fetchAgentCard(url, { fetchImpl: network.fetch }),
    approvalKeys,
    inFlight: new InFlightWork(),
  };
}
