import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { clearPolicies, createPolicy, open, policyOf, Q, requestedEvent, tenantEvents } from '../../support/policies.js';

// Issue 12 item 1, policies (docs/POLICIES.md): chosen per request when it opens by the first
// enabled policy whose CEL condition matches; versioned, frozen onto the request; enforced in
// the decision path (allowed outcomes, the task's starter). Groups: groups/reviewer-groups.test.ts;
// two instances: policies/scale-out.test.ts.

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;
let scriptedId: string;

const APPROVAL_MEDIA_TYPE = 'application/vnd.agent-taskbay.approval-request+json';

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  scriptedId = ok(await t.gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

beforeEach(() => clearPolicies(t));

/** An agent request (source AGENT) through the scripted fixture agent, with its policy. */
async function agentRequest(request: Record<string, unknown>, token?: string) {
  const data = { reply: { state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'Please approve.' }, { mediaType: APPROVAL_MEDIA_TYPE, data: request }] } };
  const task = ok(await t.gql(OPS.startTask, { agentId: scriptedId, data }, token)).startTask;
  expect(task.state).toBe('INPUT_REQUIRED');
  const [edge] = ok(await t.gql(Q.approvalsOfTask, { taskId: task.id })).approvals.edges;
  return edge.node;
}

describe('choosing a policy', () => {
  it('the first enabled policy whose condition matches wins; a disabled one is skipped; none matching is the default', async () => {
    const high = await createPolicy(t, { name: 'high risk', condition: 'riskLevel >= 3', allowedOutcomes: ['APPROVE', 'REJECT'] });
    const deploys = await createPolicy(t, { name: 'deploys', condition: 'title.startsWith("Deploy")' });
    const off = await createPolicy(t, { name: 'everything (off)', condition: '', enabled: false });

    // Both match: the first in order wins.
    expect(await policyOf(t, { title: 'Deploy web', risk: 'HIGH' })).toMatchObject({ name: 'high risk', version: 1, policyId: high.id, isDefault: false });
    expect(await policyOf(t, { title: 'Deploy web', risk: 'LOW' })).toMatchObject({ name: 'deploys', policyId: deploys.id });
    // Nothing enabled matches: the built-in default (the disabled catch-all is skipped).
    expect(await policyOf(t, { title: 'Tidy up', risk: 'LOW' })).toMatchObject({ name: 'default', version: 0, policyId: null, isDefault: true });

    // Reordering changes the winner; enabling the catch-all makes it match what nothing else does.
    ok(await t.gql(Q.reorder, { ids: [deploys.id, high.id, off.id] }));
    expect(await policyOf(t, { title: 'Deploy web', risk: 'HIGH' })).toMatchObject({ name: 'deploys' });
    ok(await t.gql(Q.setEnabled, { id: off.id, enabled: true }));
    expect(await policyOf(t, { title: 'Tidy up', risk: 'LOW' })).toMatchObject({ name: 'everything (off)' });
    ok(await t.gql(Q.setEnabled, { id: high.id, enabled: false }));
    expect(await policyOf(t, { title: 'Review', risk: 'CRITICAL' })).toMatchObject({ name: 'everything (off)' });
  });

  it('conditions see the agent, skill, risk, kind, source, title, text and task of the request', async () => {
    const cases: [string, () => Promise<{ name: string }>, () => Promise<{ name: string }>][] = [
      ['agent.name == "Taskbay fixture: showcase"', () => policyOf(t, { agentId: showcaseId }), () => policyOf(t, { agentId: scriptedId })],
      [`agent.id == "${rawId(scriptedId)}"`, () => policyOf(t, { agentId: scriptedId }), () => policyOf(t, { agentId: showcaseId })],
      ['skill == "deploy"', () => policyOf(t, { agentId: showcaseId, skillId: 'deploy' }), () => policyOf(t, { agentId: showcaseId, skillId: 'cleanup' })],
      ['risk == "critical"', () => policyOf(t, { risk: 'CRITICAL' }), () => policyOf(t, { risk: 'HIGH' })],
      ['riskLevel >= 3', () => policyOf(t, { risk: 'HIGH' }), () => policyOf(t, { risk: 'MEDIUM' })],
      [
        'kind == "send_data"',
        () =>
          policyOf(t, { action: { kind: 'send_data', form: { schema: { type: 'object', properties: { size: { type: 'integer' } } } }, values: { size: 64 } } }),
        () => policyOf(t, {}),
      ],
      [
        'source == "AGENT"',
        async () => (await agentRequest({ title: 'From the agent', action: { kind: 'send_message', text: 'x' } })).policy,
        () => policyOf(t, {}),
      ],
      ['title == "Rotate keys"', () => policyOf(t, { title: 'Rotate keys' }), () => policyOf(t, { title: 'Rotate key' })],
      ['text.contains("production")', () => policyOf(t, { summary: 'Touches production' }), () => policyOf(t, { summary: 'Touches staging' })],
      [
        'text.contains("DROP TABLE")',
        () => policyOf(t, { action: { kind: 'send_message', text: 'DROP TABLE users' } }),
        () => policyOf(t, { action: { kind: 'send_message', text: 'SELECT 1' } }),
      ],
      [
        'task.id != ""',
        async () => (await agentRequest({ title: 'On a task', action: { kind: 'send_message', text: 'x' } })).policy,
        () => policyOf(t, { agentId: scriptedId }),
      ],
    ];
    for (const [condition, matching, missing] of cases) {
      const p = await createPolicy(t, { name: 'under test', condition });
      expect((await matching()).name, `${condition} should match`).toBe('under test');
      expect((await missing()).name, `${condition} should not match`).toBe('default');
      ok(await t.gql(Q.delete, { id: p.id }));
    }
  });

  it('a condition that fails while evaluating fails closed: its policy applies and the error is recorded on the request and in its event', async () => {
    await createPolicy(t, { name: 'numbered titles', condition: 'int(title) > 100', allowedOutcomes: ['APPROVE', 'REJECT'] });
    expect(await policyOf(t, { title: '7' })).toMatchObject({ name: 'default' });
    const a = await open(t, { title: 'not a number' });
    expect(a.policy).toMatchObject({ name: 'numbered titles', version: 1 });
    expect(a.policy.conditionError).toMatch(/int/i);
    const event = await requestedEvent(t, a.id);
    expect(event.policy).toMatchObject({ name: 'numbered titles', version: 1, conditionError: a.policy.conditionError });
  });
});

