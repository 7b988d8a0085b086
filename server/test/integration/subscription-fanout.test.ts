import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTENER_APPLICATION_NAME } from '../../src/events/listener.js';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { createMember, OPS, startTestInstance, type TestInstance } from '../support/harness.js';

// Issue 11, fan-out: an approval event is loaded once per instance, however many subscribers
// watch; each subscriber's tenant and grants are checked in memory, with grants read as of the
// event (a withdrawn grant stops events at once). SQL is counted by wrapping pg's Client#query,
// which every connection of the instance goes through (the LISTEN connection's own statement
// per notification is left out: it is per event by design).

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
    if (counting && this.connectionParameters?.application_name !== LISTENER_APPLICATION_NAME) {
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
 * event: the mutation's own (the same each time) and what the fan-out costs. Counting starts
 * before the mutation because the fan-out may begin before its answer is read here.
 */
async function statementsForOneEvent(subs: Sub[]): Promise<string[]> {
  statements = [];
  counting = true;
  try {
    const id = await create('counted');
    expect(await Promise.all(subs.map((s) => s.has(id)))).toEqual(subs.map(() => true));
    return statements;
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
    const forFew = await statementsForOneEvent(few);

    const more = Array.from({ length: 24 }, (_, i) => watch(tokens[i % tokens.length]!));
    await allLive([...few, ...more]);
    const forMore = await statementsForOneEvent([...few, ...more]);

    // The same with 4 or 28 subscribers: the fan-out loads the approval once, the members'
    // grants in one batch, and the requester and agent the fields select once each.
    expect(forMore.length, forMore.join('\n')).toBe(forFew.length);
    expect(forMore.filter((q) => q.includes('agent_grant'))).toHaveLength(1);
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
