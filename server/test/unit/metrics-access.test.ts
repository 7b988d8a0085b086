import { describe, expect, it } from 'vitest';
import { hostNamesThisMachine } from '../../src/http/host.js';
import { mayScrape } from '../../src/observability/routes.js';

// Who may read /metrics (docs/SECURITY.md): without TASKBAY_METRICS_TOKEN, loopback clients only
// (IPv4, IPv6, IPv4-mapped IPv6) whose Host names this machine; with it, a request bearing it,
// from anywhere, loopback included. The integration test (observability/metrics-readyz-tracing.test.ts) scrapes over
// loopback, and sends the DNS-rebinding request; other addresses are judged here.

const PUBLIC_URL = 'https://taskbay.example.com';
const request = (remoteAddress: string | undefined, authorization?: string, host = '127.0.0.1:4000') => ({
  headers: { host, ...(authorization ? { authorization } : {}) },
  socket: { remoteAddress },
});

describe('mayScrape', () => {
  it('without a token: loopback yes, anything else 403', () => {
    for (const local of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect(mayScrape(null, request(local), PUBLIC_URL), local).toEqual({ ok: true });
    for (const remote of ['10.0.0.5', '192.168.1.2', '2001:db8::1', '::ffff:10.0.0.5', '0.0.0.0', undefined]) {
      expect(mayScrape(null, request(remote), PUBLIC_URL), String(remote)).toMatchObject({ ok: false, status: 403 });
    }
    // A bearer header does not stand in for a token that is not configured.
    expect(mayScrape(null, request('10.0.0.5', 'Bearer anything-at-all-123'), PUBLIC_URL)).toMatchObject({ ok: false, status: 403 });
  });

  // Issue 22, finding 9: DNS rebinding. A page whose name now resolves to 127.0.0.1 reads
  // /metrics from the reviewer's browser as a loopback client, naming its own host.
  it('without a token: a loopback client whose Host is not this machine (a rebound name) is 403', () => {
    for (const host of [
      'attacker.example',
      'attacker.example:4000',
      '127.0.0.1.attacker.example:4000',
      'localhost.attacker.example',
      'taskbay.example.com.evil',
      '',
      'bad host',
    ]) {
      expect(mayScrape(null, request('127.0.0.1', undefined, host), PUBLIC_URL), host).toMatchObject({ ok: false, status: 403 });
    }
    for (const host of [
      '127.0.0.1:4000',
      '127.0.0.1',
      '127.1.2.3:80',
      'localhost:4000',
      'LOCALHOST',
      'localhost.',
      'metrics.localhost:4000',
      '[::1]:4000',
      '[::ffff:127.0.0.1]:4000',
      'taskbay.example.com',
      'Taskbay.Example.Com:443',
    ]) {
      expect(mayScrape(null, request('127.0.0.1', undefined, host), PUBLIC_URL), host).toEqual({ ok: true });
    }
  });

  it('with a token: the right bearer from anywhere; otherwise 401, loopback included', () => {
    const token = 'metrics-secret-0123456789';
    expect(mayScrape(token, request('10.0.0.5', `Bearer ${token}`), PUBLIC_URL)).toEqual({ ok: true });
    expect(mayScrape(token, request('127.0.0.1', `Bearer ${token}`), PUBLIC_URL)).toEqual({ ok: true });
    // A rebound page cannot know the token; with it the Host does not matter (a proxy may name anything).
    expect(mayScrape(token, request('127.0.0.1', `Bearer ${token}`, 'metrics.internal'), PUBLIC_URL)).toEqual({ ok: true });
    for (const [address, auth] of [
      ['127.0.0.1', undefined],
      ['10.0.0.5', undefined],
      ['10.0.0.5', `Bearer ${token}x`],
      ['10.0.0.5', `Bearer ${token.slice(0, -1)}`],
      ['10.0.0.5', `Basic ${token}`],
    ] as const) {
      expect(mayScrape(token, request(address, auth), PUBLIC_URL), `${address} ${auth}`).toMatchObject({ ok: false, status: 401 });
    }
  });
});

describe('hostNamesThisMachine', () => {
  it('a missing Host names nothing', () => {
    expect(hostNamesThisMachine(undefined, PUBLIC_URL)).toBe(false);
  });
});
