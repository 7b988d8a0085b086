import { describe, it, expect, afterAll, beforeAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { AgentCardError, advertisedExtensionUris, advertises, fetchAgentCard, preferredJsonRpcInterface, validateAgentCard } from '../../src/a2a/card.js';
import { A2AClient, A2AError, parseSendMessageResult } from '../../src/a2a/client.js';
import { AGENT_LIMITS, JSON_DEPTH_MAX } from '../../src/limits.js';
import { AgentConnection } from '../../src/a2a/connection.js';
import { JsonRpcTransport } from '../../src/a2a/jsonrpc.js';
import {
  A2UI_EXTENSION,
  APPROVAL_REQUEST_EXTENSION,
  EXECUTION_EVIDENCE_EXTENSION,
  MEDIA_TYPE,
  STRUCTURED_FORM_EXTENSION,
  TASKBAY_EXTENSIONS,
} from '../../src/a2a/extensions.js';
import type { AgentCard, Message, Part, SendMessageResult, Task } from '../../src/a2a/types.js';
import { canon, sha256 } from '../support/independent-digest.js';
import { VARIANTS, type Variant } from '../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';

let agent: FixtureAgent;
const extraServers: Server[] = [];

beforeAll(async () => {
  agent = await startFixtureAgent({ port: 0 });
});

afterAll(async () => {
  await agent?.close();
  await Promise.all(extraServers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

function userMessage(parts: Part[], extra: Partial<Message> = {}): Message {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra };
}

async function clientFor(variant: Variant): Promise<{ card: AgentCard; client: A2AClient }> {
  const card = await fetchAgentCard(agent.cardUrl(variant));
  const iface = preferredJsonRpcInterface(card);
  if (!iface) throw new Error('no JSON-RPC interface');
  return { card, client: new A2AClient({ url: iface.url, extensions: advertisedExtensionUris(card) }) };
}

function taskOf(result: SendMessageResult): Task {
  if (!('task' in result)) throw new Error('expected a task result');
  return result.task;
}

function statusText(task: Task): string {
  return (task.status.message?.parts ?? []).map((p) => p.text ?? '').join('');
}

function approvalParts(task: Task): Part[] {
  return (task.status.message?.parts ?? []).filter((p) => p.mediaType === MEDIA_TYPE.approvalRequest);
}

/** A throwaway HTTP server answering every request with the given handler. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  extraServers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

const SEED_000_REQUEST = {
  title: 'Delete the staging cluster',
  summary: 'Removes all staging nodes and volumes.',
  risk: 'high',
  expiresInSeconds: 3600,
  action: { kind: 'send_message', text: 'Approved. Delete the staging cluster.' },
};

describe('fixture agent cards', () => {
  const expected: Record<Variant, string[]> = {
    showcase: [APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION, A2UI_EXTENSION],
    form: [STRUCTURED_FORM_EXTENSION],
    approver: [APPROVAL_REQUEST_EXTENSION],
    a2ui: [A2UI_EXTENSION],
    plain: [],
    invalid: [APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION],
    rogue: [APPROVAL_REQUEST_EXTENSION],
    unknown: [APPROVAL_REQUEST_EXTENSION],
    scripted: [APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION, A2UI_EXTENSION, EXECUTION_EVIDENCE_EXTENSION],
    reporter: [APPROVAL_REQUEST_EXTENSION, EXECUTION_EVIDENCE_EXTENSION],
    divergent: [APPROVAL_REQUEST_EXTENSION, EXECUTION_EVIDENCE_EXTENSION],
    unlisted: [APPROVAL_REQUEST_EXTENSION],
    deployer: [APPROVAL_REQUEST_EXTENSION],
  };

  it.each(VARIANTS.map((v) => [v]))('%s serves a valid card with its extensions', async (variant) => {
    const card = await fetchAgentCard(agent.cardUrl(variant));
    expect(card.supportedInterfaces[0]).toEqual({
      url: `${agent.baseUrl}/${variant}/a2a`,
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    });
    expect(card.capabilities.streaming).toBe(false);
    expect(advertisedExtensionUris(card).sort()).toEqual([...expected[variant]].sort());
    expect(advertises(card, APPROVAL_REQUEST_EXTENSION)).toBe(expected[variant].includes(APPROVAL_REQUEST_EXTENSION));
    for (const ext of card.capabilities.extensions ?? []) expect(ext.required).toBe(false);
    expect(card.skills.length).toBeGreaterThan(0);
  });

  it('showcase and form carry the "New deployment task" start form', async () => {
    for (const variant of ['showcase', 'form'] as const) {
      const card = await fetchAgentCard(agent.cardUrl(variant));
      const ext = card.capabilities.extensions?.find((e) => e.uri === STRUCTURED_FORM_EXTENSION);
      const startForm = ext?.params?.startForm as { title?: string; schema?: { type?: string } } | undefined;
      expect(startForm?.title).toBe('New deployment task');
      expect(startForm?.schema?.type).toBe('object');
    }
  });

  it("the deployer's only skill is deploy, the skill the shipped example policy targets (docs/samples/deploy-policy.json)", async () => {
    const card = await fetchAgentCard(agent.cardUrl('deployer'));
    expect(card.skills.map((s) => s.id)).toEqual(['deploy']);
  });
});

describe('SendMessage through A2AClient', () => {
  it('showcase answers "approve" with INPUT_REQUIRED and the seed approval part, and sees the headers', async () => {
    const { client } = await clientFor('showcase');
    const before = agent.received.length;
    const task = taskOf(await client.sendMessage({ message: userMessage([{ text: '  Approve ' }]) }));

    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(task.status.message?.role).toBe('ROLE_AGENT');
    expect(task.status.message?.parts.some((p) => typeof p.text === 'string' && p.text.length > 0)).toBe(true);
    const parts = approvalParts(task);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.data).toEqual(SEED_000_REQUEST);
    expect(task.history?.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);

    const seen = agent.received.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['a2a-version']).toBe('1.0');
    const uris = (seen[0]!.headers['a2a-extensions'] ?? '').split(',').map((s) => s.trim());
    expect(uris.sort()).toEqual([APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION, A2UI_EXTENSION].sort());
    expect(seen[0]!.duplicate).toBe(false);
  });

  it('omits A2A-Extensions when there is nothing to activate', async () => {
    const client = new A2AClient({ url: agent.a2aUrl('plain'), extensions: [] });
    const before = agent.received.length;
    const task = taskOf(await client.sendMessage({ message: userMessage([{ text: 'hello' }]) }));
    expect(statusText(task)).toContain('Say approve to get an approval request');
    const seen = agent.received.slice(before);
    expect(seen[0]!.headers['a2a-version']).toBe('1.0');
    expect(seen[0]!.headers['a2a-extensions']).toBeUndefined();
  });

  it('continues a task by taskId and gives every agent message a fresh messageId', async () => {
    const { client } = await clientFor('approver');
    const first = taskOf(await client.sendMessage({ message: userMessage([{ text: 'hi' }]) }));
    const second = taskOf(
      await client.sendMessage({
        message: userMessage([{ text: 'approve' }], { taskId: first.id, contextId: first.contextId }),
      }),
    );
    expect(second.id).toBe(first.id);
    expect(second.contextId).toBe(first.contextId);
    expect(second.status.message?.messageId).not.toBe(first.status.message?.messageId);
    expect(second.history).toHaveLength(4);
    expect(approvalParts(second)).toHaveLength(1);
  });

  it('unknown taskId is a JSON-RPC error', async () => {
    const { client } = await clientFor('showcase');
    const err = await client.sendMessage({ message: userMessage([{ text: 'approve' }], { taskId: 'no-such-task' }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(A2AError);
    expect((err as A2AError).kind).toBe('rpc');
    expect((err as A2AError).rpcCode).toBe(-32001);
  });

  it('unknown method is -32601, malformed JSON is -32700, a non-request is -32600', async () => {
    const rpc = new JsonRpcTransport(new AgentConnection({ url: agent.a2aUrl('showcase'), extensions: [] }));
    const err = await rpc.call('NoSuchMethod', {}).catch((e: unknown) => e);
    expect((err as A2AError).kind).toBe('rpc');
    expect((err as A2AError).rpcCode).toBe(-32601);

    const post = (body: string) =>
      fetch(agent.a2aUrl('showcase'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }).then(
        (r) => r.json() as Promise<{ error?: { code: number } }>,
      );
    expect((await post('{not json')).error?.code).toBe(-32700);
    expect((await post('[1,2]')).error?.code).toBe(-32600);
    expect((await post(JSON.stringify({ jsonrpc: '2.0', method: 'SendMessage', params: {} }))).error?.code).toBe(-32600);
  });
});

/** Seed 000's digest of an action, computed without the product's code (the fixture agent uses it). */
const independentDigest = (action: Record<string, unknown>) => sha256(canon(action));

describe('approved messages', () => {
  async function openApproval(variant: Variant, text = 'approve'): Promise<{ client: A2AClient; task: Task }> {
    const { client } = await clientFor(variant);
    const task = taskOf(await client.sendMessage({ message: userMessage([{ text }]) }));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    return { client, task };
  }

  function approvalMeta(revisionDigest: string, revision = 1) {
    return { approval: { requestId: randomUUID(), decisionId: randomUUID(), revision, revisionDigest } };
  }

  it('send_message with a matching digest completes and echoes the digest', async () => {
    const { client, task } = await openApproval('showcase');
    const text = SEED_000_REQUEST.action.text;
    const digest = independentDigest({ kind: 'send_message', text, data: null });
    const done = taskOf(
      await client.sendMessage({
        message: userMessage([{ text }], { taskId: task.id, contextId: task.contextId, metadata: approvalMeta(digest) }),
      }),
    );
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(statusText(done)).toBe(`Done. Approved revision 1, digest ${digest}`);
  });

  it('send_message data travels in metadata.decision and is part of the digest', async () => {
    const { client, task } = await openApproval('approver');
    const text = 'Approved with data.';
    const data = { window: 'tonight', confirm: true };
    const digest = independentDigest({ kind: 'send_message', text, data });
    const done = taskOf(
      await client.sendMessage({
        message: userMessage([{ text }], {
          taskId: task.id,
          metadata: { ...approvalMeta(digest, 2), decision: data },
        }),
      }),
    );
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(statusText(done)).toBe(`Done. Approved revision 2, digest ${digest}`);
  });

  it('a digest that does not match what arrived fails the task and names both digests', async () => {
    const { client, task } = await openApproval('showcase');
    const claimed = independentDigest({ kind: 'send_message', text: 'Something else entirely', data: null });
    const expectedDigest = independentDigest({ kind: 'send_message', text: SEED_000_REQUEST.action.text, data: null });
    const failed = taskOf(
      await client.sendMessage({
        message: userMessage([{ text: SEED_000_REQUEST.action.text }], { taskId: task.id, metadata: approvalMeta(claimed) }),
      }),
    );
    expect(failed.status.state).toBe('TASK_STATE_FAILED');
    expect(statusText(failed)).toBe(`Digest mismatch: expected ${expectedDigest}, got ${claimed}`);
  });

  it('send_data recomputes the digest from the form it asked with and the values part', async () => {
    const { client, task } = await openApproval('approver', 'approve data');
    const request = approvalParts(task)[0]!.data as {
      action: { kind: string; form: Record<string, unknown>; values: Record<string, unknown> };
    };
    expect(request.action.kind).toBe('send_data');
    expect((request.action.form as { title?: string }).title).toBe('Deploy request');
    expect(request.action.values).toEqual({ environment: 'staging', replicas: 2 });

    const values = { environment: 'staging', replicas: 2 };
    const digest = independentDigest({ kind: 'send_data', form: request.action.form, values });
    const done = taskOf(
      await client.sendMessage({
        message: userMessage([{ data: values, mediaType: MEDIA_TYPE.json }], { taskId: task.id, metadata: approvalMeta(digest) }),
      }),
    );
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');

    const second = await openApproval('approver', 'approve data');
    const tampered = taskOf(
      await second.client.sendMessage({
        message: userMessage([{ data: { environment: 'production', replicas: 2 }, mediaType: MEDIA_TYPE.json }], {
          taskId: second.task.id,
          metadata: approvalMeta(digest),
        }),
      }),
    );
    expect(tampered.status.state).toBe('TASK_STATE_FAILED');
    expect(statusText(tampered)).toMatch(/^Digest mismatch: expected [0-9a-f]{64}, got /);
  });

  it('a repeated messageId on the same task is recorded as duplicate and not processed again', async () => {
    const { client, task } = await openApproval('showcase');
    const text = SEED_000_REQUEST.action.text;
    const digest = independentDigest({ kind: 'send_message', text, data: null });
    const message = userMessage([{ text }], { taskId: task.id, metadata: approvalMeta(digest) });

    const before = agent.received.length;
    const first = taskOf(await client.sendMessage({ message }));
    const retry = taskOf(await client.sendMessage({ message }));
    expect(first.status.state).toBe('TASK_STATE_COMPLETED');
    expect(retry.status.state).toBe('TASK_STATE_COMPLETED');
    expect(retry.status.message?.messageId).toBe(first.status.message?.messageId);
    expect(retry.history).toHaveLength(first.history!.length);
    const seen = agent.received.slice(before);
    expect(seen.map((r) => r.duplicate)).toEqual([false, true]);
    expect(seen.every((r) => r.message.messageId === message.messageId)).toBe(true);
  });

  it('a retried first message returns the task it started instead of starting another', async () => {
    const { client } = await clientFor('approver');
    const message = userMessage([{ text: 'approve' }]);
    const a = taskOf(await client.sendMessage({ message }));
    const b = taskOf(await client.sendMessage({ message }));
    expect(b.id).toBe(a.id);
    expect(agent.received.filter((r) => r.message.messageId === message.messageId).map((r) => r.duplicate)).toEqual([false, true]);
  });
});

describe('variants', () => {
  async function send(variant: Variant, parts: Part[]): Promise<Task> {
    const { client } = await clientFor(variant);
    return taskOf(await client.sendMessage({ message: userMessage(parts) }));
  }

  it('plain sends the approval part although it does not advertise the extension', async () => {
    const task = await send('plain', [{ text: 'approve' }]);
    expect(approvalParts(task).map((p) => p.data)).toEqual([SEED_000_REQUEST]);
  });

  it('invalid sends an empty title and an over-limit text', async () => {
    const parts = approvalParts(await send('invalid', [{ text: 'approve' }]));
    expect(parts).toHaveLength(2);
    expect((parts[0]!.data as { title: string }).title).toBe('');
    expect((parts[1]!.data as { action: { text: string } }).action.text.length).toBeGreaterThan(20000);
  });

  it('rogue names assignee, reviewer, policy, status and another task, with HTML in the summary', async () => {
    const [part] = approvalParts(await send('rogue', [{ text: 'approve' }]));
    const data = part!.data as Record<string, unknown>;
    expect(data).toMatchObject({ status: 'APPROVED', taskId: 'someone-else' });
    expect(Object.keys(data)).toEqual(expect.arrayContaining(['assignee', 'reviewer', 'policy']));
    expect(data.summary).toContain('<script>alert(1)</script><b>x</b>');
  });

  it('unknown sends unknown media types and a run_tool action', async () => {
    const task = await send('unknown', [{ text: 'approve' }]);
    const mediaTypes = task.status.message!.parts.map((p) => p.mediaType);
    expect(mediaTypes).toContain('application/x-unknown+json');
    expect((approvalParts(task)[0]!.data as { action: { kind: string } }).action.kind).toBe('run_tool');
  });

  it('form asks with the seed 003 Deploy request form on any text, and validates the reply', async () => {
    const { client } = await clientFor('form');
    const task = taskOf(await client.sendMessage({ message: userMessage([{ text: 'deploy please' }]) }));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const form = task.status.message!.parts.find((p) => p.mediaType === MEDIA_TYPE.form)?.data as {
      title: string;
      order: string[];
    };
    expect(form.title).toBe('Deploy request');
    expect(form.order).toEqual(['environment', 'replicas', 'note', 'dryRun']);

    const bad = taskOf(
      await client.sendMessage({
        message: userMessage([{ data: { environment: 'moon', replicas: 2 }, mediaType: MEDIA_TYPE.json }], { taskId: task.id }),
      }),
    );
    expect(bad.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const good = taskOf(
      await client.sendMessage({
        message: userMessage([{ data: { environment: 'staging', replicas: 3 }, mediaType: MEDIA_TYPE.json }], { taskId: task.id }),
      }),
    );
    expect(good.status.state).toBe('TASK_STATE_COMPLETED');
    expect(statusText(good)).toContain('staging');
  });

  it('a2ui sends an A2UI surface', async () => {
    const task = await send('a2ui', [{ text: 'show me' }]);
    const surface = task.status.message!.parts.find((p) => p.mediaType === MEDIA_TYPE.a2ui)?.data;
    expect(Array.isArray(surface)).toBe(true);
    expect(JSON.stringify(surface)).toContain('createSurface');
  });

  it('scripted answers with exactly the scripted state and parts', async () => {
    const parts = [{ text: 'scripted!' }, { data: { anything: [1, 2] }, mediaType: 'application/x-test+json' }];
    const task = await send('scripted', [
      { text: 'ignored' },
      { data: { reply: { state: 'TASK_STATE_AUTH_REQUIRED', parts } }, mediaType: 'application/json' },
    ]);
    expect(task.status.state).toBe('TASK_STATE_AUTH_REQUIRED');
    expect(task.status.message?.parts).toEqual(parts);
  });

  it('scripted rejects an unknown state with invalid params', async () => {
    const { client } = await clientFor('scripted');
    const err = await client
      .sendMessage({
        message: userMessage([{ data: { reply: { state: 'DONE', parts: [] } }, mediaType: 'application/json' }]),
      })
      .catch((e: unknown) => e);
    expect((err as A2AError).rpcCode).toBe(-32602);
  });
});

describe('A2AClient failures', () => {
  it('failNext makes the next POSTs answer HTTP errors (kind http_status), then recovers', async () => {
    const { client } = await clientFor('approver');
    agent.failNext('approver', 2);
    for (let i = 0; i < 2; i++) {
      const err = await client.sendMessage({ message: userMessage([{ text: 'approve' }]) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(A2AError);
      expect((err as A2AError).kind).toBe('http_status');
      expect((err as A2AError).status).toBe(503);
    }
    agent.failNext('approver', 1, 500);
    const err = await client.sendMessage({ message: userMessage([{ text: 'approve' }]) }).catch((e: unknown) => e);
    expect((err as A2AError).status).toBe(500);
    const ok = taskOf(await client.sendMessage({ message: userMessage([{ text: 'approve' }]) }));
    expect(ok.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('a closed port is unreachable', async () => {
    const client = new A2AClient({ url: `${await closedPortUrl()}/a2a`, extensions: [] });
    const err = await client.sendMessage({ message: userMessage([{ text: 'x' }]) }).catch((e: unknown) => e);
    expect((err as A2AError).kind).toBe('unreachable');
    expect((err as A2AError).message).toContain('connection refused');
  });

  it('a response with the wrong JSON-RPC id, no JSON, or a hostile result is invalid', async () => {
    const respond = (body: string): typeof fetch =>
      (async () => new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } })) as typeof fetch;
    const cases = [
      'not json',
      JSON.stringify({ jsonrpc: '2.0', id: 'other-id', result: { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } } }),
      JSON.stringify({ id: 1, result: {} }),
    ];
    for (const body of cases) {
      const client = new A2AClient({ url: 'http://127.0.0.1:9/a2a', extensions: [], fetchImpl: respond(body) });
      const err = await client.sendMessage({ message: userMessage([{ text: 'x' }]) }).catch((e: unknown) => e);
      expect((err as A2AError).kind).toBe('invalid_answer');
    }
    // The right id but a hostile task.
    const echoId: typeof fetch = (async (_url: unknown, init?: RequestInit) => {
      const { id } = JSON.parse(String(init?.body)) as { id: string };
      return new Response(JSON.stringify({ jsonrpc: '2.0', id, result: { task: { id: 't', status: {} } } }));
    }) as typeof fetch;
    const client = new A2AClient({ url: 'http://127.0.0.1:9/a2a', extensions: [], fetchImpl: echoId });
    const err = await client.sendMessage({ message: userMessage([{ text: 'x' }]) }).catch((e: unknown) => e);
    expect((err as A2AError).kind).toBe('invalid_answer');
  });

  it('a response over 4 MiB is refused', async () => {
    const url = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 'x', result: { pad: 'a'.repeat(4 * 1024 * 1024 + 10) } }));
    });
    const client = new A2AClient({ url, extensions: [] });
    const err = await client.sendMessage({ message: userMessage([{ text: 'x' }]) }).catch((e: unknown) => e);
    expect((err as A2AError).kind).toBe('invalid_answer');
    expect((err as A2AError).message).toContain('larger than');
  });
});