describe('saving a policy', () => {
  async function nothingSaved(before: { policies: number; versions: number; events: number }) {
    const [now] = await t.sql(
      `select (select count(*)::int from policy) as policies, (select count(*)::int from policy_version) as versions,
              (select count(*)::int from audit_event where type like 'policy.%') as events`,
    );
    expect(now).toEqual(before);
  }
  const counts = async () =>
    (
      await t.sql(
        `select (select count(*)::int from policy) as policies, (select count(*)::int from policy_version) as versions,
                (select count(*)::int from audit_event where type like 'policy.%') as events`,
      )
    )[0];

  it('invalid CEL is refused with the parser message and nothing is saved, on create and on update', async () => {
    const p = await createPolicy(t, { name: 'fine', condition: 'riskLevel >= 2' });
    const before = await counts();
    for (const [condition, message] of [
      ['risk >', /Unexpected token/],
      ['risk > 3', /no such overload/],
      ['title', /must be true or false/],
      ['text.matches(".*")', /regular expressions/],
    ] as const) {
      const created = await t.gql(Q.create, { input: { name: 'broken', condition } });
      expect(codeOf(created)).toBe('BAD_USER_INPUT');
      expect(created.errors![0]!.message).toMatch(message);
      const updated = await t.gql(Q.update, { input: { id: p.id, condition } });
      expect(codeOf(updated)).toBe('BAD_USER_INPUT');
    }
    await nothingSaved(before);
    expect(ok(await t.gql(Q.policies)).policies[0].currentVersion).toMatchObject({ version: 1, condition: 'riskLevel >= 2' });
  });

  it('refuses rules out of range, naming the problem, and saves nothing', async () => {
    const nobody = '00000000-0000-4000-8000-00000000dead';
    const before = await counts();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ quorum: { approvals: 0 } }, /quorum.approvals/],
      [{ quorum: { approvals: 21 } }, /quorum.approvals/],
      [{ allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE'] }, /REJECT/],
      [{ allowedOutcomes: ['REJECT', 'REQUEST_CHANGES'] }, /APPROVE/],
      [{ allowedOutcomes: [] }, /REJECT/],
      [{ escalation: { afterSeconds: 0, raiseRiskTo: 'HIGH' } }, /afterSeconds/],
      [{ escalation: { afterSeconds: 60 } }, /assign the request/],
      [{ escalation: { afterSeconds: 60, toUserId: Buffer.from(`User:${nobody}`).toString('base64') } }, /toUserId/],
      [{ quorum: { approvals: 2, fromGroupIds: [Buffer.from(`ReviewerGroup:${nobody}`).toString('base64')] } }, /group/],
      [{ name: '  ' }, /name/],
      [{ name: 'default' }, /built-in/],
      [{ name: 'x'.repeat(101) }, /longer than 100/],
    ];
    for (const [input, message] of bad) {
      const r = await t.gql(Q.create, { input: { name: 'bad', ...input } });
      expect(codeOf(r), JSON.stringify(input)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toMatch(message);
    }
    await createPolicy(t, { name: 'taken' });
    expect(codeOf(await t.gql(Q.create, { input: { name: 'taken' } }))).toBe('BAD_USER_INPUT');
    expect((await counts()).policies).toBe(before.policies + 1);
  });

  it('admins only: a member can neither list nor change policies', async () => {
    const m = await createMember(t);
    const p = await createPolicy(t, { name: 'guarded' });
    expect(codeOf(await t.gql(Q.policies, {}, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.create, { input: { name: 'sneaky' } }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.update, { input: { id: p.id, condition: 'false' } }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.setEnabled, { id: p.id, enabled: false }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.delete, { id: p.id }, m.token))).toBe('FORBIDDEN');
    expect(ok(await t.gql(Q.policies)).policies.map((x: any) => [x.name, x.enabled, x.currentVersion.version])).toEqual([['guarded', true, 1]]);
  });
});

