import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, CardSnapshot } from '../../../src/agents/entities.js';
import { ApprovalRequest, Revision } from '../../../src/approvals/entities.js';
import { User } from '../../../src/auth/entities.js';
import { readRows } from '../../../src/db/read-rows.js';
import { Decision } from '../../../src/decisions/entities.js';
import { Delivery } from '../../../src/delivery/entities.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { createLoaders, rowOf } from '../../../src/graphql/loaders.js';
import { ReviewerGroup, ReviewerGroupMember } from '../../../src/groups/entities.js';
import { Task, TaskMessage, TaskStatusEntry } from '../../../src/tasks/entities.js';
import { eventually, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';

// The per-request loaders (graphql/loaders.ts) read plain rows instead of managed entities. Every
// entity they read must come back with the values `em.find` gives, after a real loop wrote them:
// an agent registered from its card, a task, its approval approved and delivered, a reviewer group.

let t: TestInstance;
let agent: FixtureAgent;

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  const reg = await t.gql(OPS.register, { url: agent.cardUrl('approver') });
  expect(reg.errors).toBeUndefined();
  const st = await t.gql(OPS.startTask, { agentId: reg.data.registerAgent.id, text: 'approve' });
  expect(st.errors).toBeUndefined();
  const list = await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: st.data.startTask.id });
  const a = list.data.approvals.edges[0].node;
  expect((await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest, comment: 'ok?' })).errors).toBeUndefined();
  await eventually(async () => (await t.sql(`select 1 from delivery where status = 'DELIVERED'`)).length === 1, 15_000, 20);
  const viewer = await t.gql(`{ viewer { id } }`);
  const group = await t.gql(`mutation($m: [ID!]) { createReviewerGroup(input: { name: "night shift", memberIds: $m }) { id } }`, {
    m: [viewer.data.viewer.id],
  });
  expect(group.errors).toBeUndefined();
});
afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('the loaders read plain rows', () => {
  it('with the values em.find gives for every entity they load', async () => {
    const entities = {
      User,
      Agent,
      CardSnapshot,
      Task,
      TaskMessage,
      TaskStatusEntry,
      ApprovalRequest,
      Revision,
      Decision,
      Delivery,
      ReviewerGroup,
      ReviewerGroupMember,
    };
    for (const [name, entity] of Object.entries(entities)) {
      const em = t.instance.orm.em.fork();
      const found = await em.find(entity as never, {}, { orderBy: { id: 'asc' } as never });
      expect(found.length, `${name} has rows`).toBeGreaterThan(0);
      const rows = await readRows(em.fork(), entity as never, {}, { orderBy: { id: 'asc' } as never });
      expect(rows, name).toEqual(found.map((e) => ({ ...(e as object) })));
    }
  });

  it('answers a row a batch read at once, and not after the loader forgot it', async () => {
    const loaders = createLoaders(t.instance.orm.em.fork());
    const [{ id }] = await t.sql(`select id from app_user limit 1`);
    expect(rowOf(loaders.user, id)).toBeInstanceOf(Promise);
    const row = await loaders.user.load(id);
    expect(rowOf(loaders.user, id)).toBe(row);
    loaders.user.clear(id);
    expect(rowOf(loaders.user, id)).toBeInstanceOf(Promise);
    await loaders.user.load(id);
    loaders.user.clearAll();
    expect(loaders.user.peek(id)).toBeUndefined();
  });
});
