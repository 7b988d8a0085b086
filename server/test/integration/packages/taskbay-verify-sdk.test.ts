import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2AClient } from '../../../src/a2a/client.js';
import { advertisedExtensionUris, fetchAgentCard, preferredJsonRpcInterface } from '../../../src/a2a/card.js';
import type { Message, SendMessageResult, Task } from '../../../src/a2a/types.js';
import { JWKS_PATH } from '../../../src/verify-approval/index.js';
import { createTestDatabase, eventually, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';
import { SDK_APPROVAL_REQUEST, startSdkAgent, type SdkAgent } from '../../support/sdk-agent.js';

// Issue 23: an agent built with @a2a-js/sdk 1.x (support/sdk-agent.ts: the SDK's
// DefaultRequestHandler behind its Express JSON-RPC handler) receives Taskbay's approved message
// over real HTTP on loopback and verifies it inside its executor with @taskbay/verify, on the
// message object the SDK gives it (requestContext.userMessage), against Taskbay's JWKS fetched
// over HTTP. Genuine approvals verify; copies changed on the way (the text, the signature of
// another decision, another task, another issuer trusted) are refused with the reason.

const PUBLIC_URL = 'https://taskbay.example';

let t: TestInstance;
let agent: SdkAgent;
let agentId: string;
let client: A2AClient;

const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { id revision digest action } } } }`;
const LEDGER = `query($id: ID!) { approval(id: $id) {
  task { state messages { role parts } }
  execution { status evidence { decisionId reportedDigest approvedDigest digestMatches detail } } } }`;

/** Asks the SDK agent through Taskbay; answers the request Taskbay opened from its INPUT_REQUIRED task. */
async function openRequest(text: string) {
  const task = ok(await t.gql(OPS.startTask, { agentId, text })).startTask;
  expect(task.state).toBe('INPUT_REQUIRED');
  const [edge] = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
  expect(edge, 'Taskbay opened no request from the SDK agent’s approval part').toBeDefined();
  const approval = edge.node as { id: string; revision: number; digest: string; action: Record<string, unknown> };
  return { taskId: task.id as string, remoteTaskId: task.remoteTaskId as string, approval, requestId: rawId(approval.id) };
}

/** Approves in Taskbay and waits until its delivery ended; answers the decision and the ledger. */
async function approve(o: Awaited<ReturnType<typeof openRequest>>, end: 'DELIVERED' | 'FAILED') {
  const decision = ok(await t.gql(OPS.approve, { id: o.approval.id, revision: o.approval.revision, digest: o.approval.digest })).approve;
  await eventually(async () => {
    const status = ok(await t.gql(`query($id: ID!) { approval(id: $id) { execution { status } } }`, { id: o.approval.id })).approval.execution?.status;
    return status === 'DELIVERED' || status === 'FAILED';
  });
  const ledger = ok(await t.gql(LEDGER, { id: o.approval.id })).approval;
  expect(ledger.execution.status, JSON.stringify(await t.sql('select status, last_error from delivery where approval_id = $1', [o.requestId]))).toBe(end);
  return { decisionId: decision.id as string, ledger };
}

/** The JSON-RPC body Taskbay sent carrying this decision, as it arrived at the agent. */
function bodyOf(decisionId: string): { params: { message: Message } } {
  const found = agent.approvedBodies.filter((b) => (b.body as any).params.message.metadata.approval.decisionId === decisionId);
  expect(found).toHaveLength(1);
  return structuredClone(found[0]!.body) as { params: { message: Message } };
}

/** What someone who can reach the agent sends: `message` as a new message (its own messageId) on `taskId`. */
async function sendToAgent(message: Message, taskId: string): Promise<{ state: string; text: string }> {
  const m: Message = { ...structuredClone(message), messageId: randomUUID(), taskId };
  delete m.contextId;
  const result: SendMessageResult = await client.sendMessage({ message: m });
  const task = (result as { task: Task }).task;
  return { state: task.status.state, text: (task.status.message?.parts ?? []).map((p) => p.text ?? '').join('') };
}

const lastVerdict = () => agent.verdicts.at(-1)!;

beforeAll(async () => {
  t = await startTestInstance({ databaseUrl: await createTestDatabase(), env: { TASKBAY_PUBLIC_URL: PUBLIC_URL, TASKBAY_DELIVERY_MAX_ATTEMPTS: '1' } });
  agent = await startSdkAgent({ issuer: PUBLIC_URL, jwksUrl: `${t.instance.url}${JWKS_PATH}` });
  agentId = ok(await t.gql(OPS.register, { url: agent.cardUrl })).registerAgent.id;
  const card = await fetchAgentCard(agent.cardUrl);
  client = new A2AClient({ url: preferredJsonRpcInterface(card)!.url, extensions: advertisedExtensionUris(card) });
});

afterAll(async () => {
  await agent?.close();
  await t?.stop();
});

let first: Awaited<ReturnType<typeof openRequest>> & { decisionId: string };

describe('an @a2a-js/sdk agent verifies Taskbay’s approved message with @taskbay/verify', () => {
  it('send_message: the executor’s requestContext.userMessage (the SDK’s shape) verifies; the agent completes the task and its evidence matches', async () => {
    const o = await openRequest('approve');
    expect(o.approval.action).toEqual(SDK_APPROVAL_REQUEST.action);
    const { decisionId, ledger } = await approve(o, 'DELIVERED');
    first = { ...o, decisionId };
    const [got] = agent.verdicts;
    // What the SDK handed the executor is not the JSON Taskbay sent: parts are { content: { $case, value } }.
    const sent = bodyOf(decisionId).params.message;
    expect(sent.parts).toEqual([{ text: SDK_APPROVAL_REQUEST.action.text }]);
    expect(got!.message.parts).toEqual([{ content: { $case: 'text', value: SDK_APPROVAL_REQUEST.action.text }, filename: '', mediaType: '' }]);
    expect(got!.taskId).toBe(o.remoteTaskId);
    // The claims are the decision Taskbay stored, signed for the agent's task by Taskbay's issuer.
    const [stored] = await t.sql('select id, revision, digest from decision where id = $1', [decisionId]);
    expect(got!.verdict).toMatchObject({
      ok: true,
      claims: {
        iss: PUBLIC_URL,
        requestId: o.requestId,
        decisionId: stored.id,
        revision: stored.revision,
        revisionDigest: stored.digest,
        taskId: o.remoteTaskId,
      },
      action: { kind: 'send_message', text: SDK_APPROVAL_REQUEST.action.text, data: SDK_APPROVAL_REQUEST.action.data },
    });
    expect(stored.digest).toBe(sha256(canon({ kind: 'send_message', text: SDK_APPROVAL_REQUEST.action.text, data: SDK_APPROVAL_REQUEST.action.data })));
    // Taskbay saw the agent complete, and recorded its report (sent in the SDK's part shape) as matching.
    expect(ledger.task.state).toBe('COMPLETED');
    expect(ledger.execution.evidence).toEqual([
      { decisionId, reportedDigest: stored.digest, approvedDigest: stored.digest, digestMatches: true, detail: 'done by the SDK agent' },
    ]);
  });

  it('send_data: the SDK keeps the data part’s media type; verified over the form the agent asked with', async () => {
    const o = await openRequest('approve data');
    const { decisionId, ledger } = await approve(o, 'DELIVERED');
    const got = lastVerdict();
    expect(got.message.parts).toEqual([{ content: { $case: 'data', value: o.approval.action.values }, filename: '', mediaType: 'application/json' }]);
    expect(got.verdict).toMatchObject({ ok: true, claims: { decisionId, taskId: o.remoteTaskId, revisionDigest: o.approval.digest } });
    expect(ledger.task.state).toBe('COMPLETED');
  });
});

describe('copies changed between Taskbay and the SDK agent are refused inside its executor, with the reason', () => {
  let second: Awaited<ReturnType<typeof openRequest>> & { decisionId: string; message: Message };

  beforeAll(async () => {
    // The second approval is taken off the wire: its delivery fails, its task stays waiting.
    const o = await openRequest('approve');
    agent.interceptNextApproval();
    const before = agent.verdicts.length;
    const { decisionId } = await approve(o, 'FAILED');
    expect(agent.verdicts.length, 'the intercepted message reached the executor').toBe(before);
    second = { ...o, decisionId, message: bodyOf(decisionId).params.message };
  });

  it('the text changed: the digest of what arrived is not the approved one', async () => {
    const changed = structuredClone(second.message);
    changed.parts = [{ text: 'Approved. Rotate the signing keys and delete the old ones.' }];
    const answer = await sendToAgent(changed, second.remoteTaskId);
    const computed = sha256(
      canon({ kind: 'send_message', text: 'Approved. Rotate the signing keys and delete the old ones.', data: SDK_APPROVAL_REQUEST.action.data }),
    );
    const reason = `the received content has digest ${computed}; the approved one is ${second.approval.digest}`;
    expect(lastVerdict()).toMatchObject({ taskId: second.remoteTaskId, verdict: { ok: false, reason } });
    expect(answer).toEqual({ state: 'TASK_STATE_INPUT_REQUIRED', text: `Approval refused: ${reason}` });
  });

  it('the signature of another decision: the fields received are not the ones signed', async () => {
    const swapped = structuredClone(second.message);
    (swapped.metadata!.approval as Record<string, unknown>).signature = (
      bodyOf(first.decisionId).params.message.metadata!.approval as { signature: string }
    ).signature;
    await sendToAgent(swapped, second.remoteTaskId);
    expect(lastVerdict().verdict).toEqual({
      ok: false,
      reason: `metadata.approval.requestId is ${JSON.stringify(second.requestId)}; the signature says ${JSON.stringify(first.requestId)}`,
    });
  });

  it('another task: a genuine approval replayed onto a task it was not signed for', async () => {
    await sendToAgent(bodyOf(first.decisionId).params.message, second.remoteTaskId);
    expect(lastVerdict()).toMatchObject({
      taskId: second.remoteTaskId,
      verdict: { ok: false, reason: `the approval was signed for task ${JSON.stringify(first.remoteTaskId)}, not ${JSON.stringify(second.remoteTaskId)}` },
    });
  });

  it('another issuer trusted: the signature verifies, but not from the Taskbay the agent trusts', async () => {
    agent.trust({ issuer: 'https://taskbay.other.example', jwksUrl: `${t.instance.url}${JWKS_PATH}` });
    try {
      await sendToAgent(second.message, second.remoteTaskId);
    } finally {
      agent.trust({ issuer: PUBLIC_URL, jwksUrl: `${t.instance.url}${JWKS_PATH}` });
    }
    expect(lastVerdict().verdict).toEqual({
      ok: false,
      reason: `the signature was issued by ${JSON.stringify(PUBLIC_URL)}, not "https://taskbay.other.example"`,
    });
  });

  it('and the message as Taskbay sent it still verifies on its task', async () => {
    const answer = await sendToAgent(second.message, second.remoteTaskId);
    expect(lastVerdict()).toMatchObject({
      taskId: second.remoteTaskId,
      verdict: { ok: true, claims: { decisionId: second.decisionId, requestId: second.requestId } },
    });
    expect(answer).toEqual({ state: 'TASK_STATE_COMPLETED', text: 'done by the SDK agent' });
  });
});
