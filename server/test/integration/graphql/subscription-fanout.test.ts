import { EventSourceParserStream } from 'eventsource-parser/stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEventListenerConnection } from '../../../src/events/listener.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { sharedEventStats } from '../../../src/graphql/shared-events.js';
import {
  appendProbeEvent,
  createMember,
  eventually,
  OPS,
  startTestInstance,
  subscribe,
  type GqlResult,
  type TestInstance,
  rawId,
} from '../../support/harness.js';

// Issue 11, fan-out: an approval event is loaded once per instance, however many subscribers
// watch; each subscriber's tenant and grants are checked in memory, with grants read as of the
// event (a withdrawn grant stops events at once); the selection is executed once per group of
// subscribers that answer its viewer questions alike (graphql/shared-events.ts), and each
// subscriber still gets its own answer. SQL is counted by wrapping pg's Client#query, which
// every connection of the instance goes through (the LISTEN connection's own statement per
// notification is left out: it is per event by design); executions by the fan-out's counter.

let t: TestInstance;
let agent: FixtureAgent;
let agentId: string;

const SELECTION = `subscription { approvalRequested { id title status risk requester { id } agent { id name } } }`;
const CREATE = `mutation($title: String!, $agentId: ID) { createApproval(input: { title: $title, agentId: $agentId, action: { kind: "send_message", text: "x" } }) { id } }`;

let counting = false;
let statements: string[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  agent = await startFixtureAgent();
  // No job worker: its polling would be counted too.
  t = await startTestInstance({ worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } });
  const r = await t.gql(OPS.register, { url: agent.cardUrl('approver') });
  expect(r.errors).toBeUndefined();
  agentId = r.data.registerAgent.id;
  pg.Client.prototype.query = function (this: pg.Client & { connectionParameters?: { application_name?: string } }, ...args: any[]) {
    if (counting && !isEventListenerConnection(this.connectionParameters?.application_name)) {
      const q = args[0];
      statements.push(typeof q === 'string' ? q : String(q?.text ?? q));
    }
    return (originalQuery as any).apply(this, args);
  } as typeof pg.Client.prototype.query;
});

afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await t?.stop();
  await agent?.close();
});

async function create(title: string, token = t.adminToken): Promise<string> {
  const r = await t.gql(CREATE, { title, agentId }, token);
  expect(r.errors).toBeUndefined();
  return r.data.createApproval.id;
}

/** A subscription that records every approval id it receives, in order. */
function watch(token: string) {
  const ids: string[] = [];
  const listeners = new Set<() => void>();
  const dispose = t.ws(token).subscribe<any>(
    { query: SELECTION },
    {
      next: (e) => {
        if (e.errors) ids.push(`error: ${JSON.stringify(e.errors)}`);
        else {
          const a = e.data.approvalRequested;
          // The fields were resolved (the agent through the shared loaders).
          ids.push(a.agent?.id === agentId && typeof a.agent.name === 'string' ? a.id : `unexpected: ${JSON.stringify(a)}`);
        }
        for (const l of listeners) l();
      },
      error: (e) => ids.push(`error: ${String(e)}`),
      complete: () => {},
    },
  );
  return {
    ids,
    dispose,
    /** Resolves once `id` was received, false after timeoutMs. */
    has(id: string, timeoutMs = 10_000): Promise<boolean> {
      if (ids.includes(id)) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (v: boolean) => {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(v);
        };
        const check = () => ids.includes(id) && done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        listeners.add(check);
      });
    },
  };
}
type Sub = ReturnType<typeof watch>;

/**
 * graphql-ws has no subscription ack: every subscriber is live once one probe event reached all
 * of them. A subscription still registering misses a probe, so probes go out until one arrives
 * everywhere (at most 20).
 */
async function allLive(subs: Sub[]): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const id = await create('probe');
    if ((await Promise.all(subs.map((s) => s.has(id, 2000)))).every(Boolean)) return;
  }
  throw new Error('the subscriptions never all received a probe');
}

/**
 * The statements run from just before the creating mutation until every subscriber has the
 * event: the mutation's own (the same each time) and what the fan-out costs, and the
 * executions of the subscription's selection. Counting starts before the mutation because the
 * fan-out may begin before its answer is read here.
 */
async function costOfOneEvent(subs: Sub[]): Promise<{ statements: string[]; executions: number }> {
  statements = [];
  counting = true;
  const executionsBefore = sharedEventStats.executions;
  try {
    const id = await create('counted');
    expect(await Promise.all(subs.map((s) => s.has(id)))).toEqual(subs.map(() => true));
    return { statements, executions: sharedEventStats.executions - executionsBefore };
  } finally {
    counting = false;
  }
}

