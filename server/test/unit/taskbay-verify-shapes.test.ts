import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { type Message, SendMessageRequest, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, RequestContext, ServerCallContext } from '@a2a-js/sdk/server';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionDigest,
  receivedAction,
  verifyApprovedMessage,
  type ApprovalAction,
  type ReceivedApprovedMessage,
  type VerifyOptions,
} from '../../../packages/taskbay-verify/src/index.js';
import type { Message as WireMessage } from '../../src/a2a/types.js';
import { approvalKeys, type ApprovalKeys } from '../../src/approval-signing/keys.js';
import { approvedMessage } from '../../src/delivery/worker.js';
import { DEPLOY_REQUEST_FORM } from '../../src/fixture-agent/content.js';
import { agentMessage, anyValue } from '../fuzz/arbitraries.js';

// @taskbay/verify takes the message an agent holds (issue 23): the A2A v1.0 JSON Taskbay sends,
// and the object @a2a-js/sdk 1.x hands an executor, which the SDK reads from that JSON into its
// own types (a part is { content: { $case, value }, mediaType, filename, metadata }). Messages
// here are Taskbay's (delivery/worker.ts approvedMessage) signed by Taskbay's signer
// (approval-signing/keys.ts), and the SDK's objects come from the SDK's own readers. Anything
// else is refused with what it was and what to pass instead; nothing makes it throw.

const ISSUER = 'https://taskbay.example';
const TASK = 'agent-task-7';
let keys: ApprovalKeys;

beforeAll(async () => {
  keys = await approvalKeys(generateKeyPairSync('ed25519').privateKey, [], ISSUER);
});

const opts = (extra: Partial<VerifyOptions> = {}): VerifyOptions => ({ jwks: keys.jwks, issuer: ISSUER, taskId: TASK, ...extra });

/** The message Taskbay delivers for `action`, signed for TASK, as JSON parsed from the wire. */
async function delivered(action: ApprovalAction, taskId = TASK): Promise<WireMessage> {
  const fields = { requestId: randomUUID(), decisionId: randomUUID(), revision: 1, revisionDigest: actionDigest(action) };
  const signature = await keys.sign({ ...fields, taskId }, new Date('2026-12-01T10:00:00Z'));
  const message = approvedMessage(action, { ...fields, signature }, { messageId: randomUUID(), taskId, contextId: 'ctx-1' });
  return JSON.parse(JSON.stringify(message));
}

/** What an @a2a-js/sdk executor gets as requestContext.userMessage for that JSON-RPC params.message. */
function asSdk(wire: WireMessage): Message {
  const request = SendMessageRequest.fromJSON({ message: wire });
  return new RequestContext(request, TASK, 'ctx-1', new ServerCallContext({ requestedVersion: '1.0' })).userMessage;
}

const SEND_MESSAGE: ApprovalAction = { kind: 'send_message', text: 'Approved. Delete the staging cluster.', data: { cluster: 'staging', nodes: [1, 2] } };
const SEND_DATA: ApprovalAction = {
  kind: 'send_data',
  form: DEPLOY_REQUEST_FORM as unknown as Record<string, unknown>,
  values: { environment: 'staging', replicas: 2 },
};

