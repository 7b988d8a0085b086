import { lookup, Resolver as DnsResolver } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { isLocalAddress, judge, normaliseHostname, parseAddress, refusalByName, type Address, type NetworkRule, type ProtectedEndpoint } from './policy.js';

// Every connection Taskbay makes to an agent (card fetches, A2A calls, deliveries) goes through
// an AgentNetwork: an undici dispatcher whose connector resolves the host itself, judges every
// address with the policy and then dials exactly the address it judged. Nothing else resolves
// the name, so DNS rebinding between check and connect is impossible, and literal IPs, redirect
// targets and pooled reconnects are all judged the same way.

/** Resolves a host name to its addresses (tests pass their own; nothing real is looked up). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((r) => r.address);

/** A DNS answer that means "no address" rather than "could not ask". */
const NO_ADDRESS_CODES = ['ENODATA', 'ENOTFOUND'];

/**
 * Resolves A and AAAA records by asking these DNS servers directly (TASKBAY_AGENT_DNS_SERVERS,
 * `ip` or `ip:port`), not the system's resolver: agent names can then be answered by a resolver
 * the operator chooses for agent traffic alone. Whatever answers, every address is judged.
 */
export function dnsServersResolver(servers: readonly string[], timeoutMs = 5000): Resolver {
  const dns = new DnsResolver({ timeout: timeoutMs, tries: 2 });
  dns.setServers([...servers]);
  return async (hostname) => {
    const answers = await Promise.allSettled([dns.resolve4(hostname), dns.resolve6(hostname)]);
    const found = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
    if (found.length) return found;
    const failed = answers.find(
      (a): a is PromiseRejectedResult => a.status === 'rejected' && !NO_ADDRESS_CODES.includes((a.reason as { code?: string }).code ?? ''),
    );
    if (failed) throw failed.reason;
    throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
  };
}

/**
 * Parses TASKBAY_AGENT_DNS_SERVERS: comma-separated IP addresses, each with an optional port
 * (`10.0.0.2`, `10.0.0.2:5353`, `[fd00::53]:53`). Throws an Error naming the entry that is wrong.
 */
export function parseDnsServers(raw: string, setting = 'TASKBAY_AGENT_DNS_SERVERS'): string[] {
  if (raw.trim() === '') return [];
  return raw.split(',').map((entry, i) => {
    const text = entry.trim();
    const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(text) ?? /^([0-9a-fA-F:]+)()$/.exec(text);
    const address = m ? parseAddress(m[1]!) : null;
    const port = m?.[2] ? Number(m[2]) : 53;
    if (!m || !address || port < 1 || port > 65535 || m[1]!.includes('%')) {
      throw new Error(
        `${setting} entry ${i + 1} (${JSON.stringify(text)}) must be an IP address with an optional port, e.g. 10.0.0.2, 10.0.0.2:5353 or [fd00::53]:53`,
      );
    }
    const host = address.kind() === 'ipv6' ? `[${address.toString()}]` : address.toString();
    return `${host}:${port}`;
  });
}

/** Why a connection was not made: the network policy refused the destination. */
export class NetworkPolicyRefusal extends Error {
  readonly code = 'TASKBAY_NETWORK_POLICY';
  /** The rule that refused, e.g. `protected: link-local` (safe to show). */
  readonly rule: string;
  readonly hostname: string;
  /** The refused address, for the admin-only detail. */
  readonly address: string | null;
  constructor(hostname: string, rule: string, address: string | null) {
    super(`${hostname}${address ? ` (${address})` : ''} is refused by the agent network policy (${rule})`);
    this.name = 'NetworkPolicyRefusal';
    this.rule = rule;
    this.hostname = hostname;
    this.address = address;
  }
}

export interface AgentNetworkOptions {
  /** TASKBAY_AGENT_NETWORKS, parsed (config.agentNetworks). */
  rules?: readonly NetworkRule[];
  /** The database this instance uses: its address and port are refused. */
  databaseUrl?: string | null;
  /** Taskbay's own listening ports (more are added with protectOwnPort once listening). */
  ownPorts?: number[];
  /** How agent names are resolved (default: the system's resolver). */
  resolve?: Resolver;
  /** How the database's host name is resolved: as its driver does (default: resolve, else the system's resolver). */
  resolveDatabase?: Resolver;
  /**
   * Tests only: the address actually dialled for a judged one (they map everything to
   * 127.0.0.1), so a test can judge 169.254.169.254 without ever sending traffic there.
   */
  dial?: (address: string) => string;
  /** Connect timeout per address (ms). */
  connectTimeoutMs?: number;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The TCP endpoint of a postgres:// URL; null for a Unix socket or an unparsable URL. */
function databaseEndpoint(databaseUrl: string): { host: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(databaseUrl);
  } catch {
    return null;
  }
  const socketHost = u.searchParams.get('host');
  if (socketHost?.startsWith('/')) return null;
  const host = normaliseHostname(decodeURIComponent(socketHost || u.hostname));
  if (!host || host.startsWith('/')) return null;
  return { host, port: Number(u.port) || 5432 };
}

