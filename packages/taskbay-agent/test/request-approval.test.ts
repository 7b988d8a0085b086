import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendProbeEvent, eventually, untilProbeArrives } from '../../../server/test/support/harness.js';
import { ApprovalTimeoutError, ApprovalVerificationError, type ApprovalOutcome, readApproval, requestApproval, TaskbayApiError } from '../src/index.js';
import { decided, forgeSignature, inboxRequest, reviewer, signedApprovalsOf, startTaskbay, type Taskbay, tamperingFetch } from './support.js';

// requestApproval against a real Taskbay: the agent (a member's token) opens a request and waits;
// the reviewer (the admin, another person) decides over GraphQL once the request is in their
// inbox; what the agent gets back is compared with what Taskbay holds.

let tb: Taskbay;

beforeAll(async () => {
  tb = await startTaskbay();
});

afterAll(async () => {
  await tb?.t.stop();
});

const deploy = (externalId: string) => ({
  title: 'Deploy web 2.4.1 to production',
  risk: 'high' as const,
  externalId,
  action: { kind: 'send_message' as const, text: 'Deploy web 2.4.1 to production', data: { service: 'web', version: '2.4.1' } },
});

describe('requestApproval', () => {
  it('opens the request the reviewer sees, and answers APPROVED with the signed approval once it verifies', async () => {
    const asking = requestApproval({ ...tb.agent, ...deploy('deploy-1') });
    const seen = await inboxRequest(tb, 'deploy-1');
    expect(seen).toMatchObject({ title: 'Deploy web 2.4.1 to production', externalId: 'deploy-1', editable: true, requester: { id: tb.agentUserId } });
    await reviewer.approve(tb, seen, 'go ahead');
    const outcome = await asking;

    const held = await decided(tb, seen.id);
    const [signed] = signedApprovalsOf(held);
    expect(held.status).toBe('APPROVED');
    expect(outcome).toMatchObject({
      status: 'APPROVED',
      approvalId: seen.id,
      revision: held.revision,
      digest: held.digest,
      action: held.action,
      edited: false,
      comment: 'go ahead',
      decidedBy: { id: tb.reviewerId },
      decisionId: signed.decisionId,
    });
    expect(outcome.signedApproval).toEqual(signed);
    expect(outcome.claims).toMatchObject({ iss: tb.agent.url, requestId: signed.requestId, revisionDigest: held.digest, taskId: null, externalId: 'deploy-1' });
  });

  it('the requester cannot decide its own request (SEPARATION_OF_DUTIES); the reviewer rejects: REJECTED, their comment, nothing signed', async () => {
    const asking = requestApproval({ ...tb.agent, ...deploy('deploy-2') });
    const seen = await inboxRequest(tb, 'deploy-2');
    const own = await tb.t.gql(
      'mutation($id: ID!, $r: Int!, $d: String!) { approve(input: { approvalId: $id, revision: $r, digest: $d }) { id } }',
      { id: seen.id, r: seen.revision, d: seen.digest },
      tb.agent.token,
    );
    expect(own.errors?.[0]?.extensions?.code).toBe('SEPARATION_OF_DUTIES');
    await reviewer.reject(tb, seen, 'not on a Friday');
    const outcome = await asking;
    expect(outcome).toMatchObject({
      status: 'REJECTED',
      approvalId: seen.id,
      comment: 'not on a Friday',
      decidedBy: { id: tb.reviewerId },
      signedApproval: null,
      claims: null,
    });
    expect((await decided(tb, seen.id)).status).toBe('REJECTED');
  });

  it('edit then approve: answers the edited action, as signed (edited: true)', async () => {
    const asking = requestApproval({ ...tb.agent, ...deploy('deploy-3') });
    const seen = await inboxRequest(tb, 'deploy-3');
    const r = await tb.t.gql(
      'mutation($id: ID!, $r: Int!, $d: String!, $a: JSON!) { editAndApprove(input: { approvalId: $id, revision: $r, digest: $d, action: $a }) { id } }',
      {
        id: seen.id,
        r: seen.revision,
        d: seen.digest,
        a: { kind: 'send_message', text: 'Deploy web 2.4.0 to production', data: { service: 'web', version: '2.4.0' } },
      },
    );
    expect(r.errors).toBeUndefined();
    const outcome = await asking;
    const held = await decided(tb, seen.id);
    expect(held.revision).toBe(2);
    expect(outcome).toMatchObject({ status: 'APPROVED', edited: true, revision: held.revision, digest: held.digest, action: held.action });
    expect(outcome.digest).not.toBe(seen.digest);
  });

  it('editable: false reaches Taskbay: the reviewer cannot edit, only approve or reject', async () => {
    const asking = requestApproval({ ...tb.agent, ...deploy('deploy-4'), editable: false });
    const seen = await inboxRequest(tb, 'deploy-4');
    expect(seen.editable).toBe(false);
    const edit = await tb.t.gql(
      'mutation($id: ID!, $r: Int!, $d: String!, $a: JSON!) { editAndApprove(input: { approvalId: $id, revision: $r, digest: $d, action: $a }) { id } }',
      { id: seen.id, r: seen.revision, d: seen.digest, a: { ...seen.action, text: 'something else' } },
    );
    expect(edit.errors?.[0]?.extensions?.code).toBe('OUTCOME_NOT_ALLOWED');
    await reviewer.approve(tb, seen);
    expect(await asking).toMatchObject({ status: 'APPROVED', edited: false, digest: seen.digest });
  });

  it('the decision arrives over the SSE stream (reads turned off): decided after the stream is live', async () => {
    const changes: string[] = [];
    let id = '';
    const asking = requestApproval({
      ...tb.agent,
      ...deploy('deploy-5'),
      pollIntervalMs: 0,
      onChange: (c) => changes.push(c.status),
      onRequested: (r) => (id = r.approvalId),
    });
    const seen = await inboxRequest(tb, 'deploy-5');
    expect(id).toBe(seen.id);
    // Live once a change of this request reaches the stream (a probe event in its audit stream).
    await untilProbeArrives(async () => {
      const before = changes.length;
      await appendProbeEvent(tb.t, seen.id);
      return () => changes.length > before;
    });
    await reviewer.approve(tb, seen);
    expect((await asking).status).toBe('APPROVED');
    expect(changes.at(-1)).toBe('APPROVED');
  });

  it('a stream that never delivers loses nothing: the slow read finds the decision', async () => {
    let streams = 0;
    // Every subscription is answered as a stream that stays open and sends nothing (a connection
    // a proxy silently dropped); queries go through.
    const deadStreams: typeof fetch = async (input, init) => {
      if ((init?.headers as Record<string, string>)?.accept !== 'text/event-stream') return fetch(input, init);
      streams++;
      return new Response(new ReadableStream({ start() {} }), { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const changes: string[] = [];
    const asking = requestApproval({ ...tb.agent, ...deploy('deploy-6'), fetch: deadStreams, pollIntervalMs: 200, onChange: (c) => changes.push(c.status) });
    const seen = await inboxRequest(tb, 'deploy-6');
    await reviewer.approve(tb, seen);
    expect((await asking).status).toBe('APPROVED');
    expect(streams).toBe(1);
    expect(changes).toEqual([]);
  });

  it('timeoutMs: no decision in time is an ApprovalTimeoutError naming the request, which stays PENDING in Taskbay', async () => {
    const error = await requestApproval({ ...tb.agent, ...deploy('deploy-7'), timeoutMs: 1500, expiresInSeconds: 600 }).catch((e) => e);
    expect(error).toBeInstanceOf(ApprovalTimeoutError);
    const seen = await inboxRequest(tb, 'deploy-7');
    expect(error.approvalId).toBe(seen.id);
    expect((await readApproval({ ...tb.agent, approvalId: seen.id })).status).toBe('PENDING');
  });

  it('a request nobody decides before it expires: EXPIRED, nobody decided, nothing signed', async () => {
    // The shortest expiry a request may have: the expiry itself is what is waited for.
    const outcome = await requestApproval({ ...tb.agent, ...deploy('deploy-expiring'), expiresInSeconds: 1 });
    const held = await decided(tb, outcome.approvalId);
    expect(held.status).toBe('EXPIRED');
    expect(outcome).toMatchObject({
      status: 'EXPIRED',
      decidedBy: null,
      comment: null,
      decisionId: null,
      signedApproval: null,
      claims: null,
      digest: held.digest,
    });
  });

  it('Taskbay refusing the request (a title over 200 characters) is a TaskbayApiError with its code', async () => {
    const error = await requestApproval({ ...tb.agent, ...deploy('deploy-8'), title: 'x'.repeat(201) }).catch((e) => e);
    expect(error).toBeInstanceOf(TaskbayApiError);
    expect(error.apiCode).toBe('BAD_USER_INPUT');
  });
});

describe('an approval that does not verify is never returned', () => {
  /** Opens a request through `fetch`, has the reviewer approve it, and answers what requestApproval did. */
  async function approvedThrough(externalId: string, opts: { fetch?: typeof fetch; issuer?: string }) {
    const asking = requestApproval({ ...tb.agent, ...deploy(externalId), ...opts }).then(
      (o: ApprovalOutcome) => ({ ok: o }),
      (e: unknown) => ({ error: e }),
    );
    const seen = await inboxRequest(tb, externalId);
    await reviewer.approve(tb, seen);
    const result = await asking;
    // Taskbay approved it: the refusal is the agent's.
    expect((await decided(tb, seen.id)).status).toBe('APPROVED');
    return result as { ok?: ApprovalOutcome; error?: unknown };
  }

  it("Taskbay's signature replaced by one of another key: ApprovalVerificationError with the verifier's reason", async () => {
    const forged = tamperingFetch((a) => {
      for (const s of signedApprovalsOf(a)) s.signature = forgeSignature(s.signature);
    });
    const { ok, error } = await approvedThrough('forged-1', { fetch: forged });
    expect(ok).toBeUndefined();
    expect(error).toBeInstanceOf(ApprovalVerificationError);
    expect((error as ApprovalVerificationError).reason).toMatch(/signature/i);
  });

  it('the approved action changed in transit (signature intact): refused, its digest is not the signed one', async () => {
    const altered = tamperingFetch((a) => {
      for (const s of signedApprovalsOf(a)) s.action = { ...s.action, data: { ...s.action.data, version: '9.9.9' } };
    });
    const { error } = await approvedThrough('forged-2', { fetch: altered });
    expect(error).toBeInstanceOf(ApprovalVerificationError);
    expect((error as ApprovalVerificationError).reason).toMatch(/digest/);
  });

  it('the genuine signed approval of another request with the same externalId passed off as this one (its decision too): refused', async () => {
    // A genuine approval, signed by Taskbay, of an earlier request of the same call id (externalId
    // is not unique: a thread may ask again).
    const other = requestApproval({ ...tb.agent, ...deploy('forged-3') });
    await reviewer.approve(tb, await inboxRequest(tb, 'forged-3'));
    const genuine = (await other) as Extract<ApprovalOutcome, { status: 'APPROVED' }>;
    // Everything the answer says about the approval replaced by the other request's.
    const swapped = tamperingFetch((a) => {
      a.signedApproval = genuine.signedApproval;
      a.decisions = [{ id: genuine.decisionId, outcome: 'APPROVE', comment: null, vote: false, reviewer: genuine.decidedBy }];
    });
    const { error } = await approvedThrough('forged-3', { fetch: swapped });
    expect(error).toBeInstanceOf(ApprovalVerificationError);
    expect((error as ApprovalVerificationError).reason).toMatch(/^the signed approval is of request /);
  });

  it('an issuer other than the configured one: refused', async () => {
    const { error } = await approvedThrough('forged-4', { issuer: 'https://taskbay.example.com' });
    expect(error).toBeInstanceOf(ApprovalVerificationError);
    expect((error as ApprovalVerificationError).reason).toMatch(/issued by/);
  });
});

describe("Taskbay's limits on streams", () => {
  let capped: Taskbay;
  beforeAll(async () => {
    // One SSE subscription at a time per viewer (default 50).
    capped = await startTaskbay({ env: { TASKBAY_WS_MAX_SUBSCRIPTIONS: '1' } });
  });
  afterAll(async () => {
    await capped?.t.stop();
  });

  it('a stream Taskbay refuses for the viewer’s limit (TOO_MANY_OPERATIONS) is not an error: the reads carry the wait', async () => {
    // The HTTP status of each subscription Taskbay answers.
    const streams: number[] = [];
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.headers as Record<string, string>)?.accept === 'text/event-stream') streams.push(res.status);
      return res;
    };
    const first = requestApproval({ ...capped.agent, ...deploy('capped-1'), fetch: counting, pollIntervalMs: 200 });
    const seenFirst = await inboxRequest(capped, 'capped-1');
    await eventually(async () => streams.length === 1);
    const second = requestApproval({ ...capped.agent, ...deploy('capped-2'), fetch: counting, pollIntervalMs: 200 });
    const seenSecond = await inboxRequest(capped, 'capped-2');
    // The second one's stream is refused (HTTP 400, TOO_MANY_OPERATIONS) while the first holds the only one.
    await eventually(async () => streams.includes(400));
    await reviewer.approve(capped, seenSecond);
    expect((await second).status).toBe('APPROVED');
    await reviewer.approve(capped, seenFirst);
    expect((await first).status).toBe('APPROVED');
  });
});