describe('approval subscriptions at scale', () => {
  it('the SQL run per event does not grow with the number of subscribers (members and admins)', async () => {
    const members = await Promise.all([createMember(t), createMember(t), createMember(t)]);
    for (const m of members) expect((await t.gql(OPS.grant, { userId: m.id, agentId, permission: 'VIEW' })).errors).toBeUndefined();
    const tokens = [t.adminToken, ...members.map((m) => m.token)];

    const few = tokens.map((tok) => watch(tok));
    await allLive(few);
    const forFew = await costOfOneEvent(few);

    const more = Array.from({ length: 24 }, (_, i) => watch(tokens[i % tokens.length]!));
    await allLive([...few, ...more]);
    const forMore = await costOfOneEvent([...few, ...more]);

    // The same with 4 or 28 subscribers: the fan-out loads the approval once, the members'
    // grants in one batch, and the requester and agent the fields select once each.
    expect(forMore.statements.length, forMore.statements.join('\n')).toBe(forFew.statements.length);
    expect(forMore.statements.filter((q) => q.includes('agent_grant'))).toHaveLength(1);
    // The selection is executed once for the admin (the requester) and once for the three
    // members (they answer its questions alike: not the requester, VIEW on the agent), with 4
    // subscribers as with 28.
    expect(forFew.executions).toBe(2);
    expect(forMore.executions).toBe(2);
    for (const s of [...few, ...more]) s.dispose();
  });

  it('a withdrawn grant stops events at once; a new grant lets them through again', async () => {
    const member = await createMember(t);
    const grant = async () => expect((await t.gql(OPS.grant, { userId: member.id, agentId, permission: 'VIEW' })).errors).toBeUndefined();
    await grant();
    const watcher = watch(member.token);
    const control = watch(t.adminToken);
    await allLive([watcher, control]);

    // No revoke mutation exists: the grant row goes away as a revoke would remove it.
    await t.sql(`delete from agent_grant where user_id = (select id from app_user where email = $1)`, [member.email]);
    const seenBefore = watcher.ids.length;
    const hidden = await create('after the grant was withdrawn');
    expect(await control.has(hidden)).toBe(true);

    await grant();
    const shown = await create('after the grant was given again');
    expect(await control.has(shown)).toBe(true);
    expect(await watcher.has(shown)).toBe(true);
    // Events reach a subscription in order: after the probe the member received only the one
    // created after the new grant, so the one in between was withheld.
    expect(watcher.ids.slice(seenBefore)).toEqual([shown]);
    expect(control.ids.slice(-2)).toEqual([hidden, shown]);
    watcher.dispose();
    control.dispose();
  });
});

describe('one document, several viewers: each its own answer', () => {
  // What the viewer decides inside this selection: whether it may see the approval that
  // superseded this one (an admin-only request here), Agent.lastError (admins only), and
  // User.grants (the person themself and admins).
  const DOC = `subscription($id: ID) { approvalChanged(approvalId: $id) {
    id title supersededBy { id } agent { id lastError { kind message } } requester { id grants { id } } } }`;
  const NO_GRANTS = `subscription($id: ID) { approvalChanged(approvalId: $id) { id title supersededBy { id } agent { id lastError { kind message } } } }`;

  it('admins, the requester and another member watching one approval get their own fields', async () => {
    const requester = await createMember(t);
    const other = await createMember(t);
    const secondAdmin = await createMember(t, { role: 'ADMIN' });
    for (const m of [requester, other]) expect((await t.gql(OPS.grant, { userId: m.id, agentId, permission: 'VIEW' })).errors).toBeUndefined();
    const watched = await create('watched by several', requester.token);
    // A request naming no agent: seen by admins (and its requester, the admin) only.
    const adminsOnly = await t.gql(`mutation { createApproval(input: { title: "admins only", action: { kind: "send_message", text: "x" } }) { id } }`);
    expect(adminsOnly.errors).toBeUndefined();
    const successor = adminsOnly.data.createApproval.id as string;

    const viewers = { admin: t.adminToken, secondAdmin: secondAdmin.token, requester: requester.token, other: other.token };
    const subs = Object.fromEntries(
      Object.entries(viewers).map(([name, token]) => [
        name,
        [subscribe(t.ws(token), DOC, { id: watched }), subscribe(t.ws(token), NO_GRANTS, { id: watched })],
      ]),
    ) as Record<keyof typeof viewers, ReturnType<typeof subscribe>[]>;
    const all = Object.values(subs).flat();
    await untilAllLive(all, watched);

    // The state each field reads, then one event that every subscription receives.
    await t.sql(`update approval set superseded_by_id = $1 where id = $2`, [rawId(successor), rawId(watched)]);
    await t.sql(`update agent set last_error = $1, last_error_at = now() where id = $2`, [
      JSON.stringify({ kind: 'refused', message: 'the agent refused the connection', detail: 'ECONNREFUSED' }),
      rawId(agentId),
    ]);
    const executionsBefore = sharedEventStats.executions;
    for (const s of all) s.received.length = 0;
    await appendProbeEvent(t, watched);
    await eventually(async () => all.every((s) => s.received.length > 0), 10_000, 20);
    const executions = sharedEventStats.executions - executionsBefore;

    const requesterGrants = (await t.gql(`query($id: ID!) { node(id: $id) { ... on User { grants { id } } } }`, { id: requester.id })).data.node.grants;
    expect(requesterGrants).toHaveLength(1);
    const lastError = { kind: 'refused', message: 'the agent refused the connection' };
    const expected = {
      admin: { supersededBy: { id: successor }, lastError, grants: requesterGrants },
      secondAdmin: { supersededBy: { id: successor }, lastError, grants: requesterGrants },
      requester: { supersededBy: null, lastError: null, grants: requesterGrants },
      other: { supersededBy: null, lastError: null, grants: [] },
    };
    for (const [name, [withGrants, withoutGrants]] of Object.entries(subs) as [keyof typeof viewers, ReturnType<typeof subscribe>[]][]) {
      const want = expected[name];
      const approval = { id: watched, title: 'watched by several', supersededBy: want.supersededBy, agent: { id: agentId, lastError: want.lastError } };
      expect(only(withGrants!), name).toEqual({ approvalChanged: { ...approval, requester: { id: requester.id, grants: want.grants } } });
      expect(only(withoutGrants!), name).toEqual({ approvalChanged: approval });
    }
    // Eight subscriptions, four viewers who answer differently: no more than one execution per
    // viewer and document.
    expect(executions).toBeLessThanOrEqual(8);

    // Five more subscriptions per viewer and document: the same executions per event.
    const more = Object.values(viewers).flatMap((token) =>
      Array.from({ length: 5 }, () => [subscribe(t.ws(token), DOC, { id: watched }), subscribe(t.ws(token), NO_GRANTS, { id: watched })]).flat(),
    );
    await untilAllLive([...all, ...more], watched);
    const before = sharedEventStats.executions;
    for (const s of [...all, ...more]) s.received.length = 0;
    await appendProbeEvent(t, watched);
    await eventually(async () => [...all, ...more].every((s) => s.received.length > 0), 10_000, 20);
    expect(sharedEventStats.executions - before).toBe(executions);
    for (const s of [...all, ...more]) s.dispose();
  });
});

