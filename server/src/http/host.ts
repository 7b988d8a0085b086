import { parseAddress } from '../net/policy.js';

// The Host a request names, for what is served to loopback clients only. A loopback client is
// not always a local program: a page of attacker.example whose name the attacker rebinds to
// 127.0.0.1 (DNS rebinding) reaches this port from the reviewer's own browser, as a "loopback
// client", but its requests still say `Host: attacker.example`. So a loopback-only answer also
// needs a Host that names this machine: localhost (and *.localhost, which browsers resolve to
// loopback themselves), a loopback address, or the host of TASKBAY_PUBLIC_URL.

/** Whether a Host header names this machine, or the configured public host (a missing or malformed Host does not). */
export function hostNamesThisMachine(host: string | undefined, publicUrl: string): boolean {
  if (!host) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname.replace(/\.$/, '');
  } catch {
    return false;
  }
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  if (parseAddress(hostname)?.range() === 'loopback') return true;
  try {
    return hostname === new URL(publicUrl).hostname.replace(/\.$/, '');
  } catch {
    return false;
  }
}
