import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { OPS, createMember, eventually, startTestInstance, type GqlResult, type TestInstance } from '../../support/harness.js';

// taskUpdated answers only what the subscriber may see (docs/ARCHITECTURE.md "Rules that must hold": members
// see the agents and skills they hold a grant for). Events of a task the subscriber cannot see
// are dropped before anything is emitted, like the approval subscriptions do.

let t: TestInstance;
let agent: FixtureAgent;
let agentId: string;

beforeAll(async () => {
  // Skill-limited grants need an agent that advertises skill routing (seed 003).
  agent = await startFixtureAgent({ skillRouting: true });
  t = await startTestInstance({ worker: false });
  const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
  expect(reg.errors).toBeUndefined();
  agentId = reg.data.registerAgent.id;
});
afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

const SUB = `subscription($id: ID!) { taskUpdated(taskId: $id) { id state } }`;

async function startTask(skillId: string): Promise<string> {
  const r = await t.gql(OPS.startTask, { agentId, text: 'hello', skillId });
  expect(r.errors).toBeUndefined();
  return r.data.startTask.id;
}
/** A change of the task: GetTask on the agent, stored as an observation (one task event). */
async function change(taskId: string) {
  const r = await t.gql(`mutation($id: ID!) { syncTask(taskId: $id) { id } }`, { id: taskId });
  expect(r.errors).toBeUndefined();
}
async function grant(userId: string, skillId: string) {
  const r = await t.gql(OPS.grant, { userId, agentId, permission: 'VIEW', skillId });
  expect(r.errors).toBeUndefined();
}

type Frame = { next: GqlResult } | { complete: true };
/** Every frame of one subscription, completion included. */
function frames(client: Client, taskId: string) {
  const seen: Frame[] = [];
  client.subscribe(
    { query: SUB, variables: { id: taskId } },
    {
      next: (v) => void seen.push({ next: v as GqlResult }),
      error: (e) => void seen.push({ next: { errors: [{ message: String(e) }] } }),
      complete: () => void seen.push({ complete: true }),
    },
  );
  return {
    seen,
    /** Frames carrying this task's data. */
    updates: () => seen.filter((f) => 'next' in f && f.next.data?.taskUpdated?.id === taskId).length,
  };
}

/**
 * graphql-ws acknowledges no subscription: these are live once a change of each task reaches
 * its subscription (a few rounds at most). Each round changes each task once and ends when every
 * subscription has its task's change of that round, so none of the round's changes is still on
 * its way afterwards (two subscriptions of one task once meant two changes per round, and the
 * second could arrive after the caller had started counting).
 */
async function live(pairs: [taskId: string, sub: ReturnType<typeof frames>][]) {
  const tasks = [...new Set(pairs.map(([id]) => id))];
  for (let round = 0; round < 10; round++) {
    const before = pairs.map(([, s]) => s.updates());
    for (const id of tasks) await change(id);
    const ok = await eventually(async () => pairs.every(([, s], i) => s.updates() > before[i]!), 1000, 20).catch(() => false);
    if (ok) return;
  }
  throw new Error('subscriptions never became live');
}

describe('taskUpdated respects grants', () => {
  it('subscribing to a task the member cannot see answers NOT_FOUND once and ends; its changes send nothing', async () => {
    const member = await createMember(t);
    await grant(member.id, 'deploy');
    const hidden = await startTask('cleanup');
    const visible = await startTask('deploy');
    const ws = t.ws(member.token);

    const sub = frames(ws, hidden);
    await eventually(async () => sub.seen.length >= 2);
    expect(sub.seen).toHaveLength(2);
    const [first, second] = sub.seen;
    expect(first).toMatchObject({ next: { errors: [{ message: 'task not found', extensions: { code: 'NOT_FOUND' } }] } });
    expect(second).toEqual({ complete: true });

    // The hidden task changes; a probe on the member's visible task, changed afterwards, arrives.
    const probe = frames(ws, visible);
    await live([[visible, probe]]);
    await change(hidden);
    await change(hidden);
    const before = probe.updates();
    await change(visible);
    await eventually(async () => probe.updates() > before);
    expect(sub.seen).toHaveLength(2);
  });

  it('after a grant is withdrawn, changes of that task send the member nothing at all (no error frame per change)', async () => {
    const member = await createMember(t);
    await grant(member.id, 'deploy');
    await grant(member.id, 'cleanup');
    const withdrawn = await startTask('cleanup');
    const kept = await startTask('deploy');
    const ws = t.ws(member.token);
    const sub = frames(ws, withdrawn);
    const probe = frames(ws, kept);
    // The admin watches the same task: proof that its changes are published.
    const witness = frames(t.ws(), withdrawn);
    await live([
      [withdrawn, sub],
      [kept, probe],
      [withdrawn, witness],
    ]);

    // No revoke mutation exists yet: the grant row goes away as a revoke would remove it.
    await t.sql(`delete from agent_grant where user_id = (select id from app_user where email = $1) and skill_id = 'cleanup'`, [member.email]);
    const seenBefore = sub.seen.length;
    const witnessed = witness.updates();
    await change(withdrawn);
    await change(withdrawn);
    await eventually(async () => witness.updates() >= witnessed + 2);
    const probed = probe.updates();
    await change(kept);
    await eventually(async () => probe.updates() > probed);
    expect(sub.seen.slice(seenBefore)).toEqual([]);
  });
});
