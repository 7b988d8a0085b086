import ipaddr from 'ipaddr.js';

// The agent network policy: which addresses Taskbay may connect to when it talks to an agent.
// Pure functions only; agent-network.ts resolves names and applies this to every connection.
//
// Order of judgement for one resolved address (first match wins):
//   1. never allowed, whatever the rules: the protected endpoints (the database's own address and
//      port, Taskbay's own port on any local address), cloud metadata endpoints and link-local
//      ranges (where metadata services and other host-only endpoints live). An allow rule for a
//      host or a range must not open them by accident, and nothing legitimate is an agent there.
//   2. TASKBAY_AGENT_NETWORKS, in the order written (host rules match the URL's host name, CIDR
//      rules the resolved address), so an admin can allow or deny anything the defaults decide.
//   3. the defaults: unspecified, multicast, broadcast and reserved are refused; everything else
//      (loopback and private ranges included) is allowed.
// An IPv6 address that carries an IPv4 address to another host (NAT64, 6to4, Teredo, ISATAP,
// IPv4-mapped/-compatible/-translated) is judged as that IPv4 address too.

export type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

export type NetworkRule =
  | { action: 'allow' | 'deny'; kind: 'cidr'; text: string; range: Cidr }
  | { action: 'allow' | 'deny'; kind: 'host'; text: string; pattern: string };

