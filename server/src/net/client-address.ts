import ipaddr from 'ipaddr.js';

/**
 * One key per client: an IPv4 address (IPv4-mapped IPv6 included), or the /64 of an IPv6
 * address (one host usually holds a whole /64). Requests without a socket address (in-process
 * calls) share the key "unknown".
 */
export function addressKeyOf(address: string | null | undefined): string {
  if (!address || !ipaddr.isValid(address)) return 'unknown';
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
