import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionDigest,
  APPROVAL_TOKEN_TYPE,
  verifyApprovedMessage,
  verifySignedApproval,
  type ApprovalAction,
  type SignedApproval,
  type VerifySignedOptions,
} from '../../../packages/taskbay-verify/src/index.js';
import { approvalKeys, type ApprovalKeys } from '../../src/approval-signing/keys.js';
import { canonicalSha256 } from '../../src/lib/hashing.js';
import { approvedMessage } from '../../src/delivery/worker.js';
import { anyValue } from '../fuzz/arbitraries.js';

// verifySignedApproval (issue 23): a request opened without an A2A task gets its decision signed
// as an approved message is (the same JWS: EdDSA, typ taskbay-approval+jwt, the same JWKS) over
// claims { iss, iat, requestId, decisionId, revision, revisionDigest, taskId: null, externalId? }.
// The server side is built apart; the signatures here are made by Taskbay's real signer
// (approval-signing/keys.ts), and a maintained JOSE library reads the same token for comparison.

const ISSUER = 'https://taskbay.example';
let keys: ApprovalKeys;
let otherKeys: ApprovalKeys;

beforeAll(async () => {
  keys = await approvalKeys(generateKeyPairSync('ed25519').privateKey, [], ISSUER);
  otherKeys = await approvalKeys(generateKeyPairSync('ed25519').privateKey, [], ISSUER);
});

const ACTION: ApprovalAction = { kind: 'send_message', text: 'Approved. Refund order 1042.', data: { orderId: 1042, amount: '19.90' } };

/** A decision on a request without a task, signed by `signer` as Taskbay signs it. */
async function signed(opts: { action?: ApprovalAction; externalId?: string; taskId?: string | null; signer?: ApprovalKeys } = {}): Promise<SignedApproval> {
  const action = opts.action ?? ACTION;
  const fields = { requestId: randomUUID(), decisionId: randomUUID(), revision: 2, revisionDigest: actionDigest(action) };
  const claims = { ...fields, taskId: opts.taskId ?? null, ...(opts.externalId !== undefined ? { externalId: opts.externalId } : {}) };
  const signature = await (opts.signer ?? keys).sign(claims, new Date('2026-12-01T10:00:00Z'));
  return { ...fields, signature, action, ...(opts.externalId !== undefined ? { externalId: opts.externalId } : {}) };
}

const trusted = (extra: Partial<VerifySignedOptions> = {}): VerifySignedOptions => ({ jwks: keys.jwks, issuer: ISSUER, ...extra });