describe('verifyApprovedMessage reads both shapes an agent holds', () => {
  it('send_message: the A2A JSON and the @a2a-js/sdk message both verify, to the same claims and action', async () => {
    const wire = await delivered(SEND_MESSAGE);
    const sdk = asSdk(wire);
    // The SDK's part is not the wire part: no `text`, the content tagged by $case, mediaType ''.
    expect(sdk.parts[0]).toEqual({ content: { $case: 'text', value: wire.parts[0]!.text }, filename: '', mediaType: '' });
    expect(sdk.parts[0]).not.toHaveProperty('text');
    const fromWire = verifyApprovedMessage(wire, opts());
    const fromSdk = verifyApprovedMessage(sdk, opts());
    expect(fromWire).toMatchObject({ ok: true, keyId: keys.keyId });
    expect(fromSdk).toEqual(fromWire);
    expect(fromSdk.ok && fromSdk.action).toEqual({ kind: 'send_message', text: wire.parts[0]!.text, data: wire.metadata!.decision });
    expect(receivedAction(sdk)).toEqual(receivedAction(wire));
  });

  it('send_data: the SDK keeps the data part’s application/json media type; both verify over the form the agent asked with', async () => {
    const wire = await delivered(SEND_DATA);
    const sdk = asSdk(wire);
    expect(sdk.parts[0]).toMatchObject({ content: { $case: 'data', value: wire.parts[0]!.data }, mediaType: 'application/json' });
    const form = DEPLOY_REQUEST_FORM as unknown as Record<string, unknown>;
    const fromSdk = verifyApprovedMessage(sdk, opts({ form }));
    expect(fromSdk).toMatchObject({ ok: true, action: { kind: 'send_data', values: wire.parts[0]!.data } });
    expect(fromSdk).toEqual(verifyApprovedMessage(wire, opts({ form })));
    // Without the form the agent asked with, the digest is not the approved one.
    expect(verifyApprovedMessage(sdk, opts())).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the received content has digest [0-9a-f]{64}; the approved one is /),
    });
  });

  it('a changed SDK message is refused as a changed wire message is: the digest, naming the approved one', async () => {
    const wire = await delivered(SEND_MESSAGE);
    const sdk = asSdk(wire);
    (sdk.parts[0]!.content as { value: string }).value = 'Approved. Delete the production cluster.';
    const verdict = verifyApprovedMessage(sdk, opts());
    expect(verdict).toEqual({
      ok: false,
      reason: `the received content has digest ${actionDigest({ ...SEND_MESSAGE, text: 'Approved. Delete the production cluster.' })}; the approved one is ${wire.metadata!.approval && (wire.metadata!.approval as { revisionDigest: string }).revisionDigest}`,
    });
  });

  it('on generated actions, the SDK message gives the action the wire JSON gives, and both verify', async () => {
    const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });
    const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
    const object = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 4 });
    const action: fc.Arbitrary<ApprovalAction> = fc.oneof(
      fc.record({ kind: fc.constant('send_message' as const), text, data: fc.option(object, { nil: undefined }) }),
      fc.record({ kind: fc.constant('send_data' as const), form: object, values: object }),
    );
    await fc.assert(
      fc.asyncProperty(action, async (a) => {
        const wire = await delivered(a);
        const sdk = asSdk(wire);
        const form = a.kind === 'send_data' ? a.form : undefined;
        expect(receivedAction(sdk, form)).toEqual(receivedAction(wire, form));
        const verdict = verifyApprovedMessage(sdk, opts({ form }));
        expect(verdict.ok, verdict.ok ? '' : verdict.reason).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

describe('what is not a message is refused, saying what it was and what to pass instead', () => {
  const PASS = 'pass the message Taskbay sent: the params.message of its SendMessage request (in an @a2a-js/sdk executor, requestContext.userMessage)';
  const EXPECTED = 'expected an A2A message (an object with a parts array), got';

  it('each wrong shape an integrator may hold, from the SDK and from the wire', async () => {
    const wire = await delivered(SEND_MESSAGE);
    const sdk = asSdk(wire);
    const task = Task.fromJSON({ id: TASK, contextId: 'ctx-1', status: { state: 'TASK_STATE_WORKING' }, history: [wire] });
    const statusUpdate = TaskStatusUpdateEvent.fromJSON({ taskId: TASK, contextId: 'ctx-1', status: { state: 'TASK_STATE_COMPLETED' } });
    const cases: [string, unknown, string][] = [
      ['the JSON text', JSON.stringify(wire), `${EXPECTED} a string: pass the parsed message object (JSON.parse of the text), not its JSON text`],
      ['its bytes', Buffer.from(JSON.stringify(wire)), `${EXPECTED} bytes: decode them and pass the parsed message object (JSON.parse), not its bytes`],
      ['a fetch Response', new Response(JSON.stringify(wire)), `${EXPECTED} a fetch Response: read its JSON body and pass the A2A message it holds`],
      [
        'the JSON-RPC SendMessage request',
        { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: wire } },
        `${EXPECTED} a JSON-RPC "SendMessage" request: pass its params.message`,
      ],
      [
        'a JSON-RPC response',
        { jsonrpc: '2.0', id: 1, result: { task: Task.toJSON(task) } },
        `${EXPECTED} a JSON-RPC response: an agent verifies the request it receives; ${PASS}`,
      ],
      [
        'the SendMessage params',
        { message: wire, configuration: {} },
        `${EXPECTED} an object holding a message under "message" (SendMessage params, or a stream or send response): pass its .message`,
      ],
      [
        'a stream response { message }',
        { message: wire },
        `${EXPECTED} an object holding a message under "message" (SendMessage params, or a stream or send response): pass its .message`,
      ],
      [
        'a stream response { statusUpdate }',
        { statusUpdate: TaskStatusUpdateEvent.toJSON(statusUpdate) },
        `${EXPECTED} a status update event ({ statusUpdate }): a task's status is not the approved message; ${PASS}`,
      ],
      [
        'a send response { task }',
        { task: Task.toJSON(task) },
        `${EXPECTED} an object holding a Task under "task": a Task is not the approved message; ${PASS}`,
      ],
      ['the SDK Task', task, `${EXPECTED} an A2A Task (id "${TASK}"): ${PASS}, or the entry of the task's history that carries metadata.approval`],
      [
        'the wire Task',
        Task.toJSON(task),
        `${EXPECTED} an A2A Task (id "${TASK}"): ${PASS}, or the entry of the task's history that carries metadata.approval`,
      ],
      ['the SDK status update', statusUpdate, `${EXPECTED} a task status update: a task's status is not the approved message; ${PASS}`],
      [
        'the SDK RequestContext',
        new RequestContext(SendMessageRequest.fromJSON({ message: wire }), TASK, 'ctx-1', new ServerCallContext({ requestedVersion: '1.0' })),
        `${EXPECTED} an @a2a-js/sdk RequestContext: pass requestContext.userMessage (with taskId: requestContext.taskId)`,
      ],
      ['an SDK message event', AgentEvent.message(sdk), `${EXPECTED} an @a2a-js/sdk event ({ kind: "message", data }): pass its data`],
      [
        'an SDK status event',
        AgentEvent.statusUpdate(statusUpdate),
        `${EXPECTED} an @a2a-js/sdk event ({ kind: "statusUpdate", data }): not a message; ${PASS}`,
      ],
      [
        'an A2A v0.3 message',
        { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'text', text: wire.parts[0]!.text }], metadata: wire.metadata },
        `expected an A2A v1.0 message, got an A2A v0.3 message (kind "message"): Taskbay speaks A2A v1.0; ${PASS}`,
      ],
      [
        'v0.3 parts',
        { parts: [{ kind: 'text', text: wire.parts[0]!.text }], metadata: wire.metadata },
        `expected an A2A v1.0 message, got an A2A v0.3 message (parts[0] has kind "text"): Taskbay speaks A2A v1.0; ${PASS}`,
      ],
      [
        'a v0.3 task',
        { kind: 'task', id: TASK, status: { state: 'completed' } },
        `${EXPECTED} an A2A v0.3 object (kind "task"): Taskbay speaks A2A v1.0; ${PASS}`,
      ],
      ['a list of messages', [wire], `${EXPECTED} an array of 1: pass one message (the one whose metadata.approval you verify), not a list`],
      ['null', null, `${EXPECTED} null: ${PASS}`],
      ['undefined', undefined, `${EXPECTED} undefined: ${PASS}`],
      ['a number', 42, `${EXPECTED} a number: ${PASS}`],
      ['another object', { approval: wire.metadata!.approval }, `${EXPECTED} an object with keys "approval": ${PASS}`],
      ['parts that are not a list', { parts: { 0: wire.parts[0] }, metadata: wire.metadata }, `${EXPECTED} an object whose parts is not an array: ${PASS}`],
      ['a part that is not an object', { parts: [wire.parts[0], null], metadata: wire.metadata }, 'parts[1] is null, not a part object'],
      [
        'a part of both shapes',
        { parts: [{ ...wire.parts[0], content: { $case: 'text', value: 'x' } }], metadata: wire.metadata },
        'parts[0] has both content (the @a2a-js/sdk shape) and text (the A2A JSON shape); pass the message as it arrived',
      ],
    ];
    for (const [what, input, reason] of cases) {
      expect(verifyApprovedMessage(input as ReceivedApprovedMessage, opts()), what).toEqual({ ok: false, reason });
    }
    // receivedAction says the same, as a TypeError.
    expect(() => receivedAction(task as unknown as ReceivedApprovedMessage)).toThrow(new TypeError(cases.find(([w]) => w === 'the SDK Task')![2]));
  });

  it('options that cannot verify a message say which option and what it must be', async () => {
    const wire = await delivered(SEND_MESSAGE);
    const noTask = { jwks: keys.jwks, issuer: ISSUER } as unknown as VerifyOptions;
    expect(verifyApprovedMessage(wire, noTask)).toEqual({
      ok: false,
      reason:
        'opts.taskId is not a string: pass your id of the task the message arrived on (in an @a2a-js/sdk executor, requestContext.taskId); for an approval without a task, use verifySignedApproval',
    });
    expect(verifyApprovedMessage(wire, { ...opts(), jwks: undefined } as unknown as VerifyOptions)).toEqual({
      ok: false,
      reason: 'opts.jwks is not a JWKS ({ keys: [...] }): pass the trusted keys (fetchJwks)',
    });
    expect(verifyApprovedMessage(wire, undefined as unknown as VerifyOptions)).toEqual({
      ok: false,
      reason: 'no options given: pass { jwks, issuer, taskId }',
    });
  });
});

