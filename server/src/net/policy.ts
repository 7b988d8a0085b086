import ipaddr from 'ipaddr.js';

// The agent network policy: which addresses Taskbay may connect to when it talks to an agent.
// Pure functions only; agent-network.ts resolves names and applies this to every connection.
//
// Order of judgement for one resolved address (first match wins):
//   1. protected endpoints: the database's own address and port, Taskbay's own port on any local
//      address. Not overridable (an allow rule for a range must not open them by accident).
//   2. TASKBAY_AGENT_NETWORKS, in the order written (host rules match the URL's host name, CIDR
//      rules the resolved address), so an admin can allow or deny anything the defaults decide.
//   3. the defaults: cloud metadata, link-local, unspecified, multicast, broadcast and reserved
//      are refused; everything else (loopback and private ranges included) is allowed.

export type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

export type NetworkRule =
  | { action: 'allow' | 'deny'; kind: 'cidr'; text: string; range: Cidr }
  | { action: 'allow' | 'deny'; kind: 'host'; text: string; pattern: string };

export interface Verdict {
  allowed: boolean;
  /** Which rule decided, for messages: `TASKBAY_AGENT_NETWORKS "deny 10.0.0.0/8"` or `default: link-local`. */
  rule: string;
}

/** An endpoint no agent URL may reach, whatever the rules say. */
export interface ProtectedEndpoint {
  label: string;
  port: number;
  /** Host names (lower case) refused at this port. */
  hostnames: string[];
  /** Addresses refused at this port. */
  addresses: Address[];
  /** Also refuse every local address (loopback, unspecified, this machine's interfaces) at this port. */
  anyLocal: boolean;
}

const DEFAULT_REFUSED_RANGES: { label: string; cidrs: string[] }[] = [
  // AWS/GCP/Azure/OCI 169.254.169.254, AWS ECS task metadata, AWS IPv6 IMDS, Alibaba Cloud.
  { label: 'cloud metadata', cidrs: ['169.254.169.254/32', '169.254.170.2/32', 'fd00:ec2::254/128', '100.100.100.200/32'] },
  { label: 'link-local', cidrs: ['169.254.0.0/16', 'fe80::/10'] },
  // 0.0.0.0 and :: reach this machine on Linux.
  { label: 'unspecified', cidrs: ['0.0.0.0/8', '::/128'] },
  { label: 'multicast', cidrs: ['224.0.0.0/4', 'ff00::/8'] },
  { label: 'broadcast and reserved', cidrs: ['240.0.0.0/4'] },
];
const DEFAULT_REFUSED_HOSTS: { label: string; hosts: string[] }[] = [{ label: 'cloud metadata', hosts: ['metadata.google.internal'] }];

const parsedDefaults = DEFAULT_REFUSED_RANGES.map((d) => ({ label: d.label, ranges: d.cidrs.map((c) => normaliseCidr(ipaddr.parseCIDR(c))) }));
const LOOPBACK_AND_UNSPECIFIED = ['127.0.0.0/8', '0.0.0.0/8', '::1/128', '::/128'].map((c) => ipaddr.parseCIDR(c) as Cidr);

/** An IPv4-mapped IPv6 range (::ffff:a.b.c.d/n, n >= 96) is the IPv4 range it maps. */
function normaliseCidr([addr, bits]: Cidr): Cidr {
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [addr, bits];
}

function inRange(addr: Address, [base, bits]: Cidr): boolean {
  return addr.kind() === base.kind() && addr.match(base, bits);
}

/** Parses an address as a socket would see it: brackets and zone ids dropped, IPv4-mapped IPv6 as IPv4. */
export function parseAddress(raw: string): Address | null {
  const s = raw.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s);
  if (!ipaddr.IPv6.isValid(s)) return null;
  const v6 = ipaddr.IPv6.parse(s);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

