import { isObject } from './jws.js';

// What a received approved message is made of, read from the two shapes an agent holds:
//
// - the A2A v1.0 JSON Taskbay sends (ProtoJSON: a part is {text} or {data, mediaType}, the
//   message's metadata beside its parts), as a hand-written agent parses it from the request;
// - the message object @a2a-js/sdk 1.x hands an executor (requestContext.userMessage): the SDK
//   reads the same JSON into its ts-proto types, where a part is {content: {$case: 'text' |
//   'data' | 'url' | 'raw', value}, mediaType, filename, metadata}, mediaType '' when absent;
//   the message keeps metadata as it arrived, and its role is a number (1, ROLE_USER).
//
// Both give the same parts to the digest rule. Anything else is refused with what it is and
// what to pass instead: a string, a Task, a Response, a JSON-RPC envelope, an event wrapper
// ({message}, {statusUpdate}, {task}), the SDK's RequestContext or event, an A2A v0.3 message.

/** A part of an A2A v1.0 message as JSON carries it: one of text, data, url, raw, with its mediaType. */
export interface A2AWirePart {
  text?: unknown;
  data?: unknown;
  url?: unknown;
  raw?: unknown;
  mediaType?: unknown;
  filename?: unknown;
  metadata?: unknown;
}

/** An A2A v1.0 message as JSON carries it (the params.message of Taskbay's SendMessage request). */
export interface A2AWireMessage {
  parts: readonly A2AWirePart[];
  metadata?: Record<string, unknown> | null;
  messageId?: unknown;
  taskId?: unknown;
  contextId?: unknown;
}

/** A part of the message object @a2a-js/sdk 1.x gives an executor: the content is a tagged union. */
export interface SdkMessagePart {
  content?: { $case: string; value?: unknown } | undefined;
  mediaType?: string;
  filename?: string;
  metadata?: { [key: string]: unknown } | undefined;
}

/** The message object @a2a-js/sdk 1.x gives an executor (requestContext.userMessage). */
export interface SdkMessage {
  parts: readonly SdkMessagePart[];
  metadata?: { [key: string]: unknown } | undefined;
}

/** What verifyApprovedMessage and receivedAction take: the message as the agent received it, in either shape. */
export type ReceivedApprovedMessage = A2AWireMessage | SdkMessage;

/** A part reduced to what the digest rule reads. */
export interface ReadPart {
  text?: unknown;
  data?: unknown;
  mediaType?: unknown;
}

export type ReadMessage = { ok: true; parts: ReadPart[]; metadata: Record<string, unknown> | undefined } | { ok: false; reason: string };

/** What to pass instead, wherever the input is not the message itself. */
const PASS_THE_MESSAGE =
  'pass the message Taskbay sent: the params.message of its SendMessage request (in an @a2a-js/sdk executor, requestContext.userMessage)';

const EXPECTED = 'expected an A2A message (an object with a parts array)';
const WIRE_KEYS = ['text', 'data', 'url', 'raw'] as const;

const quote = (s: string, max = 60) => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);

function keysOf(o: object): string {
  const keys = Object.keys(o);
  if (keys.length === 0) return 'an empty object';
  const shown = keys.slice(0, 8).map((k) => quote(k, 40));
  return `an object with keys ${shown.join(', ')}${keys.length > shown.length ? ', …' : ''}`;
}

