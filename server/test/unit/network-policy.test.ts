import { afterAll, describe, expect, it } from 'vitest';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { loadConfig } from '../../src/config.js';
import { AgentNetwork, dnsServersResolver, NetworkPolicyRefusal, type Resolver } from '../../src/net/agent-network.js';
import { startDnsServer } from '../support/dns-server.js';
import { judge, parseAddress, parseAgentNetworks, refusalByName, type PolicyContext, type ProtectedEndpoint } from '../../src/net/policy.js';

// The agent network policy (security finding "Agent URLs reach anything"). Policy decisions are
// judged on addresses a test resolver returns; connections go to loopback only: every network
// below dials 127.0.0.1 whatever address it judged, so a broken policy shows up as a connection
// to a local trap, never as traffic to a real link-local or private address.

const ctx = (rules = '', protectedEndpoints: ProtectedEndpoint[] = [], localAddresses: string[] = []): PolicyContext => ({
  rules: parseAgentNetworks(rules),
  protectedEndpoints,
  localAddresses: localAddresses.map((a) => parseAddress(a)!),
});
const verdict = (address: string, c: PolicyContext = ctx(), hostname = 'agent.example', port = 443) => judge({ hostname, address, port }, c);

describe('default refusals', () => {
  it.each([
    ['169.254.169.254', 'protected: cloud metadata'],
    ['169.254.170.2', 'protected: cloud metadata'],
    ['fd00:ec2::254', 'protected: cloud metadata'],
    ['100.100.100.200', 'protected: cloud metadata'],
    ['169.254.1.1', 'protected: link-local'],
    ['fe80::1', 'protected: link-local'],
    ['fe80::1%eth0', 'protected: link-local'],
    ['0.0.0.0', 'default: unspecified'],
    ['0.1.2.3', 'default: unspecified'],
    ['::', 'default: unspecified'],
    ['224.0.0.1', 'default: multicast'],
    ['ff02::1', 'default: multicast'],
    ['255.255.255.255', 'default: broadcast and reserved'],
    ['240.0.0.1', 'default: broadcast and reserved'],
  ])('%s is refused (%s)', (address, rule) => {
    expect(verdict(address)).toEqual({ allowed: false, rule });
  });

  it.each(['127.0.0.1', '127.9.9.9', '::1', '10.1.2.3', '172.16.0.1', '192.168.1.1', 'fd12::1', '100.64.0.1', '8.8.8.8', '2606:4700::1111'])(
    '%s is allowed (loopback and private ranges stay allowed by default)',
    (address) => {
      expect(verdict(address)).toEqual({ allowed: true, rule: 'default: allowed' });
    },
  );

  it('IPv4-mapped IPv6 is judged as the IPv4 address it is, in either notation', () => {
    expect(verdict('::ffff:169.254.169.254').rule).toBe('protected: cloud metadata');
    expect(verdict('::ffff:a9fe:a9fe').rule).toBe('protected: cloud metadata');
    expect(verdict('[::ffff:0.0.0.0]').rule).toBe('default: unspecified');
    expect(verdict('::ffff:127.0.0.1').allowed).toBe(true);
    // A deny rule written for IPv4 holds for the mapped form, and the reverse.
    expect(verdict('::ffff:10.0.0.1', ctx('deny 10.0.0.0/8')).allowed).toBe(false);
    expect(verdict('10.0.0.1', ctx('deny ::ffff:10.0.0.0/104')).allowed).toBe(false);
  });

  it('an IPv4 address carried in NAT64, 6to4, IPv4-translated or IPv4-compatible IPv6 is judged too', () => {
    for (const a of ['64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '::ffff:0:a9fe:a9fe', '::a9fe:a9fe']) {
      expect(verdict(a), a).toEqual({ allowed: false, rule: 'protected: cloud metadata' });
    }
    expect(verdict('64:ff9b::808:808').allowed).toBe(true);
  });

  // Finding 9 of issue 22: Teredo and 64:ff9b:1::/48 were not unwrapped, so 169.254.169.254
  // behind them was allowed.
  it.each([
    // RFC 8215 local-use NAT64, with the IPv4 address where a /96, /64, /56 and /48 prefix puts it.
    ['local-use NAT64 /96', '64:ff9b:1::a9fe:a9fe'],
    ['local-use NAT64 /64', '64:ff9b:1:0:a9:fea9:fe00:0'],
    ['local-use NAT64 /56', '64:ff9b:1:12a9:fe:a9fe::'],
    ['local-use NAT64 /48', '64:ff9b:1:a9fe:a9:fe00::'],
    // Teredo: server 65.54.227.120 (RFC 4380's example), client 169.254.169.254 inverted.
    ['Teredo client', '2001:0:4136:e378:8000:63bf:5601:5601'],
    // Teredo whose server is the metadata address.
    ['Teredo server', '2001:0:a9fe:a9fe:8000:63bf:3fff:fdd2'],
    ['ISATAP (private)', '2001:db8:1:2::5efe:a9fe:a9fe'],
    ['ISATAP (global)', '2001:db8:1:2:200:5efe:a9fe:a9fe'],
  ])('%s carrying 169.254.169.254 (%s) is refused', (_form, address) => {
    expect(verdict(address)).toEqual({ allowed: false, rule: 'protected: cloud metadata' });
    // Under an allow-list that lets the name through, too.
    expect(verdict(address, ctx('allow *.agents.example.com, deny *'), 'meta.agents.example.com')).toEqual({
      allowed: false,
      rule: 'protected: cloud metadata',
    });
  });

  it('Teredo and ISATAP carrying an ordinary address stay allowed; the client of RFC 4380 is judged as 192.0.2.45', () => {
    expect(verdict('2001:0:4136:e378:8000:63bf:3fff:fdd2').allowed).toBe(true);
    expect(verdict('2001:0:4136:e378:8000:63bf:3fff:fdd2', ctx('deny 192.0.2.45'))).toEqual({
      allowed: false,
      rule: 'TASKBAY_AGENT_NETWORKS "deny 192.0.2.45"',
    });
    expect(verdict('2001:db8::5efe:808:808').allowed).toBe(true);
    expect(verdict('2001:db8::5efe:a00:1', ctx('deny 10.0.0.0/8')).allowed).toBe(false);
  });

  it('local-use NAT64: the places that may hold an IPv4 address are held to the protected ranges only, not to rules or defaults', () => {
    // The /48 place of this /96-style address reads 224.0.0.0 (multicast): not a reason to refuse it.
    expect(verdict('64:ff9b:1:e000::808:808')).toEqual({ allowed: true, rule: 'default: allowed' });
    expect(verdict('64:ff9b:1:e000::808:808', ctx('deny 224.0.0.0/4')).allowed).toBe(true);
    // The link-local range is protected: refused wherever it may sit.
    expect(verdict('64:ff9b:1:a9fe:1:200::').rule).toBe('protected: link-local');
  });

  it('metadata.google.internal is refused by name, before and after resolution, in any case and with a trailing dot', () => {
    for (const name of ['metadata.google.internal', 'Metadata.Google.Internal.']) {
      expect(refusalByName([], name)).toEqual({ allowed: false, rule: 'protected: cloud metadata' });
      expect(verdict('10.9.9.9', ctx(), name)).toEqual({ allowed: false, rule: 'protected: cloud metadata' });
    }
    expect(refusalByName([], 'agent.example')).toBeNull();
  });

  it('something that is not an IP address is refused', () => {
    expect(verdict('not-an-ip').allowed).toBe(false);
    expect(verdict('0x7f.1').allowed).toBe(false);
  });
});

describe('TASKBAY_AGENT_NETWORKS', () => {
  it('first match wins, and the rules come before the defaults', () => {
    const denyFirst = ctx('deny 10.0.0.0/8, allow 10.1.2.0/24');
    expect(verdict('10.1.2.3', denyFirst)).toEqual({ allowed: false, rule: 'TASKBAY_AGENT_NETWORKS "deny 10.0.0.0/8"' });
    const allowFirst = ctx('allow 10.1.2.0/24, deny 10.0.0.0/8');
    expect(verdict('10.1.2.3', allowFirst)).toEqual({ allowed: true, rule: 'TASKBAY_AGENT_NETWORKS "allow 10.1.2.0/24"' });
    expect(verdict('10.9.9.9', allowFirst).allowed).toBe(false);
    expect(verdict('8.8.8.8', allowFirst)).toEqual({ allowed: true, rule: 'default: allowed' });
    // An admin can open a default refusal deliberately, or close loopback.
    expect(verdict('240.0.0.1', ctx('allow 240.0.0.0/4')).allowed).toBe(true);
    expect(verdict('127.0.0.1', ctx('deny 127.0.0.0/8'))).toEqual({ allowed: false, rule: 'TASKBAY_AGENT_NETWORKS "deny 127.0.0.0/8"' });
    expect(verdict('::1', ctx('deny ::1')).allowed).toBe(false);
  });

  it('host rules match the URL host exactly or by *.suffix (not the suffix itself); * matches every host', () => {
    const c = ctx('allow agents.corp.example, deny *.corp.example');
    expect(verdict('10.0.0.1', c, 'agents.corp.example').allowed).toBe(true);
    expect(verdict('10.0.0.1', c, 'db.corp.example').rule).toBe('TASKBAY_AGENT_NETWORKS "deny *.corp.example"');
    expect(verdict('10.0.0.1', c, 'a.b.corp.example').allowed).toBe(false);
    expect(verdict('10.0.0.1', c, 'corp.example').allowed).toBe(true);
    expect(verdict('10.0.0.1', c, 'xcorp.example').allowed).toBe(true);
    const allowList = ctx('allow 127.0.0.1, allow agents.example.com, deny *');
    expect(verdict('127.0.0.1', allowList, 'localhost').allowed).toBe(true);
    expect(verdict('93.184.215.14', allowList, 'agents.example.com').allowed).toBe(true);
    expect(verdict('93.184.215.14', allowList, 'other.example.com').rule).toBe('TASKBAY_AGENT_NETWORKS "deny *"');
  });

  it('a host deny rule refuses before resolution unless a CIDR rule comes first', () => {
    expect(refusalByName(parseAgentNetworks('deny *.corp.example'), 'db.corp.example')?.allowed).toBe(false);
    expect(refusalByName(parseAgentNetworks('allow 10.0.0.0/8, deny *.corp.example'), 'db.corp.example')).toBeNull();
    expect(refusalByName(parseAgentNetworks('allow db.corp.example, deny *'), 'db.corp.example')).toBeNull();
  });

  it('parses IPs, CIDRs, bracketed IPv6, host names and wildcards', () => {
    const rules = parseAgentNetworks(' deny  10.0.0.0/8 ,ALLOW 192.168.1.7, deny [fd00::1], allow fd00::/8, deny *.Corp.Example, allow a-b.example., deny * ');
    expect(rules.map((r) => [r.action, r.kind, r.text])).toEqual([
      ['deny', 'cidr', 'deny 10.0.0.0/8'],
      ['allow', 'cidr', 'allow 192.168.1.7'],
      ['deny', 'cidr', 'deny [fd00::1]'],
      ['allow', 'cidr', 'allow fd00::/8'],
      ['deny', 'host', 'deny *.Corp.Example'],
      ['allow', 'host', 'allow a-b.example.'],
      ['deny', 'host', 'deny *'],
    ]);
    expect(parseAgentNetworks('')).toEqual([]);
  });

  it.each([
    ['permit 10.0.0.0/8', /entry 1 \("permit 10.0.0.0\/8"\) must be "allow <target>" or "deny <target>"/],
    ['deny', /entry 1 \("deny"\) must be/],
    ['deny 10.0.0.0/8,', /entry 2 \(""\) must be/],
    ['deny 10.0.0.0/33', /entry 1 .* is not a CIDR range/],
    ['deny 10.0.0/8', /is not a CIDR range/],
    ['deny fd00::/129', /is not a CIDR range/],
    ['allow 10.0.0', /is not a CIDR range, an IP address, a host name/],
    ['allow bad_host!.example', /is not a CIDR range, an IP address, a host name/],
    ['allow -bad.example', /is not a CIDR range, an IP address, a host name/],
    ['allow a.*.example', /is not a CIDR range, an IP address, a host name/],
    ['deny 10.0.0.0/8 extra', /must be "allow <target>"/],
  ])('refuses %j at start with a clear message', (raw, message) => {
    expect(() => loadConfig({ TASKBAY_AGENT_NETWORKS: raw })).toThrow(message);
  });

  it('loadConfig keeps the parsed rules (none by default)', () => {
    expect(loadConfig({}).agentNetworks).toEqual([]);
    expect(loadConfig({ TASKBAY_AGENT_NETWORKS: 'deny 10.0.0.0/8' }).agentNetworks.map((r) => r.text)).toEqual(['deny 10.0.0.0/8']);
  });
});

// Finding 6 of issue 22: under the documented allow-list a name resolving to 169.254.169.254
// was allowed by its host rule.
describe('cloud metadata and link-local are never allowed, whatever the rules say', () => {
  it.each([
    ['the documented allow-list', 'allow *.agents.example.com, deny *', 'meta.agents.example.com'],
    ['an allow rule for the address', 'allow 169.254.169.254', 'agent.example'],
    ['an allow rule for everything', 'allow 0.0.0.0/0, allow ::/0, allow *', 'agent.example'],
  ])('%s (%s) does not open them', (_label, rules, hostname) => {
    const c = ctx(rules);
    for (const [address, rule] of [
      ['169.254.169.254', 'protected: cloud metadata'],
      ['169.254.170.2', 'protected: cloud metadata'],
      ['169.254.170.23', 'protected: cloud metadata'],
      ['fd00:ec2::254', 'protected: cloud metadata'],
      ['fd00:ec2::23', 'protected: cloud metadata'],
      ['fd20:ce::254', 'protected: cloud metadata'],
      ['100.100.100.200', 'protected: cloud metadata'],
      ['168.63.129.16', 'protected: cloud metadata'],
      ['192.0.0.192', 'protected: cloud metadata'],
      ['::ffff:169.254.169.254', 'protected: cloud metadata'],
      ['64:ff9b::a9fe:a9fe', 'protected: cloud metadata'],
      ['169.254.1.1', 'protected: link-local'],
      ['fe80::1', 'protected: link-local'],
    ]) {
      expect(verdict(address!, c, hostname), address).toEqual({ allowed: false, rule });
    }
    // Around them the rules still decide.
    expect(verdict('10.1.2.3', c, hostname).allowed).toBe(true);
  });

  it('metadata.google.internal is refused by name before any rule, an allow rule for it included', () => {
    for (const rules of ['allow metadata.google.internal', 'allow *.google.internal, deny *', 'allow *']) {
      expect(refusalByName(parseAgentNetworks(rules), 'metadata.google.internal'), rules).toEqual({ allowed: false, rule: 'protected: cloud metadata' });
      expect(verdict('10.9.9.9', ctx(rules), 'metadata.google.internal'), rules).toEqual({ allowed: false, rule: 'protected: cloud metadata' });
    }
  });
});

describe('protected endpoints (the database, Taskbay itself) come before the rules', () => {
  const db: ProtectedEndpoint = {
    label: "the database's address",
    port: 5432,
    hostnames: ['db.internal'],
    addresses: [parseAddress('10.0.0.5')!],
    anyLocal: false,
  };
  const self: ProtectedEndpoint = { label: "Taskbay's own port", port: 4000, hostnames: [], addresses: [], anyLocal: true };

  it('the database address at its port is refused, even under an allow rule; other ports of it are not', () => {
    const c = ctx('allow 0.0.0.0/0, allow ::/0', [db]);
    expect(judge({ hostname: 'x.example', address: '10.0.0.5', port: 5432 }, c)).toEqual({ allowed: false, rule: "protected: the database's address" });
    expect(judge({ hostname: 'x.example', address: '::ffff:10.0.0.5', port: 5432 }, c).allowed).toBe(false);
    expect(judge({ hostname: 'db.internal', address: '10.0.0.6', port: 5432 }, c).allowed).toBe(false);
    expect(judge({ hostname: 'x.example', address: '10.0.0.5', port: 8080 }, c).allowed).toBe(true);
  });

  it("Taskbay's own port is refused on loopback, unspecified and this machine's interface addresses", () => {
    const c = ctx('allow 0.0.0.0/0', [self], ['192.0.2.10', 'fe80::10']);
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '::', '::ffff:127.0.0.1', '192.0.2.10', 'fe80::10']) {
      expect(judge({ hostname: 'x', address, port: 4000 }, c), address).toEqual({ allowed: false, rule: "protected: Taskbay's own port" });
    }
    expect(judge({ hostname: 'x', address: '127.0.0.1', port: 4001 }, c).allowed).toBe(true);
    expect(judge({ hostname: 'x', address: '192.0.2.11', port: 4000 }, c).allowed).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// The network itself: real connections, to loopback only.

const servers: Server[] = [];
const networks: AgentNetwork[] = [];

afterAll(async () => {
  await Promise.all(networks.map((n) => n.close()));
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

/** A local TCP server that only counts connections: a connection means the policy let one through. */
async function trap(): Promise<{ port: number; connections: () => number }> {
  let n = 0;
  const server = createTcpServer((socket) => {
    n += 1;
    socket.destroy();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, connections: () => n };
}

/** A local HTTP server answering 200 "ok" and recording requests. */
async function okServer(): Promise<{ port: number; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createHttpServer((req, res) => {
    requests.push(req);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
    res.end('ok');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, requests };
}

function resolverOf(map: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = (async (hostname: string) => {
    calls.push(hostname);
    const found = map[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  }) as Resolver & { calls: string[] };
  fn.calls = calls;
  return fn;
}

function network(opts: ConstructorParameters<typeof AgentNetwork>[0]): AgentNetwork {
  // Whatever address is judged, the socket goes to loopback.
  const n = new AgentNetwork({ dial: () => '127.0.0.1', ...opts });
  networks.push(n);
  return n;
}

async function refusal(p: Promise<unknown>): Promise<NetworkPolicyRefusal> {
  const err = (await p.then(
    () => null,
    (e: unknown) => e,
  )) as { cause?: unknown } | null;
  expect(err, 'the request went through').not.toBeNull();
  expect(err!.cause).toBeInstanceOf(NetworkPolicyRefusal);
  return err!.cause as NetworkPolicyRefusal;
}

describe('AgentNetwork: every connection is resolved and judged before it opens', () => {
  it('a name resolving to a metadata address is refused and nothing connects; an allowed name connects with its own Host', async () => {
    const t = await trap();
    const ok = await okServer();
    const resolve = resolverOf({ 'meta.test': ['169.254.169.254'], 'agent.test': ['127.0.0.1'] });
    const net = network({ resolve });
    const r = await refusal(net.fetch(`http://meta.test:${t.port}/latest/meta-data/`));
    expect(r.rule).toBe('protected: cloud metadata');
    expect(r.hostname).toBe('meta.test');
    expect(t.connections()).toBe(0);

    const res = await net.fetch(`http://agent.test:${ok.port}/a2a`);
    expect(await res.text()).toBe('ok');
    expect(ok.requests[0]!.headers.host).toBe(`agent.test:${ok.port}`);
  });

  it('literal IP hosts are judged without a lookup (IPv4, bracketed IPv6, IPv4-mapped)', async () => {
    const t = await trap();
    const resolve = resolverOf({});
    const net = network({ resolve });
    for (const host of ['169.254.169.254', '[fe80::1]', '[::ffff:169.254.169.254]', '0.0.0.0']) {
      const r = await refusal(net.fetch(`http://${host}:${t.port}/`));
      expect(r.rule).toMatch(/^(default|protected): /);
    }
    expect(t.connections()).toBe(0);
    expect(resolve.calls).toEqual([]);
  });

  it('a name with one good and one refused address is refused', async () => {
    const t = await trap();
    const net = network({ resolve: resolverOf({ 'mixed.test': ['127.0.0.1', '169.254.169.254'] }) });
    expect((await refusal(net.fetch(`http://mixed.test:${t.port}/`))).rule).toBe('protected: cloud metadata');
    expect(t.connections()).toBe(0);
  });

  it('each new connection resolves and judges again: a name rebound to a metadata address after a first good answer is refused', async () => {
    const ok = await okServer();
    let answer = ['127.0.0.1'];
    const net = network({ resolve: async () => answer });
    expect((await net.fetch(`http://rebind.test:${ok.port}/`)).status).toBe(200);
    answer = ['169.254.169.254'];
    // The server closed the first connection (connection: close): this is a new one.
    expect((await refusal(net.fetch(`http://rebind.test:${ok.port}/`))).rule).toBe('protected: cloud metadata');
    expect(ok.requests).toHaveLength(1);
  });

  it("the database's address at its port is refused (a loopback database: any local address at that port)", async () => {
    const db = await trap();
    const net = network({
      databaseUrl: `postgres://taskbay:secret@localhost:${db.port}/taskbay`,
      rules: parseAgentNetworks('allow 0.0.0.0/0'),
      resolve: resolverOf({ 'db.test': ['127.0.0.1'], localhost: ['::1', '127.0.0.1'] }),
    });
    for (const url of [`http://db.test:${db.port}/`, `http://127.0.0.1:${db.port}/`, `http://[::ffff:127.0.0.1]:${db.port}/`]) {
      expect((await refusal(net.fetch(url))).rule).toBe("protected: the database's address");
    }
    expect(db.connections()).toBe(0);
  });

  it('a database on another host: its resolved address at its port is refused', async () => {
    const db = await trap();
    const net = network({
      databaseUrl: `postgres://u:p@postgres.internal:${db.port}/taskbay`,
      resolve: resolverOf({ 'postgres.internal': ['10.20.30.40'], 'alias.test': ['10.20.30.40'] }),
    });
    expect((await refusal(net.fetch(`http://alias.test:${db.port}/`))).rule).toBe("protected: the database's address");
    expect((await refusal(net.fetch(`http://10.20.30.40:${db.port}/`))).rule).toBe("protected: the database's address");
    expect(db.connections()).toBe(0);
  });

  it("Taskbay's own port is refused on loopback and on this machine's interface addresses", async () => {
    const self = await trap();
    const net = network({ rules: parseAgentNetworks('allow 0.0.0.0/0, allow ::/0'), resolve: resolverOf({ 'self.test': ['127.0.0.1'] }) });
    net.protectOwnPort(self.port);
    const local = Object.values(networkInterfaces())
      .flat()
      .map((i) => i!.address)
      .filter((a) => !a.includes(':'));
    for (const host of ['self.test', '127.0.0.1', ...local]) {
      expect((await refusal(net.fetch(`http://${host}:${self.port}/graphql`))).rule, host).toBe("protected: Taskbay's own port");
    }
    expect(self.connections()).toBe(0);
  });

  it('a deny host rule refuses without resolving the name', async () => {
    const t = await trap();
    const resolve = resolverOf({ 'db.corp.example': ['127.0.0.1'] });
    const net = network({ rules: parseAgentNetworks('deny *.corp.example'), resolve });
    expect((await refusal(net.fetch(`http://db.corp.example:${t.port}/`))).rule).toBe('TASKBAY_AGENT_NETWORKS "deny *.corp.example"');
    expect(resolve.calls).toEqual([]);
    expect(t.connections()).toBe(0);
  });

  it('without a test resolver, localhost resolves through the system and reaches a server on 127.0.0.1', async () => {
    const ok = await okServer();
    const net = new AgentNetwork();
    networks.push(net);
    expect(await (await net.fetch(`http://localhost:${ok.port}/`)).text()).toBe('ok');
  });
});

describe('TASKBAY_AGENT_DNS_SERVERS: agent names asked of chosen DNS servers (real answers from a DNS server on loopback)', () => {
  it('parses addresses with optional ports and refuses anything else at start', () => {
    expect(loadConfig({}).agentDnsServers).toEqual([]);
    expect(loadConfig({ TASKBAY_AGENT_DNS_SERVERS: ' 10.0.0.2, 10.0.0.3:5353 ,[fd00::53]:53, fd00::54' }).agentDnsServers).toEqual([
      '10.0.0.2:53',
      '10.0.0.3:5353',
      '[fd00::53]:53',
      '[fd00::54]:53',
    ]);
    for (const raw of ['dns.example', '10.0.0.2:0', '10.0.0.2:70000', '10.0.0.2,', '10.0.0/24']) {
      expect(() => loadConfig({ TASKBAY_AGENT_DNS_SERVERS: raw }), raw).toThrow(
        /TASKBAY_AGENT_DNS_SERVERS entry \d \(.*\) must be an IP address with an optional port/,
      );
    }
  });

  it('a name is resolved by the configured server and dialled at the address it answered; an unknown name is not found', async () => {
    const dns = await startDnsServer({ 'agent.dns.test': ['127.0.0.1'] });
    try {
      const ok = await okServer();
      // No dial mapping: the answer itself (127.0.0.1) is dialled.
      const net = new AgentNetwork({ resolve: dnsServersResolver([dns.address]) });
      networks.push(net);
      expect(await (await net.fetch(`http://agent.dns.test:${ok.port}/`)).text()).toBe('ok');
      expect(dns.queries).toContain('A agent.dns.test');
      const err = (await net.fetch(`http://missing.dns.test:${ok.port}/`).then(
        () => null,
        (e: { cause?: { code?: string } }) => e,
      )) as { cause?: { code?: string } } | null;
      expect(err?.cause?.code).toBe('ENOTFOUND');
      expect(dns.queries).toContain('A missing.dns.test');
    } finally {
      await dns.close();
    }
  });

  it('a name the DNS server answers with 169.254.169.254 is refused under the documented allow-list, and nothing connects', async () => {
    const dns = await startDnsServer({ 'meta.agents.example.com': ['169.254.169.254'] });
    try {
      const t = await trap();
      const net = network({ rules: parseAgentNetworks('allow *.agents.example.com, deny *'), resolve: dnsServersResolver([dns.address]) });
      const r = await refusal(net.fetch(`http://meta.agents.example.com:${t.port}/`));
      expect(r.rule).toBe('protected: cloud metadata');
      expect(r.address).toBe('169.254.169.254');
      expect(dns.queries).toContain('A meta.agents.example.com');
      expect(t.connections()).toBe(0);
    } finally {
      await dns.close();
    }
  });
});