export function sameAddress(a: Address, b: Address): boolean {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

/**
 * The IPv4 address an IPv6 address carries to another host through a translator (NAT64
 * 64:ff9b::/96, 6to4 2002::/16, IPv4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96): it is
 * judged too, so 64:ff9b::a9fe:a9fe cannot reach 169.254.169.254.
 */
function embeddedIPv4(addr: Address): ipaddr.IPv4 | null {
  if (addr.kind() !== 'ipv6') return null;
  const v6 = addr as ipaddr.IPv6;
  const b = v6.toByteArray();
  const v4 = (from: number) => new ipaddr.IPv4(b.slice(from, from + 4));
  if (inRange(v6, ipaddr.parseCIDR('64:ff9b::/96') as Cidr)) return v4(12);
  if (inRange(v6, ipaddr.parseCIDR('::ffff:0:0:0/96') as Cidr)) return v4(12);
  if (inRange(v6, ipaddr.parseCIDR('2002::/16') as Cidr)) return v4(2);
  if (inRange(v6, ipaddr.parseCIDR('::/96') as Cidr) && b.slice(12).some((x, i) => (i < 3 ? x !== 0 : x > 1))) return v4(12);
  return null;
}

export function normaliseHostname(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

function hostMatches(pattern: string, hostname: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return hostname.endsWith(pattern.slice(1));
  return hostname === pattern;
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * Parses TASKBAY_AGENT_NETWORKS: comma-separated `allow <target>` / `deny <target>` entries,
 * first match wins. A target is a CIDR (10.0.0.0/8, fd00::/8), an IP address, a host name
 * (agents.example.com), `*.suffix` (any name under suffix, not suffix itself) or `*` (any host).
 * Throws an Error naming the entry that is wrong.
 */
export function parseAgentNetworks(raw: string, setting = 'TASKBAY_AGENT_NETWORKS'): NetworkRule[] {
  if (raw.trim() === '') return [];
  return raw.split(',').map((entry, i) => {
    const text = entry.trim().replace(/\s+/g, ' ');
    const where = `${setting} entry ${i + 1} (${JSON.stringify(text)})`;
    const m = /^(allow|deny) (\S+)$/i.exec(text);
    if (!m) throw new Error(`${where} must be "allow <target>" or "deny <target>", e.g. "deny 10.0.0.0/8" or "allow agents.example.com"`);
    const action = m[1]!.toLowerCase() as 'allow' | 'deny';
    const target = m[2]!.replace(/^\[(.*)\]$/, '$1');
    const ruleText = `${action} ${m[2]}`;
    if (target.includes('/')) {
      const [addr, bits] = target.split('/');
      if (!parseAddress(addr!) || !/^\d{1,3}$/.test(bits!) || !ipaddr.isValidCIDR(target)) {
        throw new Error(`${where}: ${JSON.stringify(target)} is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
      }
      // An IPv4-mapped range is judged as the IPv4 range it maps, like addresses are.
      return { action, kind: 'cidr', text: ruleText, range: normaliseCidr(ipaddr.parseCIDR(target)) };
    }
    const addr = parseAddress(target);
    if (addr) return { action, kind: 'cidr', text: ruleText, range: [addr, addr.kind() === 'ipv4' ? 32 : 128] as Cidr };
    const host = normaliseHostname(target);
    if (host === '*') return { action, kind: 'host', text: ruleText, pattern: '*' };
    const name = host.startsWith('*.') ? host.slice(2) : host;
    const labels = name.split('.');
    if (name.length > 253 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
      throw new Error(`${where}: ${JSON.stringify(target)} is not a CIDR range, an IP address, a host name, *.suffix or *`);
    }
    return { action, kind: 'host', text: ruleText, pattern: host };
  });
}

const userRule = (r: NetworkRule) => `TASKBAY_AGENT_NETWORKS "${r.text}"`;

/**
 * A refusal decided by the host name alone, before it is resolved (a denying host rule with no
 * CIDR rule before it, or a default refused name); null when the addresses must be judged.
 */
export function refusalByName(rules: readonly NetworkRule[], rawHostname: string): Verdict | null {
  const hostname = normaliseHostname(rawHostname);
  for (const r of rules) {
    if (r.kind === 'cidr') return null;
    if (hostMatches(r.pattern, hostname)) return r.action === 'deny' ? { allowed: false, rule: userRule(r) } : null;
  }
  for (const d of DEFAULT_REFUSED_HOSTS) if (d.hosts.includes(hostname)) return { allowed: false, rule: `default: ${d.label}` };
  return null;
}

export interface Destination {
  /** The URL's host name. */
  hostname: string;
  /** One address it resolved to (or the literal address). */
  address: string;
  port: number;
}

export interface PolicyContext {
  rules: readonly NetworkRule[];
  protectedEndpoints: readonly ProtectedEndpoint[];
  /** This machine's interface addresses (loopback and unspecified are always local). */
  localAddresses: readonly Address[];
}

export function isLocalAddress(addr: Address, localAddresses: readonly Address[]): boolean {
  return LOOPBACK_AND_UNSPECIFIED.some((r) => inRange(addr, r)) || localAddresses.some((l) => sameAddress(l, addr));
}

function judgeAddress(hostname: string, addr: Address, port: number, ctx: PolicyContext): Verdict {
  for (const ep of ctx.protectedEndpoints) {
    if (ep.port !== port) continue;
    if (ep.hostnames.includes(hostname) || ep.addresses.some((a) => sameAddress(a, addr)) || (ep.anyLocal && isLocalAddress(addr, ctx.localAddresses))) {
      return { allowed: false, rule: `protected: ${ep.label}` };
    }
  }
  for (const r of ctx.rules) {
    const hit = r.kind === 'host' ? hostMatches(r.pattern, hostname) : inRange(addr, r.range);
    if (hit) return { allowed: r.action === 'allow', rule: userRule(r) };
  }
  for (const d of DEFAULT_REFUSED_HOSTS) if (d.hosts.includes(hostname)) return { allowed: false, rule: `default: ${d.label}` };
  for (const d of parsedDefaults) if (d.ranges.some((r) => inRange(addr, r))) return { allowed: false, rule: `default: ${d.label}` };
  return { allowed: true, rule: 'default: allowed' };
}

/** Judges one resolved address (and the IPv4 address it embeds, if any); an unparsable address is refused. */
export function judge(dest: Destination, ctx: PolicyContext): Verdict {
  const hostname = normaliseHostname(dest.hostname);
  const addr = parseAddress(dest.address);
  if (!addr) return { allowed: false, rule: 'not an IP address' };
  const verdict = judgeAddress(hostname, addr, dest.port, ctx);
  if (!verdict.allowed) return verdict;
  const embedded = embeddedIPv4(addr);
  if (embedded) {
    const inner = judgeAddress(hostname, embedded, dest.port, ctx);
    if (!inner.allowed) return inner;
  }
  return verdict;
}