describe('parseSendMessageResult', () => {
  const goodTask = {
    id: 't1',
    contextId: 'c1',
    status: {
      state: 'TASK_STATE_INPUT_REQUIRED',
      message: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] },
      timestamp: '2026-01-01T00:00:00Z',
    },
  };

  it('accepts a valid task or message and drops unknown fields', () => {
    const result = parseSendMessageResult({ task: { ...goodTask, extra: 'x' }, ignored: true });
    expect(result).toEqual({ task: goodTask });
    expect(parseSendMessageResult({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } })).toEqual({
      message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] },
    });
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['neither task nor message', {}],
    ['both task and message', { task: goodTask, message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } }],
    ['task id not a string', { task: { ...goodTask, id: 1 } }],
    ['task without contextId', { task: { id: 't', status: goodTask.status } }],
    ['task without status', { task: { id: 't', contextId: 'c' } }],
    ['v0.3 lower-case state', { task: { ...goodTask, status: { state: 'completed' } } }],
    ['unknown state', { task: { ...goodTask, status: { state: 'TASK_STATE_DONE' } } }],
    [
      'status message with a bad role',
      { task: { ...goodTask, status: { state: 'TASK_STATE_WORKING', message: { messageId: 'm', role: 'agent', parts: [] } } } },
    ],
    ['message without messageId', { message: { role: 'ROLE_AGENT', parts: [] } }],
    ['parts not an array', { message: { messageId: 'm', role: 'ROLE_AGENT', parts: 'hi' } }],
    ['history not an array', { task: { ...goodTask, history: {} } }],
  ])('rejects %s', (_label, value) => {
    let caught: unknown;
    try {
      parseSendMessageResult(value);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(A2AError);
    expect((caught as A2AError).kind).toBe('invalid_answer');
  });

  it('keeps a malformed part as marked ordinary data instead of losing the whole message', () => {
    const r = parseSendMessageResult({
      message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'ok' }, null, { text: 5 }, { mediaType: 7, data: { a: 1 } }] },
    }) as { message: Message };
    const [good, nul, badText, badType] = r.message.parts;
    expect(good).toEqual({ text: 'ok' });
    for (const p of [nul, badText, badType]) {
      expect(p!.mediaType).toBe(MEDIA_TYPE.malformedPart);
      expect(typeof (p!.metadata as { taskbayMalformed: string }).taskbayMalformed).toBe('string');
      expect(p!.text).toBeUndefined();
    }
    expect(nul!.data).toBeNull();
    expect(badText!.data).toEqual({ text: 5 });
    expect(badType!.data).toEqual({ mediaType: 7, data: { a: 1 } });
  });

  it('keeps __proto__ keys of part data as plain data keys (issue 15 item 13), never as a prototype', () => {
    const body = '{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"__proto__":{"polluted":true},"ok":1,"in":[{"__proto__":2}]}}]}}';
    const result = parseSendMessageResult(JSON.parse(body) as unknown) as { message: Message };
    const data = result.message.parts[0]!.data as Record<string, unknown>;
    // Exactly what the agent sent: the same JSON, key included.
    expect(JSON.stringify(result.message)).toBe(JSON.stringify((JSON.parse(body) as { message: unknown }).message));
    expect(Object.keys(data)).toEqual(['__proto__', 'ok', 'in']);
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect('polluted' in data).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it(`keeps data nested up to JSON_DEPTH_MAX levels; deeper data becomes a malformed part that says why and what it was sent as`, () => {
    const nest = (levels: number) => {
      let v: unknown = 'leaf';
      for (let i = 0; i < levels; i++) v = { a: v };
      return v;
    };
    const parse = (data: unknown) =>
      (parseSendMessageResult({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ data, mediaType: 'application/json' }] } }) as { message: Message })
        .message.parts[0]!;
    expect(parse(nest(JSON_DEPTH_MAX))).toEqual({ data: nest(JSON_DEPTH_MAX), mediaType: 'application/json' });
    const deep = parse(nest(JSON_DEPTH_MAX + 1));
    expect(deep).toEqual({
      data: null,
      mediaType: MEDIA_TYPE.malformedPart,
      metadata: {
        taskbayMalformed: `The agent's response is not valid: message.parts[0].data is nested more than ${JSON_DEPTH_MAX} levels deep`,
        taskbaySentAs: 'application/json',
      },
    });
  });
});