describe('verifySignedApproval: a request without an A2A task', () => {
  it('verifies a decision signed by Taskbay’s signer, to the claims a JOSE library reads from the same token', async () => {
    for (const s of [await signed({ externalId: 'refund-1042' }), await signed()]) {
      const verdict = verifySignedApproval(s, trusted(s.externalId ? { externalId: s.externalId } : {}));
      const { payload, protectedHeader } = await jwtVerify(s.signature, createLocalJWKSet(keys.jwks as never), { issuer: ISSUER, typ: APPROVAL_TOKEN_TYPE });
      expect(verdict).toEqual({ ok: true, claims: payload, action: ACTION, keyId: protectedHeader.kid });
      expect(payload.taskId).toBeNull();
    }
  });

  it('send_data, and an action carrying more than its kind: the verdict’s action is what the digest covers', async () => {
    const data: ApprovalAction = { kind: 'send_data', form: { schema: { type: 'object' } }, values: { amount: 5 } };
    const s = await signed({ action: data });
    const verdict = verifySignedApproval({ ...s, action: { ...s.action, commands: ['rm -rf /'] } as unknown as ApprovalAction }, trusted());
    expect(verdict).toMatchObject({ ok: true, action: data });
    expect(verdict.ok && verdict.action).not.toHaveProperty('commands');
  });

  it('a command approval’s run_command: hashed whole, as the server hashes it (lib/hashing.ts canonicalSha256)', async () => {
    const command = { kind: 'run_command', agent_id: 'claude-code', commands: ['git push --force origin main'], payload: { cwd: '/repo', rollback: null } };
    const fields = { requestId: randomUUID(), decisionId: randomUUID(), revision: 1, revisionDigest: canonicalSha256(command) };
    const signature = await keys.sign({ ...fields, taskId: null }, new Date('2026-12-01T10:00:00Z'));
    const s = { ...fields, signature, action: command } as unknown as SignedApproval;
    expect(verifySignedApproval(s, trusted())).toMatchObject({ ok: true, action: command, claims: { revisionDigest: canonicalSha256(command) } });
    const changed = { ...command, commands: ['git push --force origin main', 'rm -rf /'] };
    expect(verifySignedApproval({ ...s, action: changed } as unknown as SignedApproval, trusted())).toEqual({
      ok: false,
      reason: `the action has digest ${canonicalSha256(changed)}; the approved one is ${fields.revisionDigest}`,
    });
  });

  it('refuses each tampering, with the reason', async () => {
    const s = await signed({ externalId: 'refund-1042' });
    const other = await signed({ externalId: 'refund-1043' });
    const claims = JSON.parse(Buffer.from(s.signature.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const changedAction: ApprovalAction = { ...ACTION, text: 'Approved. Refund order 1042 twice.' } as ApprovalAction;
    const cases: [string, unknown, VerifySignedOptions, string][] = [
      [
        'the action changed',
        { ...s, action: changedAction },
        trusted(),
        `the action has digest ${actionDigest(changedAction)}; the approved one is ${claims.revisionDigest}`,
      ],
      [
        'the signature of another decision',
        { ...s, signature: other.signature },
        trusted(),
        `approval.requestId is ${JSON.stringify(s.requestId)}; the signature says ${JSON.stringify(other.requestId)}`,
      ],
      [
        'another decision id',
        { ...s, decisionId: other.decisionId },
        trusted(),
        `approval.decisionId is ${JSON.stringify(other.decisionId)}; the signature says ${JSON.stringify(claims.decisionId)}`,
      ],
      ['another revision', { ...s, revision: 3 }, trusted(), `approval.revision is 3; the signature says ${claims.revision}`],
      ['another issuer trusted', s, trusted({ issuer: 'https://other.example' }), `the signature was issued by "${ISSUER}", not "https://other.example"`],
      ['a key not in the JWKS', s, trusted({ jwks: otherKeys.jwks }), `key ${keys.keyId} is not an Ed25519 key of the trusted JWKS`],
      [
        'another externalId beside the signature',
        { ...s, externalId: 'refund-9999' },
        trusted(),
        `approval.externalId is "refund-9999"; the signature says "refund-1042"`,
      ],
      [
        'no externalId beside a signature naming one',
        { ...s, externalId: undefined },
        trusted(),
        `approval.externalId is undefined; the signature says "refund-1042"`,
      ],
      ['another externalId expected', s, trusted({ externalId: 'refund-7' }), 'the approval was signed for externalId "refund-1042", not "refund-7"'],
      ['a task expected', s, trusted({ taskId: 'task-1' }), 'the approval was signed for task null, not "task-1"'],
      [
        'no action',
        { ...s, action: undefined },
        trusted(),
        'the approval carries no action ({ kind: "send_message", text, data? }, { kind: "send_data", form, values }, or another kind)',
      ],
      [
        'a message instead',
        { parts: [{ text: 'x' }], metadata: {} },
        trusted(),
        'expected a signed approval, got an A2A message: verify a message delivered on a task with verifyApprovedMessage',
      ],
      ['a string', s.signature, trusted(), 'expected a signed approval ({ requestId, decisionId, revision, revisionDigest, signature, action }), got a string'],
    ];
    for (const [what, input, opts, reason] of cases) expect(verifySignedApproval(input as SignedApproval, opts), what).toEqual({ ok: false, reason });
    const withoutExternal = await signed();
    expect(verifySignedApproval(withoutExternal, trusted({ externalId: 'refund-1042' }))).toEqual({
      ok: false,
      reason: 'the approval was signed for externalId null, not "refund-1042"',
    });
  });

  it('a signature for a task is not one for a request without a task, nor the other way round', async () => {
    const onTask = await signed({ taskId: 'agent-task-1' });
    expect(verifySignedApproval(onTask, trusted())).toEqual({
      ok: false,
      reason: 'the approval was signed for task "agent-task-1", not for a request without a task',
    });
    expect(verifySignedApproval(onTask, trusted({ taskId: 'agent-task-1' }))).toMatchObject({ ok: true });
    // A taskless signature under a delivered message does not pass for one on a task.
    const taskless = await signed();
    const message = approvedMessage(ACTION, taskless, { messageId: randomUUID(), taskId: 'agent-task-1' });
    expect(verifyApprovedMessage(message, { jwks: keys.jwks, issuer: ISSUER, taskId: 'agent-task-1' })).toEqual({
      ok: false,
      reason: 'the approval was signed for task null, not "agent-task-1"',
    });
  });

  it('hostile approvals and options: a refusal, never an exception', async () => {
    const s = await signed();
    const input = fc.oneof(
      anyValue,
      fc.record({
        requestId: anyValue,
        decisionId: anyValue,
        revision: anyValue,
        revisionDigest: anyValue,
        signature: fc.oneof(fc.constant(s.signature), anyValue),
        action: anyValue,
      }),
      fc.record({ ...Object.fromEntries(Object.entries(s).map(([k, v]) => [k, fc.constant(v)])), action: anyValue, externalId: anyValue }),
    );
    fc.assert(
      fc.property(input, fc.oneof({ weight: 4, arbitrary: fc.constant(trusted()) }, { weight: 1, arbitrary: anyValue }), (approval, opts) => {
        const verdict = verifySignedApproval(approval as SignedApproval, opts as VerifySignedOptions);
        if (verdict.ok) expect(approval).toMatchObject({ requestId: s.requestId, signature: s.signature });
        else expect(typeof verdict.reason).toBe('string');
      }),
      { numRuns: 1500 },
    );
  });
});