describe('hostile input never makes it throw', () => {
  it('content JSON cannot carry, under a genuine signature, is refused (a lone surrogate; nesting deeper than the stack)', async () => {
    const wire = await delivered(SEND_MESSAGE);
    const lone = structuredClone(wire);
    lone.parts[0]!.text = 'Approved.\ud800';
    expect(verifyApprovedMessage(lone, opts())).toEqual({ ok: false, reason: 'the received content cannot be hashed (Lone surrogate is not allowed)' });
    const deep = structuredClone(wire);
    let inner: Record<string, unknown> = {};
    deep.metadata!.decision = inner;
    for (let i = 0; i < 200_000; i++) inner = inner.next = {};
    expect(verifyApprovedMessage(deep, opts())).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the received content cannot be hashed \(Maximum call stack size exceeded\)$/),
    });
  });

  it('a message whose every read throws (a proxy) is refused with what threw', () => {
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom');
        },
        has: () => true,
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    expect(verifyApprovedMessage(trap as ReceivedApprovedMessage, opts())).toEqual({ ok: false, reason: 'the message could not be read (boom)' });
  });

  it('generated hostile messages, parts and options: a refusal, never an exception', async () => {
    const wire = await delivered(SEND_MESSAGE);
    const input = fc.oneof(
      anyValue,
      agentMessage,
      // A genuine approval beside hostile parts and metadata.
      fc.record({
        parts: fc.oneof(anyValue, fc.array(anyValue, { maxLength: 4 })),
        metadata: fc.record({ approval: fc.constant(wire.metadata!.approval), decision: anyValue }),
      }),
      fc.record({ parts: fc.array(fc.record({ content: anyValue, mediaType: anyValue }), { maxLength: 3 }), metadata: fc.constant(wire.metadata) }),
    );
    const options = fc.oneof({ weight: 4, arbitrary: fc.constant(opts()) }, { weight: 1, arbitrary: anyValue });
    fc.assert(
      fc.property(input, options, (message, o) => {
        const verdict = verifyApprovedMessage(message as ReceivedApprovedMessage, o as VerifyOptions);
        expect(verdict.ok).toBe(false);
        expect(typeof (verdict as { reason: unknown }).reason).toBe('string');
      }),
      { numRuns: 1500 },
    );
  });
});