describe('over HTTP (server-sent events) as over WebSocket', () => {
  it('an SSE subscriber and a WebSocket subscriber of one document each get their own fields', async () => {
    const member = await createMember(t);
    expect((await t.gql(OPS.grant, { userId: member.id, agentId, permission: 'VIEW' })).errors).toBeUndefined();
    const watched = await create('watched over SSE');
    const DOC = `subscription($id: ID) { approvalChanged(approvalId: $id) { id agent { id lastError { kind } } } }`;
    const sse = await sseSubscribe(DOC, { id: watched }, t.adminToken);
    const ws = subscribe(t.ws(member.token), DOC, { id: watched });
    try {
      for (let round = 0; round < 20 && !(sse.received.length && ws.received.length); round++) {
        await appendProbeEvent(t, watched);
        await eventually(async () => sse.received.length > 0 && ws.received.length > 0, 2000, 20).catch(() => null);
      }
      await t.sql(`update agent set last_error = $1, last_error_at = now() where id = $2`, [
        JSON.stringify({ kind: 'timeout', message: 'the agent did not answer' }),
        rawId(agentId),
      ]);
      sse.received.length = 0;
      ws.received.length = 0;
      await appendProbeEvent(t, watched);
      await eventually(async () => sse.received.length > 0 && ws.received.length > 0, 10_000, 20);
      expect(sse.received).toEqual([{ data: { approvalChanged: { id: watched, agent: { id: agentId, lastError: { kind: 'timeout' } } } } }]);
      expect(ws.received).toEqual([{ data: { approvalChanged: { id: watched, agent: { id: agentId, lastError: null } } } }]);
    } finally {
      sse.close();
      ws.dispose();
    }
  });
});

/** A GraphQL subscription over server-sent events (Yoga's HTTP transport): every `next` payload. */
async function sseSubscribe(query: string, variables: Record<string, unknown>, token: string) {
  const abort = new AbortController();
  const res = await fetch(`http://127.0.0.1:${t.instance.port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const received: unknown[] = [];
  const events = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  void (async () => {
    for (let e = await events.read(); !e.done; e = await events.read()) if (e.value.event === 'next') received.push(JSON.parse(e.value.data));
  })().catch(() => {});
  return { received, close: () => abort.abort() };
}

/** The one event a subscription received since it was emptied, without error. */
function only(sub: ReturnType<typeof subscribe>): unknown {
  expect(sub.received).toHaveLength(1);
  const e = sub.received[0] as GqlResult;
  expect(e.errors).toBeUndefined();
  return e.data;
}

/** Probe events on the approval until every subscription has received one. */
async function untilAllLive(subs: ReturnType<typeof subscribe>[], approvalId: string): Promise<void> {
  for (let round = 0; round < 20; round++) {
    for (const s of subs) s.received.length = 0;
    await appendProbeEvent(t, approvalId);
    if (
      await eventually(async () => subs.every((s) => s.received.length > 0), 2000, 20).then(
        () => true,
        () => false,
      )
    )
      return;
  }
  throw new Error('the subscriptions never all received a probe');
}