/** Why `input`, which has no parts array, is not a message, and what to pass instead. */
function notAMessage(input: unknown): string {
  const got = (what: string, instead: string) => `${EXPECTED}, got ${what}: ${instead}`;
  if (input === null) return got('null', PASS_THE_MESSAGE);
  if (typeof input === 'string') return got('a string', 'pass the parsed message object (JSON.parse of the text), not its JSON text');
  if (typeof input !== 'object') return got(typeof input === 'undefined' ? 'undefined' : `a ${typeof input}`, PASS_THE_MESSAGE);
  if (Array.isArray(input)) return got(`an array of ${input.length}`, 'pass one message (the one whose metadata.approval you verify), not a list');
  if (ArrayBuffer.isView(input) || input instanceof ArrayBuffer)
    return got('bytes', 'decode them and pass the parsed message object (JSON.parse), not its bytes');
  const o = input as Record<string, unknown>;
  if (typeof Response === 'function' && input instanceof Response) return got('a fetch Response', 'read its JSON body and pass the A2A message it holds');
  if (typeof Request === 'function' && input instanceof Request)
    return got('a fetch Request', "read its JSON body and pass that JSON-RPC request's params.message");
  if ('jsonrpc' in o) {
    if (typeof o.method === 'string') {
      const params = o.params;
      if (isObject(params) && isObject(params.message)) return got(`a JSON-RPC ${quote(o.method)} request`, 'pass its params.message');
      return got(`a JSON-RPC ${quote(o.method)} request without params.message`, PASS_THE_MESSAGE);
    }
    if ('result' in o || 'error' in o)
      return got(`a JSON-RPC ${'error' in o ? 'error' : 'response'}`, `an agent verifies the request it receives; ${PASS_THE_MESSAGE}`);
    return got('a JSON-RPC envelope', PASS_THE_MESSAGE);
  }
  if (typeof o.headers === 'object' && typeof o.method === 'string') {
    return got('an HTTP request', 'pass the A2A message of its JSON-RPC body (body.params.message), parsed, not the request');
  }
  if ('userMessage' in o && 'taskId' in o) return got('an @a2a-js/sdk RequestContext', 'pass requestContext.userMessage (with taskId: requestContext.taskId)');
  if (typeof o.kind === 'string' && 'data' in o && Object.keys(o).length <= 2) {
    return o.kind === 'message'
      ? got('an @a2a-js/sdk event ({ kind: "message", data })', 'pass its data')
      : got(`an @a2a-js/sdk event ({ kind: ${quote(o.kind)}, data })`, `not a message; ${PASS_THE_MESSAGE}`);
  }
  if (typeof o.kind === 'string') return got(`an A2A v0.3 object (kind ${quote(o.kind)})`, `Taskbay speaks A2A v1.0; ${PASS_THE_MESSAGE}`);
  if (isObject(o.message) && !('status' in o)) {
    return got('an object holding a message under "message" (SendMessage params, or a stream or send response)', 'pass its .message');
  }
  if (isObject(o.statusUpdate)) return got('a status update event ({ statusUpdate })', `a task's status is not the approved message; ${PASS_THE_MESSAGE}`);
  if (isObject(o.artifactUpdate)) return got('an artifact update event ({ artifactUpdate })', PASS_THE_MESSAGE);
  if (isObject(o.task)) return got('an object holding a Task under "task"', `a Task is not the approved message; ${PASS_THE_MESSAGE}`);
  if ('artifactId' in o) return got('an A2A Artifact', PASS_THE_MESSAGE);
  if (typeof o.id === 'string' && isObject(o.status)) {
    return got(`an A2A Task (id ${quote(o.id)})`, `${PASS_THE_MESSAGE}, or the entry of the task's history that carries metadata.approval`);
  }
  if (isObject(o.status) && 'taskId' in o) return got('a task status update', `a task's status is not the approved message; ${PASS_THE_MESSAGE}`);
  if ('state' in o && ('message' in o || 'timestamp' in o)) return got('a task status', `a task's status is not the approved message; ${PASS_THE_MESSAGE}`);
  if ('parts' in o) return got('an object whose parts is not an array', PASS_THE_MESSAGE);
  return got(keysOf(o), PASS_THE_MESSAGE);
}

/** One part of either shape, reduced to what the digest rule reads; a string when it is neither. */
function readPart(p: unknown, i: number): ReadPart | string {
  if (!isObject(p)) return `parts[${i}] is ${p === null ? 'null' : Array.isArray(p) ? 'an array' : `a ${typeof p}`}, not a part object`;
  if (typeof p.kind === 'string' && !('content' in p)) {
    return `expected an A2A v1.0 message, got an A2A v0.3 message (parts[${i}] has kind ${quote(p.kind)}): Taskbay speaks A2A v1.0; ${PASS_THE_MESSAGE}`;
  }
  if ('content' in p) {
    const wire = WIRE_KEYS.filter((k) => k in p);
    if (wire.length > 0)
      return `parts[${i}] has both content (the @a2a-js/sdk shape) and ${wire.join(', ')} (the A2A JSON shape); pass the message as it arrived`;
    const content = p.content;
    if (content === undefined || content === null) return { mediaType: p.mediaType };
    if (!isObject(content) || typeof content.$case !== 'string') return `parts[${i}].content is not an @a2a-js/sdk part content ({ $case, value })`;
    if (content.$case === 'text') return { text: content.value, mediaType: p.mediaType };
    if (content.$case === 'data') return { data: content.value, mediaType: p.mediaType };
    return { mediaType: p.mediaType };
  }
  return { text: p.text, data: p.data, mediaType: p.mediaType };
}

/** The parts and metadata of a received message in either shape, or why `input` is not one. */
export function readMessage(input: unknown): ReadMessage {
  if (!isObject(input) || !Array.isArray(input.parts)) return { ok: false, reason: notAMessage(input) };
  if (input.kind === 'message') {
    return { ok: false, reason: `expected an A2A v1.0 message, got an A2A v0.3 message (kind "message"): Taskbay speaks A2A v1.0; ${PASS_THE_MESSAGE}` };
  }
  if ('artifactId' in input) return { ok: false, reason: `${EXPECTED}, got an A2A Artifact: ${PASS_THE_MESSAGE}` };
  const parts: ReadPart[] = [];
  const list = input.parts as unknown[];
  for (let i = 0; i < list.length; i++) {
    const part = readPart(list[i], i);
    if (typeof part === 'string') return { ok: false, reason: part };
    parts.push(part);
  }
  return { ok: true, parts, metadata: isObject(input.metadata) ? input.metadata : undefined };
}