describe('"The whole part may be at most 128 KB of JSON" (seed 000 "Request"), measured as the agent sent it', () => {
  const request = { title: 'Padded', action: { kind: 'send_message', text: 'x' } };
  /** The first part of a parsed answer whose one part has `mediaType` and a `padding` member making it `bytes` of JSON. */
  const parsedPart = (bytes: number, mediaType: string = MEDIA_TYPE.approvalRequest) => {
    const sent = { data: request, mediaType, padding: '' };
    sent.padding = 'p'.repeat(bytes - JSON.stringify(sent).length);
    const body = JSON.stringify({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [sent] } });
    return { sent, part: (parseSendMessageResult(JSON.parse(body)) as { message: Message }).message.parts[0]! };
  };

  it('an approval-request part of exactly 131072 bytes as sent is read (its unread member dropped)', () => {
    const { sent, part } = parsedPart(128 * 1024);
    expect(JSON.stringify(sent)).toHaveLength(131_072);
    expect(part).toEqual({ data: request, mediaType: MEDIA_TYPE.approvalRequest });
  });

  it('one byte more, counted in a member Taskbay does not read, makes it a malformed part kept whole, saying why', () => {
    const { sent, part } = parsedPart(128 * 1024 + 1);
    expect(part).toEqual({
      data: sent,
      mediaType: MEDIA_TYPE.malformedPart,
      metadata: {
        taskbayMalformed: "The agent's response is not valid: message.parts[0] is 131073 bytes of JSON as sent; an approval-request part is at most 131072",
        taskbaySentAs: MEDIA_TYPE.approvalRequest,
      },
    });
  });

  it('bytes are UTF-8 bytes of the JSON: a character sent as a \\u escape counts as the character', () => {
    // 65536 "é" (2 bytes each in UTF-8), sent escaped (6 bytes each in the text): 128 KiB of padding as JSON, not 384 KiB.
    const sent = { data: request, mediaType: MEDIA_TYPE.approvalRequest, padding: 'é'.repeat(65_536) };
    const body = JSON.stringify({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [sent] } }).replace(/é/g, '\\u00e9');
    const part = (parseSendMessageResult(JSON.parse(body)) as { message: Message }).message.parts[0]!;
    expect(part.metadata?.taskbayMalformed).toMatch(new RegExp(`is ${new TextEncoder().encode(JSON.stringify(sent)).length} bytes of JSON as sent`));
  });

  it('a part of another media type is not held to it', () => {
    expect(parsedPart(205 * 1024, 'application/json').part).toEqual({ data: request, mediaType: 'application/json' });
  });
});

