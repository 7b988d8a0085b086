import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { EVENTS_CHANNEL } from '../../../src/audit/log.js';
import { createTaskbayPubSub, type ApprovalEventPayload } from '../../../src/events/pubsub.js';
import { LISTENER_APPLICATION_NAME, listenForEvents } from '../../../src/events/listener.js';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { createMember, eventually, OPS, subscribe, type GqlResult, type TestInstance, rawId, ok } from '../../support/harness.js';
import { startWithFixtureAgent, stopAll } from '../../support/fixture-agent.js';

// docs/ARCHITECTURE.md "Cross-instance events": every instance LISTENs and feeds its local pub/sub. When the
// LISTEN connection is cut (a Postgres restart, a failover), the instance must listen again, and
// the events committed while it was not listening reach live subscribers once, in order.
let t: TestInstance;
let agent: FixtureAgent;
beforeAll(async () => {
  ({ t, fixture: agent } = await startWithFixtureAgent());
});
afterAll(() => stopAll(t, agent));

const listeners = () =>
  t.sql<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and application_name = $1`, [LISTENER_APPLICATION_NAME]);

describe('the LISTEN loop', () => {
  it('listens again after its connection is terminated, and committed events reach subscribers', async () => {
    const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
    const agentId = reg.data.registerAgent.id;
    const [before] = await eventually(async () => ((await listeners()).length ? listeners() : null));
    await t.sql('select pg_terminate_backend($1)', [before!.pid]);
    const [after] = await eventually(async () => {
      const l = await listeners();
      return l.length && l[0]!.pid !== before!.pid ? l : null;
    });
    expect(after!.pid).not.toBe(before!.pid);

    const received: string[] = [];
    const sub = t.instance.pubsub.subscribe('approval');
    const reading = (async () => {
      for await (const e of sub) {
        received.push(e.type);
        if (e.type === 'approval.requested') break;
      }
    })();
    const r = await t.gql(OPS.startTask, { agentId, text: 'approve' });
    expect(r.errors).toBeUndefined();
    await eventually(async () => received.includes('approval.requested'));
    await reading;
  });
});

const CREATE = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "go" } }) { id revision digest } }`;

describe('events committed while the LISTEN connection is down', () => {
  it('are replayed after it listens again: with the connection terminated amid a burst of 100 openings (each then rejected), every subscriber sees every event exactly once, each approval in seq order', async () => {
    const decider = await createMember(t, { role: 'ADMIN' });

    // Three subscribers: two over graphql-ws (requests, and every change), one in process (with seqs).
    const requested = subscribe(t.ws(), `subscription { approvalRequested { id } }`);
    const changed = subscribe(t.ws(), `subscription { approvalChanged { id } }`);
    const local: ApprovalEventPayload[] = [];
    const feed = t.instance.pubsub.subscribe('approval');
    const consuming = (async () => {
      for await (const e of feed) local.push(e);
    })();
    const idsOf = (sub: { received: GqlResult[] }, field: string) => sub.received.map((e) => e.data?.[field]?.id as string);
    const seenByAll = (id: string) =>
      idsOf(requested, 'approvalRequested').includes(id) && idsOf(changed, 'approvalChanged').includes(id) && local.some((e) => e.approvalId === rawId(id));

    // graphql-ws has no subscription ack: the subscribers are live once a probe reaches all three.
    let live = false;
    for (let i = 0; i < 10 && !live; i++) {
      const probe = ok(await t.gql(CREATE, { title: `probe ${i}` })).createApproval;
      live = await eventually(async () => seenByAll(probe.id), 1000, 20).catch(() => false);
    }
    expect(live).toBe(true);

    const [before] = await listeners();
    expect(before).toBeDefined();
    let terminated: Promise<unknown> | null = null;
    let settled = 0;
    const burst = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const a = ok(await t.gql(CREATE, { title: `burst ${i}` })).createApproval;
        ok(await t.gql(OPS.reject, { id: a.id, revision: a.revision, digest: a.digest }, decider.token));
        // Half way through, cut the LISTEN connection; the other half commits around the gap.
        if (++settled === 50) terminated = t.sql('select pg_terminate_backend($1)', [before!.pid]);
        return a.id as string;
      }),
    );
    expect(await terminated).toEqual([{ pg_terminate_backend: true }]);
    const [after] = await eventually(async () => {
      const l = await listeners();
      return l.length && l[0]!.pid !== before!.pid ? l : null;
    });
    expect(after!.pid).not.toBe(before!.pid);

    // Events are published in order: once a request opened after the burst reached every
    // subscriber, whatever the burst was going to publish (duplicates included) has been.
    const last = ok(await t.gql(CREATE, { title: 'after the burst' })).createApproval;
    await eventually(async () => seenByAll(last.id), 15_000, 20);
    await feed.return?.(undefined);
    await consuming;
    requested.dispose();
    changed.dispose();

    // What each approval's stream holds, from the database.
    const rows = await t.sql<{ stream: string; seq: string; type: string }>(
      `select stream, seq, type from audit_event where stream = any($1::text[]) order by seq`,
      [burst.map((id) => `approval:${rawId(id)}`)],
    );
    const expected = new Map<string, { seq: number; type: string }[]>();
    for (const r of rows) {
      const id = r.stream.slice('approval:'.length);
      expected.set(id, [...(expected.get(id) ?? []), { seq: Number(r.seq), type: r.type }]);
    }
    expect(expected.size).toBe(100);
    for (const events of expected.values()) expect(events.map((e) => e.type)).toEqual(['approval.requested', 'approval.decided']);

    const count = (ids: string[]) => {
      const n = new Map<string, number>();
      for (const id of ids) n.set(id, (n.get(id) ?? 0) + 1);
      return n;
    };
    const requestedCounts = count(idsOf(requested, 'approvalRequested').map(rawId));
    const changedCounts = count(idsOf(changed, 'approvalChanged').map(rawId));
    for (const [id, events] of expected) {
      expect({ id, requested: requestedCounts.get(id), changed: changedCounts.get(id) }).toEqual({ id, requested: 1, changed: events.length });
      // In process: exactly the stream's events, in seq order.
      expect({ id, events: local.filter((e) => e.approvalId === id).map((e) => ({ seq: e.seq, type: e.type })) }).toEqual({ id, events });
    }
  }, 60_000);
});

describe('a freshness round trip (sync) while the LISTEN loop loads events', () => {
  it('is answered at once, not after the load: the loads run on their own connection', async () => {
    // A second listener on the same database, so the test holds its loads without touching the instance's.
    const listener = listenForEvents(t.appUrl, createTaskbayPubSub(), { log: () => {} });
    const locker = new pg.Client({ connectionString: t.databaseUrl });
    await locker.connect();
    try {
      await listener.ready;
      // Every read of audit_event now waits for this transaction; so does the load of a notified seq.
      await locker.query('begin');
      await locker.query('lock table audit_event in access exclusive mode');
      await t.sql(`select pg_notify('${EVENTS_CHANNEL}', '1')`);
      await eventually(async () => {
        const [waiting] = await t.sql<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%from audit_event where seq = any%'`,
        );
        return waiting!.n > 0 ? true : null;
      });
      // A generation (listening, answered) rather than null (SYNC_TIMEOUT_MS passed with the
      // LISTEN connection's answer queued behind the load).
      expect(await listener.sync()).toEqual(expect.any(Number));
    } finally {
      await locker.query('rollback').catch(() => {});
      await locker.end();
      await listener.close();
    }
  });
});
