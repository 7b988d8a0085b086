import { describe, expect, it } from 'vitest';
import { mayScrape } from '../../src/observability/routes.js';

// Who may read /metrics (docs/SECURITY.md): without TASKBAY_METRICS_TOKEN, loopback clients only
// (IPv4, IPv6, IPv4-mapped IPv6); with it, a request bearing it, from anywhere, loopback included.
// The integration test (observability.test.ts) scrapes over loopback; other addresses are judged here.

const request = (remoteAddress: string | undefined, authorization?: string) => ({
  headers: authorization ? { authorization } : {},
  socket: { remoteAddress },
});

describe('mayScrape', () => {
  it('without a token: loopback yes, anything else 403', () => {
    for (const local of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(mayScrape(null, request(local)), local).toEqual({ ok: true });
    for (const remote of ['10.0.0.5', '192.168.1.2', '2001:db8::1', '::ffff:10.0.0.5', '0.0.0.0', undefined]) {
      expect(mayScrape(null, request(remote)), String(remote)).toMatchObject({ ok: false, status: 403 });
    }
    // A bearer header does not stand in for a token that is not configured.
    expect(mayScrape(null, request('10.0.0.5', 'Bearer anything-at-all-123'))).toMatchObject({ ok: false, status: 403 });
  });

  it('with a token: the right bearer from anywhere; otherwise 401, loopback included', () => {
    const token = 'metrics-secret-0123456789';
    expect(mayScrape(token, request('10.0.0.5', `Bearer ${token}`))).toEqual({ ok: true });
    expect(mayScrape(token, request('127.0.0.1', `Bearer ${token}`))).toEqual({ ok: true });
    for (const [address, auth] of [
      ['127.0.0.1', undefined],
      ['10.0.0.5', undefined],
      ['10.0.0.5', `Bearer ${token}x`],
      ['10.0.0.5', `Bearer ${token.slice(0, -1)}`],
      ['10.0.0.5', `Basic ${token}`],
    ] as const) {
      expect(mayScrape(token, request(address, auth)), `${address} ${auth}`).toMatchObject({ ok: false, status: 401 });
    }
  });
});