describe('agent cards that are not usable', () => {
  const validCard = {
    name: 'Agent',
    supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: {},
    skills: [],
  };

  async function cardError(url: string): Promise<AgentCardError> {
    const err = await fetchAgentCard(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentCardError);
    return err as AgentCardError;
  }

  it('missing supportedInterfaces', async () => {
    const { supportedInterfaces: _omit, ...card } = validCard;
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(card));
    });
    const err = await cardError(`${base}/card.json`);
    expect(err.message).toBe(`Agent card at ${base}/card.json is not valid: supportedInterfaces is missing`);
  });

  it('not JSON', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html>hello</html>');
    });
    expect((await cardError(`${base}/card.json`)).message).toContain('is not valid: the response is not JSON');
  });

  it('HTTP 404', async () => {
    expect((await cardError(`${agent.baseUrl}/nope/card.json`)).message).toBe(`Agent card at ${agent.baseUrl}/nope/card.json could not be fetched: HTTP 404`);
  });

  it('connection refused on a closed port', async () => {
    const url = `${await closedPortUrl()}/card.json`;
    expect((await cardError(url)).message).toBe(`Agent card at ${url} could not be fetched: connection refused`);
  });

  it('larger than 1 MiB', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ...validCard, description: 'a'.repeat(1024 * 1024) }));
    });
    expect((await cardError(`${base}/card.json`)).message).toContain('larger than 1 MiB');
  });

  it('a non-http URL is refused before fetching', async () => {
    let fetched = false;
    const fetchImpl = (async () => {
      fetched = true;
      return new Response('{}');
    }) as typeof fetch;
    const err = await fetchAgentCard('file:///etc/passwd', { fetchImpl }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentCardError);
    expect(fetched).toBe(false);
  });

  it.each([
    ['not an object', [], 'not a JSON object'],
    ['no name', { ...validCard, name: '' }, 'name is missing'],
    ['a name over 200 characters', { ...validCard, name: 'n'.repeat(201) }, 'name is longer than 200'],
    ['empty supportedInterfaces', { ...validCard, supportedInterfaces: [] }, 'supportedInterfaces is empty'],
    [
      'only non-http interfaces',
      { ...validCard, supportedInterfaces: [{ url: 'javascript:alert(1)', protocolBinding: 'JSONRPC' }] },
      'no entry with an http(s) url',
    ],
    ['an interface without protocolBinding', { ...validCard, supportedInterfaces: [{ url: 'http://127.0.0.1/a2a' }] }, 'no entry with an http(s) url'],
    ['no capabilities', { ...validCard, capabilities: undefined }, 'capabilities is missing'],
    ['extensions not an array', { ...validCard, capabilities: { extensions: {} } }, 'capabilities.extensions must be an array'],
    ['an extension without uri', { ...validCard, capabilities: { extensions: [{ required: false }] } }, 'capabilities.extensions[0].uri is missing'],
    ['extension params not an object', { ...validCard, capabilities: { extensions: [{ uri: 'u', params: [] }] } }, 'params must be an object'],
    ['no skills', { ...validCard, skills: undefined }, 'skills is missing'],
    ['a skill without name', { ...validCard, skills: [{ id: 's' }] }, 'skills[0].name is missing'],
  ])('validateAgentCard rejects %s', (_label, json, reason) => {
    let caught: unknown;
    try {
      validateAgentCard(json);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AgentCardError);
    expect((caught as AgentCardError).message).toContain(reason);
  });

  it('validateAgentCard counts text in characters (code points): a name and a skill of 200 emoji fit, 201 do not', () => {
    const emoji = '\u{1F916}'; // one code point, two UTF-16 units
    const [fits, over] = [emoji.repeat(AGENT_LIMITS.nameMax), emoji.repeat(AGENT_LIMITS.nameMax + 1)];
    const card = validateAgentCard({ ...validCard, name: fits, skills: [{ id: fits, name: fits, tags: [emoji.repeat(AGENT_LIMITS.tagMax)] }] });
    expect([card.name, card.skills[0]!.id, card.skills[0]!.name, card.skills[0]!.tags]).toEqual([fits, fits, fits, [emoji.repeat(AGENT_LIMITS.tagMax)]]);
    expect(() => validateAgentCard({ ...validCard, name: over })).toThrow(`name is longer than ${AGENT_LIMITS.nameMax} characters`);
    expect(() => validateAgentCard({ ...validCard, skills: [{ id: over, name: 's' }] })).toThrow(
      `skills[0].id is longer than ${AGENT_LIMITS.skillIdMax} characters`,
    );
  });

  it('validateAgentCard returns a clean copy of recognised fields only', () => {
    const hostile = JSON.parse(
      JSON.stringify({
        ...validCard,
        evil: 'x',
        supportedInterfaces: [
          { url: 'grpc://host:1', protocolBinding: 'GRPC' },
          { url: 'https://agent.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', extra: 1 },
        ],
        capabilities: {
          streaming: 'yes',
          extensions: [{ uri: APPROVAL_REQUEST_EXTENSION, required: false, params: { startForm: { title: 'T' } }, x: 1 }],
        },
        skills: [{ id: 's', name: 'S', tags: ['a', 3], extra: true }],
      }).replace('"params":{', '"params":{"__proto__":{"polluted":true},'),
    ) as unknown;
    const card = validateAgentCard(hostile);
    expect(card).toEqual({
      name: 'Agent',
      supportedInterfaces: [{ url: 'https://agent.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { extensions: [{ uri: APPROVAL_REQUEST_EXTENSION, required: false, params: { startForm: { title: 'T' } } }] },
      skills: [{ id: 's', name: 'S', tags: ['a'] }],
    });
    const params = card.capabilities.extensions![0]!.params!;
    expect(Object.hasOwn(params, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(params)).toBe(Object.prototype);
    expect('polluted' in params).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(preferredJsonRpcInterface(card)?.url).toBe('https://agent.example/a2a');
  });
});

describe('"The extension URIs are identifiers with /v1 fixed" (seed 003 "Limits")', () => {
  const cardWith = (uris: string[]) =>
    validateAgentCard({
      name: 'Agent',
      supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { extensions: uris.map((uri) => ({ uri, required: false })) },
      skills: [],
    });
  // Another version, or the same words spelled otherwise, is another identifier.
  const others = (uri: string) => [
    uri.replace(/\/v[0-9.]+$/, '/v2'),
    uri.replace(/\/v[0-9.]+$/, ''),
    `${uri}/`,
    `${uri}.1`,
    uri.replace(/\/v([0-9.]+)$/, '/V$1'),
    uri.replace(/^https:/, 'http:'),
    `${uri}?v=1`,
    ` ${uri}`,
  ];

  it.each(TASKBAY_EXTENSIONS.map((u) => [u]))('a card listing another version or spelling of %s does not advertise it', (uri) => {
    const variants = others(uri);
    expect(new Set(variants).size).toBe(variants.length);
    expect(variants).not.toContain(uri);
    const card = cardWith(variants);
    expect(advertisedExtensionUris(card)).toEqual(variants);
    for (const known of TASKBAY_EXTENSIONS) expect(advertises(card, known)).toBe(false);
    expect(advertises(cardWith([...variants, uri]), uri)).toBe(true);
  });
});
