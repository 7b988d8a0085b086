// `npm run bench`, the audit log at scale (issue 11: "no request blocks the event loop for more
// than 50 ms at 100,000 audit events"). The tenant's log is filled to the given size with signed
// events written as appendEvents writes them (the instance's own key, from its data directory),
// then: auditChain before the worker verified anything; the full verification an admin starts,
// with `{ __typename }` answered meanwhile; auditChain after it; and auditChain with the most
// events it verifies on a request (REQUEST_TAIL_LIMIT); the export of the whole log. The server's event-loop delay is read
// around each (perf_hooks.monitorEventLoopDelay in the server process).

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { eventHash } from '../src/audit/log.js';
import { auditSigner, readKeyFile, type AuditSigner } from '../src/audit/signing.js';
import { REQUEST_TAIL_LIMIT } from '../src/audit/verification.js';

export interface AuditBench {
  ownerUrl: string;
  /** The server's data directory (its audit signing key). */
  dataDir: string;
  gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** The server's event-loop delay since the last call, in ms (and resets it). */
  eventLoop(): Promise<{ maxMs: number; p99Ms: number }>;
  /** GET /api/audit/export, read to the end: its size in bytes. */
  exportBytes(): Promise<number>;
  pct(xs: number[], p: number): number;
}

const CHAIN = '{ auditChain { ok events verifiedThroughSeq pendingEvents fullVerification { state processed total startedAt finishedAt } } }';
const STREAM_EVENTS = 10;
const BATCH = 5000;
const r1 = (x: number) => Math.round(x * 10) / 10;

/** n signed events over n / 10 task streams of the tenant, each stream a valid chain, in seq order. */
export async function appendSigned(owner: pg.Client, signer: AuditSigner, tenantId: string, n: number): Promise<void> {
  const streams = Array.from({ length: Math.max(1, Math.ceil(n / STREAM_EVENTS)) }, () => ({ name: `task:${randomUUID()}`, head: null as string | null }));
  const at = Date.now() - n;
  for (let from = 0; from < n; from += BATCH) {
    const rows = {
      id: [] as string[],
      stream: [] as string[],
      at: [] as string[],
      data: [] as string[],
      prev: [] as (string | null)[],
      hash: [] as string[],
      sig: [] as string[],
    };
    for (let i = from; i < Math.min(n, from + BATCH); i++) {
      const s = streams[i % streams.length]!;
      const e = {
        id: randomUUID(),
        tenantId,
        stream: s.name,
        type: 'bench.observed',
        actorType: 'system' as const,
        actorId: null,
        at: new Date(at + i),
        data: { step: i, state: 'TASK_STATE_WORKING', note: 'bench event of realistic size' },
        prevHash: s.head,
      };
      const hash = eventHash(e);
      rows.id.push(e.id);
      rows.stream.push(e.stream);
      rows.at.push(e.at.toISOString());
      rows.data.push(JSON.stringify(e.data));
      rows.prev.push(e.prevHash);
      rows.hash.push(hash);
      rows.sig.push(signer.sign('event', hash));
      s.head = hash;
    }
    await owner.query(
      `insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash, sig, key_id)
       select u.id, $1, u.stream, 'bench.observed', 'system', null, u.at, u.data, u.prev_hash, u.hash, u.sig, $2
         from unnest($3::uuid[], $4::text[], $5::timestamptz[], $6::jsonb[], $7::text[], $8::text[], $9::text[])
              with ordinality as u(id, stream, at, data, prev_hash, hash, sig, ord)
        order by u.ord`,
      [tenantId, signer.keyId, rows.id, rows.stream, rows.at, rows.data, rows.prev, rows.hash, rows.sig],
    );
  }
}

export async function auditAtScale(b: AuditBench, events: number, timeoutMs: number) {
  const key = readKeyFile(b.dataDir);
  if (!key) throw new Error(`no audit signing key in ${b.dataDir}`);
  const signer = auditSigner(key);
  const owner = new pg.Client({ connectionString: b.ownerUrl });
  await owner.connect();
  try {
    const [{ tenant_id: tenantId }] = (await owner.query(`select tenant_id from app_user where role = 'ADMIN' limit 1`)).rows;
    const have = Number((await owner.query('select count(*) from audit_event where tenant_id = $1', [tenantId])).rows[0].count);
    let t0 = performance.now();
    await appendSigned(owner, signer, tenantId, Math.max(0, events - have));
    await owner.query('analyze audit_event');
    const fillSeconds = r1((performance.now() - t0) / 1000);

    // Before the worker verified anything: the answer says how far it reaches.
    await b.eventLoop();
    t0 = performance.now();
    const before = (await b.gql(CHAIN)).auditChain;
    const unverified = { ms: r1(performance.now() - t0), pendingEvents: before.pendingEvents, loop: await b.eventLoop() };

    // The full verification an admin starts, with the server answering { __typename } meanwhile.
    await b.gql('mutation { verifyAuditChain { fullVerification { state } } }');
    const pings: number[] = [];
    let done: any = null;
    const deadline = performance.now() + timeoutMs;
    const pinging = (async () => {
      while (!done && performance.now() < deadline) {
        const s = performance.now();
        await b.gql('{ __typename }');
        pings.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    while (!done && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      const c = (await b.gql(CHAIN)).auditChain;
      if (c.fullVerification?.state === 'DONE') done = c;
    }
    await pinging;
    if (!done) throw new Error(`the full verification of ${events} events did not finish within ${timeoutMs} ms`);
    if (!done.ok) throw new Error('auditChain is not ok after the full verification');
    const f = done.fullVerification;
    const full = {
      events: f.total,
      seconds: r1((Date.parse(f.finishedAt) - Date.parse(f.startedAt)) / 1000),
      loop: await b.eventLoop(),
      typenameDuring: { n: pings.length, p50Ms: r1(b.pct(pings, 50)), p99Ms: r1(b.pct(pings, 99)), maxMs: r1(Math.max(...pings)) },
    };

    // Answered from the stored verification.
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const s = performance.now();
      await b.gql(CHAIN);
      times.push(performance.now() - s);
    }
    const verified = { events: done.events, p50Ms: r1(b.pct(times, 50)), maxMs: r1(Math.max(...times)), loop: await b.eventLoop() };

    // With the most events it verifies on a request (the first time: no signature checked before).
    await appendSigned(owner, signer, tenantId, REQUEST_TAIL_LIMIT);
    await b.eventLoop();
    t0 = performance.now();
    const c = (await b.gql(CHAIN)).auditChain;
    if (!c.ok || c.pendingEvents !== 0) throw new Error('auditChain did not verify the newest events');
    const tail = { events: REQUEST_TAIL_LIMIT, ms: r1(performance.now() - t0), loop: await b.eventLoop() };

    // The whole log exported (written a page at a time).
    t0 = performance.now();
    const bytes = await b.exportBytes();
    const exported = { bytes, seconds: r1((performance.now() - t0) / 1000), loop: await b.eventLoop() };
    return { events, fillSeconds, unverified, full, verified, tail, exported };
  } finally {
    await owner.end();
  }
}