export interface Verdict {
  allowed: boolean;
  /** Which rule decided, for messages: `TASKBAY_AGENT_NETWORKS "deny 10.0.0.0/8"` or `protected: link-local`. */
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

/** Refused whatever TASKBAY_AGENT_NETWORKS says (step 1 above). */
const NEVER_ALLOWED_RANGES: { label: string; cidrs: string[] }[] = [
  // 169.254.169.254: AWS, GCP, Azure, OCI, DigitalOcean, OpenStack; 169.254.170.2 and .23: AWS
  // ECS task metadata and EKS Pod Identity; fd00:ec2::254 and ::23: their AWS IPv6 forms;
  // fd20:ce::254: GCP's IPv6 metadata server; 100.100.100.200: Alibaba Cloud; 168.63.129.16:
  // Azure's host endpoint (WireServer); 192.0.0.192: Oracle Cloud's classic metadata address.
  {
    label: 'cloud metadata',
    cidrs: [
      '169.254.169.254/32',
      '169.254.170.2/32',
      '169.254.170.23/32',
      'fd00:ec2::254/128',
      'fd00:ec2::23/128',
      'fd20:ce::254/128',
      '100.100.100.200/32',
      '168.63.129.16/32',
      '192.0.0.192/32',
    ],
  },
  { label: 'link-local', cidrs: ['169.254.0.0/16', 'fe80::/10'] },
];
const NEVER_ALLOWED_HOSTS: { label: string; hosts: string[] }[] = [{ label: 'cloud metadata', hosts: ['metadata.google.internal'] }];

/** Refused unless a rule allows them (step 3 above). */
const DEFAULT_REFUSED_RANGES: { label: string; cidrs: string[] }[] = [
  // 0.0.0.0 and :: reach this machine on Linux.
  { label: 'unspecified', cidrs: ['0.0.0.0/8', '::/128'] },
  { label: 'multicast', cidrs: ['224.0.0.0/4', 'ff00::/8'] },
  { label: 'broadcast and reserved', cidrs: ['240.0.0.0/4'] },
];

const parseRanges = (list: { label: string; cidrs: string[] }[]) =>
  list.map((d) => ({ label: d.label, ranges: d.cidrs.map((c) => normaliseCidr(ipaddr.parseCIDR(c))) }));
const parsedNeverAllowed = parseRanges(NEVER_ALLOWED_RANGES);
const parsedDefaults = parseRanges(DEFAULT_REFUSED_RANGES);
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

const cidr = (text: string) => ipaddr.parseCIDR(text) as Cidr;
const NAT64_WELL_KNOWN = cidr('64:ff9b::/96');
const NAT64_LOCAL_USE = cidr('64:ff9b:1::/48');
const IPV4_TRANSLATED = cidr('::ffff:0:0:0/96');
const IPV4_COMPATIBLE = cidr('::/96');
const SIX_TO_FOUR = cidr('2002::/16');
const TEREDO = cidr('2001::/32');

/**
 * The IPv4 addresses an IPv6 address may carry to another host through a translator or a
 * tunnel: each is judged too, so 64:ff9b::a9fe:a9fe cannot reach 169.254.169.254.
 * - NAT64, the well-known prefix 64:ff9b::/96 (RFC 6052): the last 32 bits.
 * - NAT64, the local-use prefix 64:ff9b:1::/48 (RFC 8215): a network uses a /48, /56, /64 or /96
 *   prefix inside it, and which one is not visible in the address, so every place RFC 6052
 *   allows for those lengths (bits 64-71 skipped) is judged, as not `exact`.
 * - IPv4-translated ::ffff:0:a.b.c.d (RFC 2765) and IPv4-compatible ::a.b.c.d (RFC 4291; not ::
 *   and ::1): the last 32 bits.
 * - 6to4 2002:a.b.c.d::/48 (RFC 3056): bits 16-47.
 * - Teredo 2001:0::/32 (RFC 4380): the client's address, the last 32 bits inverted (the
 *   "obfuscated" form), where a relay sends the packet; and, as not `exact`, the server's
 *   (bits 32-63), which the client first talks to.
 * - ISATAP (RFC 5214), any prefix: an interface id of 0000:5efe, 0200:5efe (or with the group
 *   bit) followed by the IPv4 address of the tunnel's end.
 */
export function embeddedIPv4(addr: Address): { address: ipaddr.IPv4; exact: boolean }[] {
  if (addr.kind() !== 'ipv6') return [];
  const v6 = addr as ipaddr.IPv6;
  const b = v6.toByteArray();
  const v4 = (...at: number[]) => ({ address: new ipaddr.IPv4(at.map((i) => b[i]!)), exact: true });
  const out: { address: ipaddr.IPv4; exact: boolean }[] = [];
  if (inRange(v6, NAT64_WELL_KNOWN) || inRange(v6, IPV4_TRANSLATED)) out.push(v4(12, 13, 14, 15));
  if (inRange(v6, NAT64_LOCAL_USE)) {
    for (const at of [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ])
      out.push({ ...v4(...at), exact: false });
  }
  if (inRange(v6, IPV4_COMPATIBLE) && b.slice(12).some((x, i) => (i < 3 ? x !== 0 : x > 1))) out.push(v4(12, 13, 14, 15));
  if (inRange(v6, SIX_TO_FOUR)) out.push(v4(2, 3, 4, 5));
  if (inRange(v6, TEREDO)) out.push({ address: new ipaddr.IPv4(b.slice(12).map((x) => x ^ 0xff)), exact: true }, { ...v4(4, 5, 6, 7), exact: false });
  if ((b[8]! & 0xfc) === 0 && b[9] === 0 && b[10] === 0x5e && b[11] === 0xfe) out.push(v4(12, 13, 14, 15));
  return out;
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

function neverAllowedName(hostname: string): Verdict | null {
  for (const d of NEVER_ALLOWED_HOSTS) if (d.hosts.includes(hostname)) return { allowed: false, rule: `protected: ${d.label}` };
  return null;
}

/**
 * A refusal decided by the host name alone, before it is resolved (a denying host rule with no
 * CIDR rule before it, or a default refused name); null when the addresses must be judged.
 */
export function refusalByName(rules: readonly NetworkRule[], rawHostname: string): Verdict | null {
  const hostname = normaliseHostname(rawHostname);
  const never = neverAllowedName(hostname);
  if (never) return never;
  for (const r of rules) {
    if (r.kind === 'cidr') return null;
    if (hostMatches(r.pattern, hostname)) return r.action === 'deny' ? { allowed: false, rule: userRule(r) } : null;
  }
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

/** Step 1: the refusal no rule can lift, or null. */
function neverAllowed(hostname: string, addr: Address, port: number, ctx: PolicyContext): Verdict | null {
  for (const ep of ctx.protectedEndpoints) {
    if (ep.port !== port) continue;
    if (ep.hostnames.includes(hostname) || ep.addresses.some((a) => sameAddress(a, addr)) || (ep.anyLocal && isLocalAddress(addr, ctx.localAddresses))) {
      return { allowed: false, rule: `protected: ${ep.label}` };
    }
  }
  const byName = neverAllowedName(hostname);
  if (byName) return byName;
  for (const d of parsedNeverAllowed) if (d.ranges.some((r) => inRange(addr, r))) return { allowed: false, rule: `protected: ${d.label}` };
  return null;
}

function judgeAddress(hostname: string, addr: Address, port: number, ctx: PolicyContext): Verdict {
  const never = neverAllowed(hostname, addr, port, ctx);
  if (never) return never;
  for (const r of ctx.rules) {
    const hit = r.kind === 'host' ? hostMatches(r.pattern, hostname) : inRange(addr, r.range);
    if (hit) return { allowed: r.action === 'allow', rule: userRule(r) };
  }
  for (const d of parsedDefaults) if (d.ranges.some((r) => inRange(addr, r))) return { allowed: false, rule: `default: ${d.label}` };
  return { allowed: true, rule: 'default: allowed' };
}

/** Judges one resolved address (and every IPv4 address it may embed); an unparsable address is refused. */
export function judge(dest: Destination, ctx: PolicyContext): Verdict {
  const hostname = normaliseHostname(dest.hostname);
  const addr = parseAddress(dest.address);
  if (!addr) return { allowed: false, rule: 'not an IP address' };
  const verdict = judgeAddress(hostname, addr, dest.port, ctx);
  if (!verdict.allowed) return verdict;
  for (const { address, exact } of embeddedIPv4(addr)) {
    // A place that only may hold the IPv4 address is held to step 1 alone: a refusal by a rule or
    // a default there would refuse addresses that carry no such IPv4 address at all.
    const inner = exact ? judgeAddress(hostname, address, dest.port, ctx) : neverAllowed(hostname, address, dest.port, ctx);
    if (inner && !inner.allowed) return inner;
  }
  return verdict;
}
