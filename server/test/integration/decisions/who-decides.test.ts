import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, OPS, startTestInstance, type TestInstance, ok } from '../../support/harness.js';

// What the console asks before the ritual (decisions/who-decides.ts): Approval.viewerCannotDecide
// says why a person's decision would be refused, and Approval.delegateCandidates lists only
// people the delegation would accept. Each answer is checked against the decision it predicts.

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;

const ASK = `query($id: ID!) { approval(id: $id) { id viewerCannotDecide delegateCandidates { id } } }`;

async function openShowcase() {
  const task = ok(await t.gql(OPS.startTask, { agentId: showcaseId, text: 'approve' })).startTask;
  const edges = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges;
  return edges[0].node as { id: string; revision: number; digest: string };
}

async function member(permission: 'VIEW' | 'OPERATE' | null) {
  const m = await createMember(t);
  if (permission) ok(await t.gql(OPS.grant, { userId: m.id, agentId: showcaseId, permission }));
  return m;
}

const vars = (a: { id: string; revision: number; digest: string }) => ({ id: a.id, revision: a.revision, digest: a.digest });

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('who can decide, asked before deciding', () => {
  it('names the missing OPERATE and the delegation to someone else, as the decision then refuses; delegation offers only people with OPERATE', async () => {
    const viewer = await member('VIEW');
    const operator = await member('OPERATE');
    const other = await member('OPERATE');
    const outsider = await member(null);
    const a = await openShowcase();

    // The admin may decide; the candidates are those with OPERATE (the admin left out as viewer).
    const asAdmin = ok(await t.gql(ASK, { id: a.id })).approval;
    expect(asAdmin.viewerCannotDecide).toBeNull();
    const offered = asAdmin.delegateCandidates.map((u: { id: string }) => u.id);
    expect(offered).toEqual(expect.arrayContaining([operator.id, other.id]));
    expect(offered).not.toContain(viewer.id);
    expect(offered).not.toContain(outsider.id);

    // VIEW only: the reason, and the decision refused for it.
    expect(ok(await t.gql(ASK, { id: a.id }, viewer.token)).approval.viewerCannotDecide).toBe('you need OPERATE on this agent to decide');
    expect(codeOf(await t.gql(OPS.approve, vars(a), viewer.token))).toBe('FORBIDDEN');

    // Delegated to `operator`: `other` is told so, and is refused.
    ok(await t.gql(OPS.delegate, { ...vars(a), to: operator.id }));
    expect(ok(await t.gql(ASK, { id: a.id }, other.token)).approval.viewerCannotDecide).toBe('this request is delegated to someone else');
    expect(codeOf(await t.gql(OPS.approve, vars(a), other.token))).toBe('FORBIDDEN');
    expect(ok(await t.gql(ASK, { id: a.id }, operator.token)).approval.viewerCannotDecide).toBeNull();
    ok(await t.gql(OPS.approve, vars(a), operator.token));

    // Decided: nobody can any more.
    expect(ok(await t.gql(ASK, { id: a.id }, operator.token)).approval.viewerCannotDecide).toBe('this request is approved and cannot be decided again');
  });
});
