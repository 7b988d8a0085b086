import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApprovalAction } from '../../../src/approvals/request-part.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { APPROVAL_LIMITS } from '../../../src/limits.js';
import { createMember, OPS, startTestInstance, type TestInstance, rawId } from '../../support/harness.js';
import { nested } from '../../fuzz/arbitraries.js';
import { jsonText } from '../../fuzz/properties.js';

// Regressions for what `npm run fuzz` found (issue 14, item 5): each input below made the server
// answer 500 (or fail inside a transaction) before; now it is refused with its reason and
// nothing changes.

let t: TestInstance;
let agent: FixtureAgent;
let agentUuid: string;
let tenantId: string;
let member: { id: string; token: string };

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
  expect(reg.errors).toBeUndefined();
  agentUuid = rawId(reg.data.registerAgent.id);
  [{ tenant_id: tenantId }] = await t.sql(`select tenant_id from agent where id = $1`, [agentUuid]);
  member = await createMember(t);
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

/** GraphQL with a body written as text (deep values cannot go through JSON.stringify). */
async function rawGql(body: string, token = t.adminToken) {
  const res = await t.instance.yoga.fetch('http://taskbay.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  return { status: res.status, json: (await res.json()) as any };
}

const CREATE = `mutation($action: JSON!) { createApproval(input: { title: "deep", action: $action }) { id revision digest } }`;
const count = async (table: string) => (await t.sql<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;

describe('action data nested deeper than the digest can follow', () => {
  it(`parseApprovalAction: data of ${APPROVAL_LIMITS.dataDepthMax} levels is accepted, one more is refused with its reason`, () => {
    // nested(n) wraps n times around a string: the data object itself adds one level.
    const at = (levels: number) => parseApprovalAction({ kind: 'send_message', text: 'x', data: { v: nested(levels - 1) } });
    expect(at(APPROVAL_LIMITS.dataDepthMax).ok).toBe(true);
    expect(at(APPROVAL_LIMITS.dataDepthMax + 1)).toEqual({ ok: false, error: `action.data is nested deeper than ${APPROVAL_LIMITS.dataDepthMax} levels` });
    expect(at(3000)).toEqual({ ok: false, error: `action.data is nested deeper than ${APPROVAL_LIMITS.dataDepthMax} levels` });
  });

  it('createApproval and editAndApprove with data deeper than 64 levels: INVALID_ACTION, nothing stored (was INTERNAL_SERVER_ERROR: the digest overflowed the stack)', async () => {
    // 80 levels passes the GraphQL input-depth limit (100) and reaches the action rule.
    const before = await count('approval');
    const deep = { kind: 'send_message', text: 'x', data: { v: nested(80) } };
    const r = await rawGql(`{"query":${JSON.stringify(CREATE)},"variables":{"action":${jsonText(deep)}}}`, member.token);
    expect(r.json.errors?.map((e: any) => e.extensions?.code)).toEqual(['INVALID_ACTION']);
    expect(r.json.errors[0].message).toMatch(/nested deeper than 64 levels/);
    expect(await count('approval')).toBe(before);

    const ok = (await t.gql(CREATE, { action: { kind: 'send_message', text: 'x' } }, member.token)).data.createApproval;
    const edit = await rawGql(
      `{"query":${JSON.stringify(OPS.editAndApprove)},"variables":{"id":"${ok.id}","revision":1,"digest":"${ok.digest}","action":${jsonText({ text: 'y', data: { v: nested(80) } })}}}`,
    );
    expect(edit.json.errors?.map((e: any) => e.extensions?.code)).toEqual(['INVALID_ACTION']);
    const [row] = await t.sql(`select status, revision from approval where id = $1`, [rawId(ok.id)]);
    expect(row).toEqual({ status: 'PENDING', revision: 1 });
  });

  it('3,000 and 20,000 levels (too deep to serialise at all): BAD_USER_INPUT from the input-depth limit before anything recursive runs (was a 500)', async () => {
    const before = await count('approval');
    for (const levels of [3000, 20_000]) {
      const r = await rawGql(
        `{"query":${JSON.stringify(CREATE)},"variables":{"action":${jsonText({ kind: 'send_message', text: 'x', data: { v: nested(levels) } })}}}`,
      );
      expect(r.status, String(levels)).toBe(400);
      expect(
        r.json.errors.map((e: any) => [e.extensions?.code, e.extensions?.reason]),
        String(levels),
      ).toEqual([['BAD_USER_INPUT', 'INPUT_TOO_DEEP']]);
    }
    expect(await count('approval')).toBe(before);
  });
});

describe('push bodies', () => {
  /** A task of the showcase agent with a push token, written directly (as startTask would). */
  async function pushTask(remoteTaskId: string | null) {
    const id = randomUUID();
    const token = randomBytes(16).toString('base64url');
    await t.sql(
      `insert into task (id, tenant_id, agent_id, remote_task_id, context_id, state, last_step_seq, push_token_hash)
       values ($1, $2, $3, $4, $5, 'TASK_STATE_WORKING', 0, $6)`,
      [id, tenantId, agentUuid, remoteTaskId, remoteTaskId ? 'ctx' : null, createHash('sha256').update(token).digest('hex')],
    );
    return { id, token };
  }
  const post = (task: { id: string; token: string }, body: string) =>
    fetch(`${t.instance.url}/a2a/push/${task.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-a2a-notification-token': task.token },
      body,
    });
  const footprint = async (id: string) => t.sql(`select state, remote_task_id, last_step_seq from task where id = $1`, [id]);

  it('a body nested 20,000 levels deep: 400 with the reason, nothing stored (was a 500)', async () => {
    const task = await pushTask(null);
    const before = await footprint(task.id);
    const res = await post(task, jsonText({ statusUpdate: { taskId: 'r', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }, deep: nested(20_000) }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'the push cannot be stored: it is nested too deeply' });
    expect(await footprint(task.id)).toEqual(before);
  });

  it('a status message whose messageId is longer than 512 characters: 400 with the reason, nothing stored (the unique index refused it inside the observation: a 500)', async () => {
    const task = await pushTask(null);
    const before = await footprint(task.id);
    const update = (messageId: string) =>
      JSON.stringify({
        statusUpdate: {
          taskId: `r-${task.id}`,
          contextId: 'ctx',
          status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId, role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } },
        },
      });
    // Random (incompressible) text: 3,000 bytes do not fit an index entry.
    const res = await post(task, update(randomBytes(1500).toString('hex')));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/statusUpdate\.status\.message\.messageId is longer than 512 characters/);
    expect(await footprint(task.id)).toEqual(before);
    // 512 code units are stored.
    expect((await post(task, update('m'.repeat(512)))).status).toBe(200);
    expect(await t.sql(`select length(message_id) as n from task_message where task_id = $1`, [task.id])).toEqual([{ n: 512 }]);
  });

  it("an update naming another task's remote id: 400, nothing stored (was a 500 from the unique key)", async () => {
    const holder = await pushTask(`remote-${randomUUID()}`);
    const [{ remote_task_id: taken }] = await footprint(holder.id);
    const task = await pushTask(null);
    const before = await footprint(task.id);
    const res = await post(task, JSON.stringify({ statusUpdate: { taskId: taken, contextId: 'ctx', status: { state: 'TASK_STATE_WORKING' } } }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/another task's/);
    expect(await footprint(task.id)).toEqual(before);
    // The same update naming a fresh id is stored.
    expect(
      (await post(task, JSON.stringify({ statusUpdate: { taskId: `fresh-${randomUUID()}`, contextId: 'ctx', status: { state: 'TASK_STATE_WORKING' } } })))
        .status,
    ).toBe(200);
  });
});

describe('command hook REST bodies (POST /api/command-approvals)', () => {
  const payload = (over: Record<string, unknown> = {}) => ({
    operation: 'Delete build cache',
    exact_content: 'rm -rf /tmp/build',
    scope: 'rm',
    risk_level: 'high',
    rollback: null,
    rationale: 'cleanup',
    verification: 'ls /tmp',
    ...over,
  });
  const request = (body: string) =>
    fetch(`${t.instance.url}/api/command-approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
      body,
    });

  it('a NUL or a lone surrogate in the payload, or a body nested 20,000 deep: 400 BAD_USER_INPUT with the reason, nothing stored (was a 500)', async () => {
    const before = await count('command_approval');
    const cases: [string, string][] = [
      [
        JSON.stringify({ agent_id: 'a0123456', payload: payload({ rationale: 'lone \udc00 surrogate' }) }),
        'it contains a NUL character (U+0000) or an unpaired UTF-16 surrogate',
      ],
      [
        JSON.stringify({ agent_id: 'a0123456', payload: payload({ exact_content: 'rm -rf /\u0000' }) }),
        'it contains a NUL character (U+0000) or an unpaired UTF-16 surrogate',
      ],
      [jsonText({ agent_id: 'a0123456', payload: payload(), extra: nested(20_000) }), 'it is nested too deeply'],
    ];
    for (const [body, reason] of cases) {
      const res = await request(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'BAD_USER_INPUT', message: `the request cannot be stored: ${reason}` });
    }
    expect(await count('command_approval')).toBe(before);
    // The same request with storable text is accepted.
    const okRes = await request(JSON.stringify({ agent_id: 'a0123456', payload: payload() }));
    expect(okRes.status).toBe(201);
    expect(await count('command_approval')).toBe(before + 1);
  });
});
