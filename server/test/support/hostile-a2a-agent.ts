import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_VERSION } from '../../src/a2a/extensions.js';
import { readJsonBody, sendJson } from '../../src/http/json.js';

// A hostile A2A agent over real HTTP (issue 22, finding 7): its card says it streams, and its
// SendStreamingMessage answers with whatever flood its plan names: thousands of new messages,
// events just under the per-event bound, endless SSE comments, thousands of events. It writes
// with backpressure and notes when the reader closed the stream before the plan was done, so a
// test sees whether Taskbay stopped reading. Test support, not a fixture of the product.

export type HostilePlan =
  /** `events` task events, each with `perEvent` new agent messages of `textBytes` characters in its history. */
  | { kind: 'messages'; events: number; perEvent: number; textBytes: number }
  /** `events` events, each one new agent message of `textBytes` characters (keep it under 4 MiB). */
  | { kind: 'huge'; events: number; textBytes: number }
  /** One task event, then SSE comments until `bytes` were written, then the last status. */
  | { kind: 'comments'; bytes: number }
  /** One task event, then `count` artifact updates (never stored), then the last status. */
  | { kind: 'events'; count: number }
  /** One task event with `messages` new messages and the task WORKING; the card says pushNotifications. */
  | { kind: 'push'; messages: number; textBytes: number };

export interface StreamRecord {
  /** Bytes written into the stream (accepted by the socket). */
  written: number;
  /** The reader closed the stream before the plan was written. */
  closedEarly: boolean;
}

export interface HostileAgent {
  /** Serves `plan` under `name`; its card URL. */
  plan(name: string, plan: HostilePlan): string;
  /** Methods called per agent name, in order. */
  calls(name: string): string[];
  /** The SendStreamingMessage streams of `name`, settled (the plan ended or the reader left). */
  streams(name: string): StreamRecord[];
  /** The push config Taskbay sent with the first message to `name`. */
  pushConfig(name: string): { url: string; token: string } | undefined;
  /** `n` new agent messages of task `taskId`, numbered from `from`, each `textBytes` characters. */
  messages(taskId: string, from: number, n: number, textBytes: number): unknown[];
  close(): Promise<void>;
}

const CONTEXT = 'hostile-context';

/** Resolves when `res` can take more, or has closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function card(name: string, base: string, plan: HostilePlan) {
  return {
    name: `Hostile agent ${name}`,
    description: 'Floods every task it is given.',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${base}/${name}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: A2A_VERSION }],
    capabilities: { streaming: true, pushNotifications: plan.kind === 'push', extensions: [] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'flood', name: 'Flood', description: 'Sends too much.', tags: ['hostile'] }],
  };
}

export async function startHostileA2aAgent(): Promise<HostileAgent> {
  const plans = new Map<string, HostilePlan>();
  const calls = new Map<string, string[]>();
  const streams = new Map<string, StreamRecord[]>();
  const pushConfigs = new Map<string, { url: string; token: string }>();
  let tasks = 0;
  let base = '';

  const messages = (taskId: string, from: number, n: number, textBytes: number) =>
    Array.from({ length: n }, (_, i) => ({
      messageId: `${taskId}-m${from + i}`,
      role: 'ROLE_AGENT',
      taskId,
      contextId: CONTEXT,
      parts: [{ text: `${from + i} `.padEnd(textBytes, 'x') }],
    }));

  /** Writes with backpressure; false once the reader has gone. */
  const writer = (res: ServerResponse, record: StreamRecord) => {
    let gone = false;
    res.once('close', () => {
      if (!res.writableFinished) gone = true;
    });
    return async (chunk: string): Promise<boolean> => {
      if (gone || res.destroyed) return false;
      const more = res.write(chunk);
      record.written += Buffer.byteLength(chunk);
      if (!more) await drained(res);
      return !gone && !res.destroyed;
    };
  };

  const rpcEvent = (id: unknown, result: unknown) => `data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`;

  async function stream(name: string, plan: HostilePlan, id: unknown, params: any, res: ServerResponse) {
    const taskId = `hostile-task-${++tasks}`;
    const push = params?.configuration?.taskPushNotificationConfig;
    if (push && !pushConfigs.has(name)) pushConfigs.set(name, { url: push.url, token: push.token });
    const record: StreamRecord = { written: 0, closedEarly: false };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = writer(res, record);
    const task = (history: unknown[], state = 'TASK_STATE_WORKING') => ({ task: { id: taskId, contextId: CONTEXT, status: { state }, history } });
    const done = { statusUpdate: { taskId, contextId: CONTEXT, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: messages(taskId, 0, 1, 10)[0] } } };
    let ok = true;
    if (plan.kind === 'messages') {
      for (let e = 0; e < plan.events && ok; e++) ok = await write(rpcEvent(id, task(messages(taskId, 1 + e * plan.perEvent, plan.perEvent, plan.textBytes))));
    } else if (plan.kind === 'huge') {
      for (let e = 0; e < plan.events && ok; e++) ok = await write(rpcEvent(id, task(messages(taskId, 1 + e, 1, plan.textBytes))));
    } else if (plan.kind === 'comments') {
      ok = await write(rpcEvent(id, task([])));
      const comment = `: ${'keep-alive '.repeat(5957)}\n`; // 65,536 bytes
      for (let sent = 0; sent < plan.bytes && ok; sent += comment.length) ok = await write(comment);
    } else if (plan.kind === 'events') {
      ok = await write(rpcEvent(id, task([])));
      for (let e = 0; e < plan.count && ok; e++) {
        const artifact = { artifactId: 'a', parts: [{ text: `${e}` }] };
        ok = await write(rpcEvent(id, { artifactUpdate: { taskId, contextId: CONTEXT, artifact, append: true } }));
      }
    } else {
      ok = await write(rpcEvent(id, task(messages(taskId, 1, plan.messages, plan.textBytes))));
    }
    if (ok && plan.kind !== 'push') ok = await write(rpcEvent(id, done));
    record.closedEarly = !ok;
    streams.get(name)!.push(record);
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const m = /^\/([a-z0-9-]+)\/(card\.json|a2a)$/.exec((req.url ?? '').split('?')[0]!);
    const plan = m ? plans.get(m[1]!) : undefined;
    if (!m || !plan) return void sendJson(res.writeHead(404), 404, { error: 'not found' });
    const name = m[1]!;
    if (m[2] === 'card.json') return void sendJson(res, 200, card(name, base, plan));
    const body = await readJsonBody(req, 1024 * 1024);
    const rpc = body.ok ? (body.value as { id?: unknown; method?: string; params?: any }) : {};
    calls.get(name)!.push(String(rpc.method));
    if (rpc.method === 'SendStreamingMessage') return stream(name, plan, rpc.id, rpc.params, res);
    const id = rpc.params?.id ?? 'unknown';
    const state = plan.kind === 'push' ? 'TASK_STATE_WORKING' : 'TASK_STATE_INPUT_REQUIRED';
    const current = { id, contextId: CONTEXT, status: { state } };
    if (rpc.method === 'SubscribeToTask') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(rpcEvent(rpc.id, { task: current }));
    }
    sendJson(res, 200, { jsonrpc: '2.0', id: rpc.id, result: current });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    plan(name, plan) {
      plans.set(name, plan);
      calls.set(name, []);
      streams.set(name, []);
      return `${base}/${name}/card.json`;
    },
    calls: (name) => [...(calls.get(name) ?? [])],
    streams: (name) => [...(streams.get(name) ?? [])],
    pushConfig: (name) => pushConfigs.get(name),
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