function interfaceAddresses(): Address[] {
  const out: Address[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) {
      const a = parseAddress(i.address);
      if (a) out.push(a);
    }
  }
  return out;
}

export class AgentNetwork {
  /** fetch through this network: use it for every request to an agent. */
  readonly fetch: typeof fetch;
  private readonly rules: readonly NetworkRule[];
  private readonly resolver: Resolver;
  private readonly databaseResolver: Resolver;
  private readonly dial: (address: string) => string;
  private readonly database: { host: string; port: number } | null;
  private readonly ownPorts = new Set<number>();
  private readonly dispatcher: Agent;

  constructor(opts: AgentNetworkOptions = {}) {
    this.rules = opts.rules ?? [];
    this.resolver = opts.resolve ?? systemResolver;
    this.databaseResolver = opts.resolveDatabase ?? this.resolver;
    this.dial = opts.dial ?? ((a) => a);
    this.database = opts.databaseUrl ? databaseEndpoint(opts.databaseUrl) : null;
    for (const p of opts.ownPorts ?? []) this.protectOwnPort(p);

    const connect = buildConnector({ timeout: opts.connectTimeoutMs ?? 10_000 });
    this.dispatcher = new Agent({
      connect: (options, callback) => {
        const port = Number(options.port) || DEFAULT_PORTS[options.protocol] || 80;
        this.admit(options.hostname, port).then(
          (addresses) => {
            // Dial the judged addresses in order (localhost: ::1 then 127.0.0.1); the TLS name
            // stays the URL's host (undici takes it from options.host).
            const attempt = (i: number) =>
              connect({ ...options, hostname: this.dial(addresses[i]!) }, (...result) => {
                if (result[0] && i + 1 < addresses.length) attempt(i + 1);
                else callback(...result);
              });
            attempt(0);
          },
          (err: Error) => callback(err, null),
        );
      },
    });
    const dispatcher = this.dispatcher;
    this.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
  }

  /** Refuses Taskbay's own port on every local address (called once the server listens). */
  protectOwnPort(port: number): void {
    if (port > 0) this.ownPorts.add(port);
  }

  /**
   * Resolves the host and judges every address; resolves with the addresses to dial, or rejects
   * with NetworkPolicyRefusal when any of them is refused (a name resolving to one good and one
   * bad address is refused: the resolver decides which one a retry would get).
   */
  async admit(rawHostname: string, port: number): Promise<string[]> {
    const hostname = normaliseHostname(rawHostname);
    const byName = refusalByName(this.rules, hostname);
    if (byName) throw new NetworkPolicyRefusal(hostname, byName.rule, null);
    const literal = parseAddress(hostname);
    const addresses = literal ? [hostname] : await this.resolver(hostname);
    if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
    const ctx = {
      rules: this.rules,
      protectedEndpoints: await this.protectedEndpoints(port),
      localAddresses: interfaceAddresses(),
    };
    for (const address of addresses) {
      const verdict = judge({ hostname, address, port }, ctx);
      if (!verdict.allowed) throw new NetworkPolicyRefusal(hostname, verdict.rule, address);
    }
    return addresses;
  }

  /** The protected endpoints on this port (the database host is resolved only when its port is asked for). */
  private async protectedEndpoints(port: number): Promise<ProtectedEndpoint[]> {
    const out: ProtectedEndpoint[] = [];
    if (this.ownPorts.has(port)) out.push({ label: "Taskbay's own port", port, hostnames: [], addresses: [], anyLocal: true });
    if (this.database?.port === port) {
      const { host } = this.database;
      const literal = parseAddress(host);
      const resolved = literal
        ? [literal]
        : await this.databaseResolver(host).then(
            (list) => list.map(parseAddress).filter((a): a is Address => a !== null),
            () => [] as Address[],
          );
      const local = host === 'localhost' || resolved.some((a) => isLocalAddress(a, interfaceAddresses()));
      out.push({ label: "the database's address", port, hostnames: [host], addresses: resolved, anyLocal: local });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

let defaultNetwork: AgentNetwork | null = null;

/**
 * The network with the default policy only (no rules, no database or own port known): what an
 * A2AClient or card fetch uses when it is given no fetch, so nothing reaches an agent unjudged.
 */
export function defaultAgentFetch(): typeof fetch {
  defaultNetwork ??= new AgentNetwork();
  return defaultNetwork.fetch;
}