describe('versions', () => {
  it('an edit writes a new version: the open request keeps the old one, a new request gets the new one, and the audit log records both', async () => {
    const p = await createPolicy(t, { name: 'deploy gate', condition: 'title.startsWith("Deploy")', allowedOutcomes: ['APPROVE', 'REJECT'] });
    const first = await open(t, { title: 'Deploy 1' });
    expect(first.policy).toMatchObject({ name: 'deploy gate', version: 1, allowedOutcomes: ['APPROVE', 'REJECT'] });

    const edited = ok(
      await t.gql(Q.update, { input: { id: p.id, allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT'], excludeTaskStarter: true } }),
    ).updatePolicy;
    expect(edited.currentVersion).toMatchObject({ version: 2, condition: 'title.startsWith("Deploy")', excludeTaskStarter: true });
    expect(edited.versions.map((v: any) => v.version)).toEqual([2, 1]);
    // Renaming alone writes no version.
    expect(ok(await t.gql(Q.update, { input: { id: p.id, name: 'deploy gate!' } })).updatePolicy.currentVersion.version).toBe(2);

    const second = await open(t, { title: 'Deploy 2' });
    expect(second.policy).toMatchObject({
      name: 'deploy gate!',
      version: 2,
      allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT'],
      excludeTaskStarter: true,
    });
    // The open request still shows what it opened under, and its rules still apply to it.
    expect(ok(await t.gql(Q.approvalPolicy, { id: first.id })).approval.policy).toMatchObject({
      name: 'deploy gate',
      version: 1,
      allowedOutcomes: ['APPROVE', 'REJECT'],
    });
    const other = (await createMember(t, { role: 'ADMIN' })).token;
    const edit = await t.gql(OPS.editAndApprove, { id: first.id, revision: 1, digest: first.digest, action: { text: 'changed' } }, other);
    expect(codeOf(edit)).toBe('OUTCOME_NOT_ALLOWED');

    expect((await requestedEvent(t, first.id)).policy).toEqual({ id: rawId(p.id), name: 'deploy gate', version: 1 });
    expect((await requestedEvent(t, second.id)).policy).toEqual({ id: rawId(p.id), name: 'deploy gate!', version: 2 });
    const events = (await tenantEvents(t, 'policy.')).filter((e) => e.data.policyId === rawId(p.id));
    expect(events.map((e) => [e.type, e.data.version])).toEqual([
      ['policy.created', 1],
      ['policy.updated', 2],
      ['policy.updated', 2],
    ]);
    expect(events[1]!.data.rules.excludeTaskStarter).toBe(true);

    // A version is never changed in place (trigger policy_version_immutable), even by the database owner.
    await expect(t.sql(`update policy_version set condition = 'true' where policy_id = $1`, [rawId(p.id)])).rejects.toThrow(/immutable/);
    // Deleting the policy leaves the requests' snapshots as they were.
    ok(await t.gql(Q.delete, { id: p.id }));
    expect(ok(await t.gql(Q.approvalPolicy, { id: second.id })).approval.policy).toMatchObject({ name: 'deploy gate!', version: 2 });
    expect((await tenantEvents(t, 'policy.deleted')).at(-1)!.data).toMatchObject({ policyId: rawId(p.id), version: 2 });
  });
});

describe('enforcement in the decision path', () => {
  it('an outcome the policy does not allow is refused with OUTCOME_NOT_ALLOWED and changes nothing; an allowed one is taken', async () => {
    await createPolicy(t, { name: 'no edits', allowedOutcomes: ['APPROVE', 'REJECT'] });
    const a = await open(t, { title: 'Ship it' });
    // The admin who created the request is its requester: another admin decides.
    const other = (await createMember(t, { role: 'ADMIN' })).token;
    const edit = await t.gql(OPS.editAndApprove, { id: a.id, revision: 1, digest: a.digest, action: { text: 'changed' } }, other);
    expect(codeOf(edit)).toBe('OUTCOME_NOT_ALLOWED');
    expect(edit.errors![0]!.message).toMatch(/"no edits" \(version 1\) does not allow "edit then approve"/);
    const changes = await t.gql(OPS.requestChanges, { id: a.id, revision: 1, digest: a.digest, comment: 'more' }, other);
    expect(codeOf(changes)).toBe('OUTCOME_NOT_ALLOWED');
    const after = ok(await t.gql(Q.approvalPolicy, { id: a.id })).approval;
    expect(after).toMatchObject({ status: 'PENDING', revision: 1 });
    expect(ok(await t.gql(OPS.approve, { id: a.id, revision: 1, digest: a.digest }, other)).approve.outcome).toBe('APPROVE');
  });

  it('under the self-review policy, the person who started the task cannot decide its request; another reviewer can', async () => {
    const a = await createMember(t);
    const b = await createMember(t);
    for (const m of [a, b]) ok(await t.gql(OPS.grant, { userId: m.id, agentId: scriptedId, permission: 'OPERATE' }));
    const request = { title: 'Deploy', action: { kind: 'send_message', text: 'deploy now' } };

    // Without the policy, the task's starter may decide (only the requester never may).
    const before = await agentRequest(request, a.token);
    expect(before.policy.name).toBe('default');
    expect(ok(await t.gql(OPS.approve, { id: before.id, revision: 1, digest: before.digest }, a.token)).approve.outcome).toBe('APPROVE');

    await createPolicy(t, { name: 'no self-review', condition: 'source == "AGENT"', excludeTaskStarter: true });
    const o = await agentRequest(request, a.token);
    expect(o.policy.name).toBe('no self-review');
    for (const [mutation, vars] of [
      [OPS.approve, {}],
      [OPS.reject, {}],
      [OPS.delegate, { to: b.id }],
    ] as const) {
      const r = await t.gql(mutation, { id: o.id, revision: 1, digest: o.digest, ...vars }, a.token);
      expect(codeOf(r)).toBe('SEPARATION_OF_DUTIES');
      expect(r.errors![0]!.message).toMatch(/started this request's task/);
    }
    // Nor can the request be handed to them.
    expect(codeOf(await t.gql(OPS.delegate, { id: o.id, revision: 1, digest: o.digest, to: a.id }, b.token))).toBe('BAD_USER_INPUT');
    expect(ok(await t.gql(Q.approvalPolicy, { id: o.id })).approval.status).toBe('PENDING');
    expect(ok(await t.gql(OPS.approve, { id: o.id, revision: 1, digest: o.digest }, b.token)).approve.outcome).toBe('APPROVE');
  });
});
