import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { actionDigest, type ApprovalAction } from '../approvals/digest.js';
import {
  A2A_VERSION,
  A2UI_EXTENSION,
  APPROVAL_REQUEST_EXTENSION,
  MEDIA_TYPE,
  SKILL_ROUTING_EXTENSION,
  STRUCTURED_FORM_EXTENSION,
} from '../a2a/extensions.js';
import { A2A_TASK_STATES, TERMINAL_STATES } from '../a2a/types.js';
import type { A2ATaskState, AgentCard, AgentExtension, Message, Part, Task } from '../a2a/types.js';

// The reference A2A v1.0 agent (seed 003, "Walkthrough: the fixture agent"): a test fixture and
// demo, not product code. One node:http server serves every variant under /<variant>/:
//   GET  /<variant>/card.json   the Agent Card
//   POST /<variant>/a2a         JSON-RPC 2.0: SendMessage, SendStreamingMessage, SubscribeToTask,
//                               GetTask, CancelTask (seed 003: it "answers SendMessage and
//                               SendStreamingMessage", whatever its card says)
// Tasks live in memory per agent instance.

export const VARIANTS = [
  'showcase',
  'form',
  'approver',
  'a2ui',
  'plain',
  'invalid',
  'rogue',
  'unknown',
  'scripted',
] as const;
export type Variant = (typeof VARIANTS)[number];

/** The variants the packaged `demo-agent` command lists (seed 003). */
export const DEMO_VARIANTS: readonly Variant[] = ['showcase', 'form', 'approver', 'a2ui'];

export const REQUEST_MAX_BYTES = 1024 * 1024;

export interface ReceivedMessage {
  variant: Variant;
  /** Request headers as received (lower-case names); undefined when absent. */
  headers: { 'a2a-version'?: string; 'a2a-extensions'?: string };
  /** `params.message` exactly as it arrived. */
  message: Message;
  /** `params.metadata` (request-level metadata, e.g. skill routing), when present. */
  requestMetadata?: Record<string, unknown>;
  /** The task the message went to. */
  taskId: string;
  /** True when the messageId was already seen on that task (a retry): not processed again. */
  duplicate: boolean;
}

export interface FixtureAgent {
  baseUrl: string;
  cardUrl(variant: Variant): string;
  a2aUrl(variant: Variant): string;
  /** Every SendMessage received (valid params, known task), in order. */
  received: ReceivedMessage[];
  /** The next `count` A2A POSTs to `variant` answer HTTP `status` (default 503) without processing. */
  failNext(variant: Variant, count: number, status?: number): void;
  /** A stored task (a copy), for assertions. */
  getTask(taskId: string): Task | undefined;
  /** Forgets tasks, received messages and pending failures. */
  reset(): void;
  /** Push mode: every push sent, in order (settled: outcome known). */
  pushes: SentPush[];
  /** Streaming mode: keeps every stream open after its last event until the returned release() runs. */
  holdStreams(): () => void;
  /** Streaming mode: the next SendStreamingMessage of `variant` drops the connection after its first event. */
  dropNextStream(variant: Variant): void;
  /** Streams currently open. */
  openStreams(): number;
  /** Every A2A method called (valid JSON-RPC envelope, or an HTTP+JSON route), in order. */
  calls: { variant: Variant; method: string; binding: 'JSONRPC' | 'HTTP+JSON' }[];
  close(): Promise<void>;
}

export interface FixtureAgentOptions {
  port?: number;
  host?: string;
  /** Base URL written into cards when the agent is reached through another address (e.g. Docker). */
  publicUrl?: string;
  /** Streaming mode: cards say capabilities.streaming (SendStreamingMessage / SubscribeToTask answer over SSE in every mode). */
  streaming?: boolean;
  /** Push mode: cards say capabilities.pushNotifications; a task with a push config answers WORKING and pushes its update. */
  push?: boolean;
  /** Delay before a push is sent (default 50 ms). */
  pushDelayMs?: number;
  /** Cards also advertise the skill-routing extension; a routed send naming an unknown skill is refused. */
  skillRouting?: boolean;
  /** HTTP+JSON: cards list the REST interface (/<variant>/rest) first, JSON-RPC second. */
  httpJson?: boolean;
  /**
   * Awaited after a JSON-RPC SendMessage was received and processed, before its answer is sent:
   * crash tests hold the answer open (the agent acted, the sender has not seen the outcome).
   */
  beforeReply?: (message: ReceivedMessage) => Promise<void> | void;
  /** Push mode: awaited before the agent finishes a task and pushes the update (tests order a push against other events). */
  beforePush?: (taskId: string) => Promise<void> | void;
}

export interface SentPush {
  taskId: string;
  url: string;
  token: string;
  /** The JSON body posted (an A2A v1.0 StreamResponse with a statusUpdate). */
  body: unknown;
  /** The HTTP status the receiver answered, or an error message. */
  outcome: number | string;
}

// ---------------------------------------------------------------------------------------------
// Content the variants send. Exported so tests can compare against the exact payloads.

/** Seed 003 "Ask for a form": the Deploy request form. */
export const DEPLOY_REQUEST_FORM = {
  title: 'Deploy request',
  submitLabel: 'Request deploy',
  order: ['environment', 'replicas', 'note', 'dryRun'],
  schema: {
    type: 'object',
    required: ['environment', 'replicas'],
    properties: {
      environment: {
        type: 'string',
        title: 'Environment',
        enum: ['staging', 'production'],
        enumNames: ['Staging', 'Production'],
      },
      replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
      note: { type: 'string', title: 'Note', maxLength: 200 },
      dryRun: { type: 'boolean', title: 'Dry run' },
    },
  },
} as const satisfies Record<string, unknown>;

/** The start form advertised in the structured-form extension's params.startForm. */
export const NEW_DEPLOYMENT_START_FORM = {
  title: 'New deployment task',
  submitLabel: 'Start task',
  order: ['service', 'environment', 'replicas'],
  schema: {
    type: 'object',
    required: ['service', 'environment'],
    properties: {
      service: { type: 'string', title: 'Service', minLength: 1, maxLength: 100 },
      environment: {
        type: 'string',
        title: 'Environment',
        enum: ['staging', 'production'],
        enumNames: ['Staging', 'Production'],
      },
      replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
    },
  },
} as const satisfies Record<string, unknown>;

/** Seed 000 "Request": the showcase/approver approval request. */
export const APPROVAL_REQUEST = {
  title: 'Delete the staging cluster',
  summary: 'Removes all staging nodes and volumes.',
  risk: 'high',
  expiresInSeconds: 3600,
  action: { kind: 'send_message', text: 'Approved. Delete the staging cluster.' },
} as const;

/** Approver "approve data": a send_data request over the Deploy request form. */
export const APPROVAL_REQUEST_SEND_DATA = {
  title: 'Deploy to staging',
  summary: 'Deploys 2 replicas to staging.',
  risk: 'medium',
  expiresInSeconds: 3600,
  action: { kind: 'send_data', form: DEPLOY_REQUEST_FORM, values: { environment: 'staging', replicas: 2 } },
} as const;

/** Rogue: valid, but names fields an agent may not set, and carries HTML in the summary. */
export const ROGUE_APPROVAL_REQUEST = {
  title: 'Rotate the production database password',
  summary: '<script>alert(1)</script><b>x</b>',
  risk: 'critical',
  expiresInSeconds: 600,
  assignee: 'mallory@example.com',
  reviewer: 'mallory@example.com',
  policy: 'auto-approve',
  status: 'APPROVED',
  taskId: 'someone-else',
  action: { kind: 'send_message', text: 'Approved. Rotate the production database password.' },
} as const;

const UNKNOWN_MEDIA_TYPE = 'application/x-unknown+json';

/** Invalid variant: a form with a nested object property, outside the subset (seed 003). */
export const INVALID_FORM = {
  title: 'Deploy request',
  schema: {
    type: 'object',
    properties: {
      environment: { type: 'string', enum: ['staging', 'production'] },
      target: { type: 'object', properties: { region: { type: 'string' } } },
    },
  },
} as const;

function approvalPart(data: unknown): Part {
  return { data: structuredClone(data), mediaType: MEDIA_TYPE.approvalRequest };
}

/** An A2UI v0.9 surface with hostile content (HTML text, a phishing openUrl, an external image). */
export function a2uiSurface(surfaceId = 'deploy-check'): unknown[] {
  return [
    {
      version: 'v0.9',
      createSurface: { surfaceId, catalogId: 'https://a2ui.org/specification/v0_9/standard_catalog.json' },
    },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId,
        components: [
          { id: 'root', component: 'Card', child: 'body' },
          { id: 'body', component: 'Column', children: ['title', 'html', 'divider', 'env', 'dry', 'size', 'buttons', 'image'] },
          { id: 'title', component: 'Text', text: 'Confirm the deploy', variant: 'h2' },
          { id: 'html', component: 'Text', text: '<img src=x onerror="alert(1)"><b>Not bold</b> **not markdown**' },
          { id: 'divider', component: 'Divider' },
          { id: 'env', component: 'TextField', label: 'Environment', value: { path: '/deploy/environment' } },
          { id: 'dry', component: 'CheckBox', label: 'Dry run', value: { path: '/deploy/dryRun' } },
          {
            id: 'size',
            component: 'ChoicePicker',
            label: 'Size',
            options: [
              { label: 'Small', value: 'small' },
              { label: 'Large', value: 'large' },
            ],
            value: { path: '/deploy/size' },
          },
          { id: 'buttons', component: 'Row', children: ['confirm', 'phish'] },
          {
            id: 'confirm',
            component: 'Button',
            child: 'confirm-label',
            action: {
              event: {
                name: 'confirm_deploy',
                context: {
                  environment: { path: '/deploy/environment' },
                  dryRun: { path: '/deploy/dryRun' },
                  size: { path: '/deploy/size' },
                },
              },
            },
          },
          { id: 'confirm-label', component: 'Text', text: 'Confirm' },
          {
            id: 'phish',
            component: 'Button',
            child: 'phish-label',
            action: { functionCall: { call: 'openUrl', args: { url: 'https://login.example-phish.test/verify' } } },
          },
          { id: 'phish-label', component: 'Text', text: 'Verify your account' },
          { id: 'image', component: 'Image', url: 'https://tracker.example-phish.test/pixel.png' },
        ],
      },
    },
    {
      version: 'v0.9',
      updateDataModel: { surfaceId, path: '/deploy', value: { environment: 'staging', dryRun: true, size: 'small' } },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Cards

interface Modes {
  streaming: boolean;
  push: boolean;
  skillRouting: boolean;
  httpJson?: boolean;
}

const STRUCTURED_FORM_WITH_START: AgentExtension = {
  uri: STRUCTURED_FORM_EXTENSION,
  required: false,
  params: { startForm: NEW_DEPLOYMENT_START_FORM },
};
const STRUCTURED_FORM_PLAIN: AgentExtension = { uri: STRUCTURED_FORM_EXTENSION, required: false };
const APPROVAL: AgentExtension = { uri: APPROVAL_REQUEST_EXTENSION, required: false };
const A2UI: AgentExtension = { uri: A2UI_EXTENSION, required: false };

const VARIANT_INFO: Record<Variant, { description: string; extensions: AgentExtension[] }> = {
  showcase: {
    description: 'Everything Taskbay renders: approvals ("approve", "approve data"), forms ("form"), A2UI ("surface").',
    extensions: [APPROVAL, STRUCTURED_FORM_WITH_START, A2UI],
  },
  form: { description: 'Asks for a deploy request with a structured form.', extensions: [STRUCTURED_FORM_WITH_START] },
  approver: { description: 'Asks for approval ("approve", "approve data").', extensions: [APPROVAL] },
  a2ui: { description: 'Shows an A2UI surface with hostile content.', extensions: [A2UI] },
  plain: { description: 'Sends an approval request without advertising the extension.', extensions: [] },
  invalid: { description: 'Sends invalid approval requests.', extensions: [APPROVAL, STRUCTURED_FORM_PLAIN] },
  rogue: { description: 'Sends an approval request naming reviewers, policy and status.', extensions: [APPROVAL] },
  unknown: { description: 'Sends unknown media types and an unknown action kind.', extensions: [APPROVAL] },
  scripted: { description: 'Replies with whatever the test scripts.', extensions: [APPROVAL, STRUCTURED_FORM_PLAIN, A2UI] },
};

function buildCard(variant: Variant, baseUrl: string, modes: Modes = { streaming: false, push: false, skillRouting: false }): AgentCard {
  const info = VARIANT_INFO[variant];
  const extensions = structuredClone(info.extensions);
  if (modes.skillRouting) extensions.push({ uri: SKILL_ROUTING_EXTENSION, required: false });
  const skills =
    variant === 'showcase'
      ? [
          { id: 'deploy', name: 'Deploy', description: 'Plans and runs deployments.', tags: ['deploy'] },
          { id: 'cleanup', name: 'Cleanup', description: 'Removes unused infrastructure.', tags: ['ops'] },
        ]
      : [{ id: 'chat', name: 'Chat', description: info.description, tags: ['fixture'] }];
  return {
    name: `Taskbay fixture: ${variant}`,
    description: info.description,
    version: '1.0.0',
    supportedInterfaces: [
      ...(modes.httpJson ? [{ url: `${baseUrl}/${variant}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_VERSION }] : []),
      { url: `${baseUrl}/${variant}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: A2A_VERSION },
    ],
    capabilities: { streaming: modes.streaming, pushNotifications: modes.push, extensions },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills,
  };
}

// ---------------------------------------------------------------------------------------------
// Behaviour

interface StoredTask {
  variant: Variant;
  task: Task;
  messageIds: Set<string>;
  /** The form of the latest send_data approval request the agent sent on this task. */
  askedForm?: Record<string, unknown>;
  /** taskPushNotificationConfig of the message that started the task (push mode). */
  push?: { url: string; token: string };
  /** Skill-routing mode: the skill the task started with (null: unrestricted), enforced on every follow-up. */
  skillId?: string | null;
}

interface Reply {
  state: A2ATaskState;
  parts: Part[];
}

class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function textOf(message: Message): string {
  return message.parts
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
}

function dataPart(message: Message, mediaType: string): Record<string, unknown> | undefined {
  const part = message.parts.find((p) => p.mediaType === mediaType && isObject(p.data));
  return part ? (part.data as Record<string, unknown>) : undefined;
}

const ECHO_HINT = 'Say approve to get an approval request.';

function say(state: A2ATaskState, text: string, ...more: Part[]): Reply {
  return { state, parts: [{ text }, ...more] };
}

function verifyApproval(message: Message, stored: StoredTask | undefined): Reply {
  const approval = message.metadata?.approval;
  if (!isObject(approval) || typeof approval.revisionDigest !== 'string' || typeof approval.revision !== 'number') {
    return say('TASK_STATE_FAILED', 'Approval metadata is malformed: revision and revisionDigest are required.');
  }
  const values = dataPart(message, MEDIA_TYPE.json);
  const hasText = message.parts.some((p) => typeof p.text === 'string');
  let action: ApprovalAction;
  if (!hasText && values) {
    action = { kind: 'send_data', form: stored?.askedForm ?? {}, values };
  } else {
    const decision = message.metadata?.decision;
    action = { kind: 'send_message', text: textOf(message), data: (decision ?? null) as Record<string, unknown> | null };
  }
  const computed = actionDigest(action);
  if (computed === approval.revisionDigest) {
    return say('TASK_STATE_COMPLETED', `Done. Approved revision ${approval.revision}, digest ${approval.revisionDigest}`);
  }
  return say('TASK_STATE_FAILED', `Digest mismatch: expected ${computed}, got ${approval.revisionDigest}`);
}

function scriptedReply(message: Message): Reply | undefined {
  const data = dataPart(message, MEDIA_TYPE.json);
  if (!data || !('reply' in data)) return undefined;
  const reply = data.reply;
  if (!isObject(reply)) throw new RpcFailure(-32602, 'reply must be an object { state, parts }');
  if (typeof reply.state !== 'string' || !A2A_TASK_STATES.includes(reply.state as A2ATaskState)) {
    throw new RpcFailure(-32602, 'reply.state must be a TASK_STATE_* value');
  }
  if (!Array.isArray(reply.parts)) throw new RpcFailure(-32602, 'reply.parts must be an array');
  return { state: reply.state as A2ATaskState, parts: structuredClone(reply.parts) as Part[] };
}

function deployFormPart(): Part {
  return { data: structuredClone(DEPLOY_REQUEST_FORM), mediaType: MEDIA_TYPE.form };
}

/** The agent validates form replies again (seed 003: "The console validates before sending; validate again"). */
function deploySubmission(values: Record<string, unknown>): Reply {
  const problems: string[] = [];
  const { environment, replicas, service, dryRun, note } = values;
  if (environment !== 'staging' && environment !== 'production') problems.push('environment must be staging or production');
  if (replicas !== undefined && (!Number.isInteger(replicas) || (replicas as number) < 1 || (replicas as number) > 10)) {
    problems.push('replicas must be an integer from 1 to 10');
  }
  if (service !== undefined && (typeof service !== 'string' || service.length < 1 || service.length > 100)) {
    problems.push('service must be 1 to 100 characters');
  }
  if (dryRun !== undefined && typeof dryRun !== 'boolean') problems.push('dryRun must be a boolean');
  if (note !== undefined && (typeof note !== 'string' || note.length > 200)) problems.push('note must be at most 200 characters');
  if (problems.length > 0) {
    return say('TASK_STATE_INPUT_REQUIRED', `The deploy request is not valid: ${problems.join('; ')}.`, deployFormPart());
  }
  const what = typeof service === 'string' ? service : 'the service';
  const count = typeof replicas === 'number' ? replicas : 2;
  return say(
    'TASK_STATE_COMPLETED',
    `Deploy requested: ${what} to ${environment as string} with ${count} replica${count === 1 ? '' : 's'}${dryRun === true ? ' (dry run)' : ''}.`,
  );
}

function approvalReply(variant: Variant, command: string): Reply | undefined {
  const asks = 'Please approve this action.';
  if (command === 'approve data' && (variant === 'approver' || variant === 'showcase')) {
    return say('TASK_STATE_INPUT_REQUIRED', 'Please approve this deploy.', approvalPart(APPROVAL_REQUEST_SEND_DATA));
  }
  if (command !== 'approve') return undefined;
  switch (variant) {
    case 'showcase':
    case 'approver':
    case 'plain':
      return say('TASK_STATE_INPUT_REQUIRED', asks, approvalPart(APPROVAL_REQUEST));
    case 'invalid':
      return say(
        'TASK_STATE_INPUT_REQUIRED',
        asks,
        approvalPart({ ...APPROVAL_REQUEST, title: '' }),
        approvalPart({ ...APPROVAL_REQUEST, action: { kind: 'send_message', text: 'x'.repeat(20_001) } }),
      );
    case 'rogue':
      return say('TASK_STATE_INPUT_REQUIRED', asks, approvalPart(ROGUE_APPROVAL_REQUEST));
    case 'unknown':
      return say(
        'TASK_STATE_INPUT_REQUIRED',
        asks,
        { data: { widget: 'gauge', value: 42 }, mediaType: UNKNOWN_MEDIA_TYPE },
        { data: { nested: { deeply: ['a', 'b'] } }, mediaType: UNKNOWN_MEDIA_TYPE },
        approvalPart({
          title: 'Run a tool',
          summary: 'Runs a shell command on the build host.',
          risk: 'high',
          action: { kind: 'run_tool', tool: 'shell', args: { command: 'rm -rf /tmp/build' } },
        }),
      );
    default:
      return undefined;
  }
}

function computeReply(variant: Variant, message: Message, stored: StoredTask | undefined): Reply {
  if (message.metadata && 'approval' in message.metadata) return verifyApproval(message, stored);

  if (variant === 'scripted') {
    const scripted = scriptedReply(message);
    if (scripted) return scripted;
  }

  const values = dataPart(message, MEDIA_TYPE.json);
  if (values && (variant === 'form' || variant === 'showcase')) return deploySubmission(values);

  const a2uiData = dataPart(message, MEDIA_TYPE.a2ui);
  if (a2uiData && isObject(a2uiData.action) && (variant === 'a2ui' || variant === 'showcase')) {
    const action = a2uiData.action;
    const name = typeof action.name === 'string' ? action.name : 'an action';
    return say('TASK_STATE_COMPLETED', `Received ${name} with context ${JSON.stringify(action.context ?? null)}.`);
  }

  const text = textOf(message);
  const command = text.trim().toLowerCase();
  const approval = approvalReply(variant, command);
  if (approval) return approval;

  if (variant === 'form' && text.length > 0) return say('TASK_STATE_INPUT_REQUIRED', 'Where should I deploy?', deployFormPart());
  // Failure variants: plain sends a form and a surface it does not advertise; invalid sends a
  // form outside the subset (a nested object) and a surface that is not an envelope array.
  if (variant === 'plain' && command === 'form') return say('TASK_STATE_INPUT_REQUIRED', 'Where should I deploy?', deployFormPart());
  if (variant === 'plain' && command === 'surface') {
    return say('TASK_STATE_INPUT_REQUIRED', 'Please check the deploy.', { data: a2uiSurface(), mediaType: MEDIA_TYPE.a2ui });
  }
  if (variant === 'invalid' && command === 'form') {
    return say('TASK_STATE_INPUT_REQUIRED', 'Where should I deploy?', { data: INVALID_FORM, mediaType: MEDIA_TYPE.form });
  }
  if (variant === 'invalid' && command === 'surface') {
    return say('TASK_STATE_INPUT_REQUIRED', 'Please check the deploy.', { data: { createSurface: { surfaceId: 'x' } }, mediaType: MEDIA_TYPE.a2ui });
  }
  if (variant === 'showcase' && command === 'form') return say('TASK_STATE_INPUT_REQUIRED', 'Where should I deploy?', deployFormPart());
  if ((variant === 'a2ui' && text.length > 0) || (variant === 'showcase' && (command === 'surface' || command === 'a2ui'))) {
    return say('TASK_STATE_INPUT_REQUIRED', 'Please check the deploy.', { data: a2uiSurface(), mediaType: MEDIA_TYPE.a2ui });
  }
  const echo = text.length > 0 ? `You said: ${text.slice(0, 2000)}. ${ECHO_HINT}` : `Received your message. ${ECHO_HINT}`;
  return say('TASK_STATE_INPUT_REQUIRED', echo);
}

/** Remembers the form of a send_data approval request the agent sends, to recompute the digest later. */
function formAskedIn(parts: Part[]): Record<string, unknown> | undefined {
  for (const part of parts) {
    if (part.mediaType !== MEDIA_TYPE.approvalRequest || !isObject(part.data)) continue;
    const action = part.data.action;
    if (isObject(action) && action.kind === 'send_data' && isObject(action.form)) return structuredClone(action.form);
  }
  return undefined;
}

function validateMessage(v: unknown): Message {
  if (!isObject(v)) throw new RpcFailure(-32602, 'params.message must be an object');
  if (typeof v.messageId !== 'string' || v.messageId.length === 0) throw new RpcFailure(-32602, 'message.messageId is required');
  if (v.role !== 'ROLE_USER') throw new RpcFailure(-32602, 'message.role must be ROLE_USER');
  if (!Array.isArray(v.parts) || v.parts.length === 0) throw new RpcFailure(-32602, 'message.parts must be a non-empty array');
  if (!v.parts.every(isObject)) throw new RpcFailure(-32602, 'message.parts must hold objects');
  for (const key of ['taskId', 'contextId'] as const) {
    if (v[key] !== undefined && typeof v[key] !== 'string') throw new RpcFailure(-32602, `message.${key} must be a string`);
  }
  if (v.metadata !== undefined && !isObject(v.metadata)) throw new RpcFailure(-32602, 'message.metadata must be an object');
  return v as unknown as Message;
}

// ---------------------------------------------------------------------------------------------
// Server

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      total += chunk.length;
      if (total > max) {
        over = true;
        chunks.length = 0;
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

export async function startFixtureAgent(opts: FixtureAgentOptions = {}): Promise<FixtureAgent> {
  const host = opts.host ?? '127.0.0.1';
  const tasks = new Map<string, StoredTask>();
  /** `<variant> <messageId>` of messages that started a task, so a retried first message is a duplicate. */
  const startedBy = new Map<string, string>();
  const failures = new Map<Variant, { count: number; status: number }>();
  const received: ReceivedMessage[] = [];
  const pushes: SentPush[] = [];
  const calls: { variant: Variant; method: string; binding: 'JSONRPC' | 'HTTP+JSON' }[] = [];
  const modes: Modes = {
    streaming: opts.streaming ?? false,
    push: opts.push ?? false,
    skillRouting: opts.skillRouting ?? false,
    httpJson: opts.httpJson ?? false,
  };
  const dropNext = new Set<Variant>();
  let open = 0;
  let gate: Promise<void> = Promise.resolve();
  let baseUrl = '';

  const snapshot = (stored: StoredTask, historyLength?: number): Task => {
    const copy = structuredClone(stored.task);
    if (historyLength !== undefined && copy.history) {
      copy.history = historyLength <= 0 ? [] : copy.history.slice(-historyLength);
    }
    return copy;
  };

  /** Handles a message; with `defer` the task is left WORKING and `finish()` applies the reply later. */
  const sendMessage = (
    variant: Variant,
    params: unknown,
    req: IncomingMessage,
    defer = false,
  ): { task: Task; stored?: StoredTask; finish?: () => Task } => {
    if (!isObject(params)) throw new RpcFailure(-32602, 'params must be an object');
    const message = validateMessage(params.message);
    const requestMetadata = isObject(params.metadata) ? params.metadata : undefined;
    const headers: ReceivedMessage['headers'] = {};
    const version = header(req, 'a2a-version');
    if (version !== undefined) headers['a2a-version'] = version;
    const extensions = header(req, 'a2a-extensions');
    if (extensions !== undefined) headers['a2a-extensions'] = extensions;
    const record = (taskId: string, duplicate: boolean) =>
      received.push({
        variant,
        headers,
        message: structuredClone(message),
        ...(requestMetadata ? { requestMetadata: structuredClone(requestMetadata) } : {}),
        taskId,
        duplicate,
      });

    let stored: StoredTask | undefined;
    if (message.taskId !== undefined) {
      stored = tasks.get(message.taskId);
      if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${message.taskId}`);
      if (message.contextId !== undefined && message.contextId !== stored.task.contextId) {
        throw new RpcFailure(-32602, 'message.contextId does not match the task');
      }
      if (stored.messageIds.has(message.messageId)) {
        record(stored.task.id, true);
        return { task: snapshot(stored) };
      }
      if (TERMINAL_STATES.includes(stored.task.status.state)) {
        throw new RpcFailure(-32004, `Task ${stored.task.id} is in a terminal state (${stored.task.status.state})`);
      }
    } else {
      const earlier = startedBy.get(`${variant} ${message.messageId}`);
      const earlierTask = earlier ? tasks.get(earlier) : undefined;
      if (earlierTask) {
        record(earlierTask.task.id, true);
        return { task: snapshot(earlierTask) };
      }
    }

    // Seed 003 "Skill routing": "Your agent must enforce the route, reject unsupported skills,
    // and keep the new context inside the skill": a follow-up must carry the route its task
    // started with (none when it started unrestricted).
    const route = modes.skillRouting ? requestMetadata?.[SKILL_ROUTING_EXTENSION] : undefined;
    let routedSkill: string | null = null;
    if (route !== undefined) {
      const skills = buildCard(variant, baseUrl, modes).skills.map((s) => s.id);
      if (!isObject(route) || typeof route.skillId !== 'string' || !skills.includes(route.skillId)) {
        throw new RpcFailure(-32602, `unsupported skill ${String(isObject(route) ? route.skillId : route)}`);
      }
      routedSkill = route.skillId;
    }
    if (modes.skillRouting && stored && (stored.skillId ?? null) !== routedSkill) {
      throw new RpcFailure(
        -32602,
        `task ${stored.task.id} is routed to ${stored.skillId ? `skill ${stored.skillId}` : 'no skill'}; this message is routed to ${routedSkill ? `skill ${routedSkill}` : 'no skill'}`,
      );
    }

    // Compute before mutating, so a scripted-reply error leaves no trace.
    const reply = computeReply(variant, message, stored);

    if (!stored) {
      const id = randomUUID();
      stored = {
        variant,
        task: {
          id,
          contextId: message.contextId ?? randomUUID(),
          status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
          history: [],
        },
        messageIds: new Set(),
        skillId: routedSkill,
      };
      tasks.set(id, stored);
      startedBy.set(`${variant} ${message.messageId}`, id);
    }
    const task = stored.task;
    const pushConfig = isObject(params.configuration) ? params.configuration.taskPushNotificationConfig : undefined;
    if (modes.push && !stored.push && isObject(pushConfig) && typeof pushConfig.url === 'string' && typeof pushConfig.token === 'string') {
      stored.push = { url: pushConfig.url, token: pushConfig.token };
    }
    stored.messageIds.add(message.messageId);
    record(task.id, false);
    task.history!.push({ ...structuredClone(message), taskId: task.id, contextId: task.contextId });

    const agentMessage: Message = {
      messageId: randomUUID(),
      role: 'ROLE_AGENT',
      parts: reply.parts,
      taskId: task.id,
      contextId: task.contextId,
    };
    const done = stored;
    const finish = () => {
      task.status = { state: reply.state, message: agentMessage, timestamp: new Date().toISOString() };
      task.history!.push(structuredClone(agentMessage));
      const asked = formAskedIn(reply.parts);
      if (asked) done.askedForm = asked;
      return snapshot(done);
    };
    if (defer || (modes.push && stored.push)) {
      task.status = { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() };
      return { task: snapshot(stored), stored, finish };
    }
    finish();
    return { task: snapshot(stored), stored };
  };

  /** Push mode: applies the reply after a delay and posts it to the task's callback. */
  const schedulePush = (stored: StoredTask, finish: () => Task) => {
    const target = stored.push!;
    setTimeout(async () => {
      await opts.beforePush?.(stored.task.id);
      const task = finish();
      const body = { statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } };
      const entry: SentPush = { taskId: task.id, url: target.url, token: target.token, body, outcome: 'pending' };
      fetch(target.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-A2A-Notification-Token': target.token },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (r) => {
          await r.body?.cancel().catch(() => undefined);
          entry.outcome = r.status;
          pushes.push(entry);
        },
        (e: unknown) => {
          entry.outcome = String((e as Error)?.message ?? e);
          pushes.push(entry);
        },
      );
    }, opts.pushDelayMs ?? 50);
  };

  /** One SSE event: a JSON-RPC response, or (HTTP+JSON, id null) the bare StreamResponse. */
  const sse = (res: ServerResponse, id: string | number | null, result: unknown) =>
    res.write(`data: ${JSON.stringify(id === null ? result : { jsonrpc: '2.0', id, result })}\n\n`);

  const streamMessage = async (variant: Variant, id: string | number | null, params: unknown, req: IncomingMessage, res: ServerResponse, headers: Record<string, string>) => {
    const r = sendMessage(variant, params, req, true);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...headers });
    open += 1;
    try {
      // Seed 003: "TASK_STATE_WORKING, then a final status event with TASK_STATE_INPUT_REQUIRED or TASK_STATE_COMPLETED."
      sse(res, id, { task: r.task });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const task = r.finish ? r.finish() : r.task;
      if (dropNext.delete(variant)) {
        res.destroy();
        return;
      }
      sse(res, id, { statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } });
      await gate;
      res.end();
    } finally {
      open -= 1;
    }
  };

  const subscribe = async (variant: Variant, id: string | number | null, params: unknown, res: ServerResponse, headers: Record<string, string>) => {
    const task = getTask(variant, params);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...headers });
    sse(res, id, { task });
    res.end();
  };

  const getTask = (variant: Variant, params: unknown): Task => {
    if (!isObject(params) || typeof params.id !== 'string') throw new RpcFailure(-32602, 'params.id is required');
    const stored = tasks.get(params.id);
    if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${params.id}`);
    const historyLength = typeof params.historyLength === 'number' ? params.historyLength : undefined;
    return snapshot(stored, historyLength);
  };

  const cancelTask = (variant: Variant, params: unknown): Task => {
    if (!isObject(params) || typeof params.id !== 'string') throw new RpcFailure(-32602, 'params.id is required');
    const stored = tasks.get(params.id);
    if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${params.id}`);
    if (TERMINAL_STATES.includes(stored.task.status.state)) {
      throw new RpcFailure(-32002, `Task ${params.id} cannot be canceled: it is ${stored.task.status.state}`);
    }
    stored.task.status = { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() };
    return snapshot(stored);
  };

  const handleRpc = async (variant: Variant, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const failure = failures.get(variant);
    if (failure && failure.count > 0) {
      failure.count -= 1;
      req.resume();
      req.on('end', () => sendJson(res, failure.status, { error: `Injected failure (HTTP ${failure.status})` }));
      return;
    }

    const body = await readBody(req, REQUEST_MAX_BYTES);
    const rpcError = (id: unknown, code: number, message: string, status = 200) =>
      sendJson(res, status, { jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code, message } });

    if (body === null) {
      req.resume();
      rpcError(null, -32600, `Request body is larger than ${REQUEST_MAX_BYTES} bytes`, 413);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      rpcError(null, -32700, 'Parse error: the body is not JSON');
      return;
    }
    if (!isObject(json) || json.jsonrpc !== '2.0' || typeof json.method !== 'string' ||
        (typeof json.id !== 'string' && typeof json.id !== 'number')) {
      rpcError(isObject(json) ? json.id : null, -32600, 'Invalid request: a JSON-RPC 2.0 request object with an id is required');
      return;
    }
    const id = json.id;
    calls.push({ variant, method: json.method, binding: 'JSONRPC' });

    const version = header(req, 'a2a-version');
    if (version !== undefined && version.trim() !== '' && !/^1\.0(\.\d+)?$/.test(version.trim())) {
      rpcError(id, -32009, `A2A version ${version} is not supported; this agent speaks ${A2A_VERSION}`);
      return;
    }

    // Echo the extensions this agent activated: those requested that its card advertises.
    const advertised = (buildCard(variant, baseUrl, modes).capabilities.extensions ?? []).map((e) => e.uri);
    const requested = (header(req, 'a2a-extensions') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const activated = requested.filter((uri) => advertised.includes(uri));
    const responseHeaders: Record<string, string> = activated.length > 0 ? { 'A2A-Extensions': activated.join(', ') } : {};

    try {
      let result: unknown;
      switch (json.method) {
        case 'SendMessage': {
          const r = sendMessage(variant, json.params, req);
          if (r.finish && r.stored?.push) schedulePush(r.stored, r.finish);
          await opts.beforeReply?.(received[received.length - 1]!);
          result = { task: r.task };
          break;
        }
        case 'GetTask':
          result = getTask(variant, json.params);
          break;
        case 'CancelTask':
          result = cancelTask(variant, json.params);
          break;
        case 'SendStreamingMessage':
          await streamMessage(variant, id, json.params, req, res, responseHeaders);
          return;
        case 'SubscribeToTask':
          await subscribe(variant, id, json.params, res, responseHeaders);
          return;
        default:
          throw new RpcFailure(-32601, `Method not found: ${json.method.slice(0, 100)}`);
      }
      sendJson(res, 200, { jsonrpc: '2.0', id, result }, responseHeaders);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof RpcFailure) {
        rpcError(id, err.code, err.message);
        return;
      }
      rpcError(id, -32603, 'Internal error');
    }
  };

  /** The HTTP+JSON binding: the same behaviour as JSON-RPC on REST routes. */
  const handleRest = async (variant: Variant, route: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const failure = failures.get(variant);
    if (failure && failure.count > 0) {
      failure.count -= 1;
      req.resume();
      req.on('end', () => sendJson(res, failure.status, { error: { code: failure.status, message: `Injected failure (HTTP ${failure.status})` } }));
      return;
    }
    const fail = (status: number, message: string) => sendJson(res, status, { error: { code: status, message } });
    const body = req.method === 'POST' ? await readBody(req, REQUEST_MAX_BYTES) : Buffer.from('{}');
    if (body === null) return fail(413, 'Request body is too large');
    let params: unknown;
    try {
      params = body.length ? JSON.parse(body.toString('utf8')) : {};
    } catch {
      return fail(400, 'The body is not JSON');
    }
    const taskRoute = /^\/tasks\/([^/:]+)(?::(cancel|subscribe))?$/.exec(route);
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    let method: string;
    if (req.method === 'POST' && route === '/message:send') method = 'SendMessage';
    else if (req.method === 'POST' && route === '/message:stream') method = 'SendStreamingMessage';
    else if (req.method === 'GET' && taskRoute && !taskRoute[2]) method = 'GetTask';
    else if (req.method === 'POST' && taskRoute?.[2] === 'cancel') method = 'CancelTask';
    else if (req.method === 'GET' && taskRoute?.[2] === 'subscribe') method = 'SubscribeToTask';
    else return fail(404, 'Not found');
    calls.push({ variant, method, binding: 'HTTP+JSON' });
    const idParams = taskRoute
      ? { id: decodeURIComponent(taskRoute[1]!), ...(query.has('historyLength') ? { historyLength: Number(query.get('historyLength')) } : {}) }
      : undefined;
    try {
      switch (method) {
        case 'SendMessage': {
          const r = sendMessage(variant, params, req);
          if (r.finish && r.stored?.push) schedulePush(r.stored, r.finish);
          return sendJson(res, 200, { task: r.task });
        }
        case 'GetTask':
          return sendJson(res, 200, getTask(variant, idParams));
        case 'CancelTask':
          return sendJson(res, 200, cancelTask(variant, idParams));
        case 'SendStreamingMessage':
          return await streamMessage(variant, null, params, req, res, {});
        default:
          return await subscribe(variant, null, idParams, res, {});
      }
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      if (err instanceof RpcFailure) return fail(err.code === -32001 ? 404 : 400, err.message);
      return fail(500, 'Internal error');
    }
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const rest = /^\/([a-z0-9]+)\/rest(\/.*)$/.exec(path);
    if (rest && modes.httpJson && (VARIANTS as readonly string[]).includes(rest[1]!)) {
      handleRest(rest[1] as Variant, rest[2]!, req, res).catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: 'Internal error' });
        else res.destroy();
      });
      return;
    }
    const match = /^\/([a-z0-9]+)\/(card\.json|a2a)$/.exec(path);
    const variant = match && (VARIANTS as readonly string[]).includes(match[1]!) ? (match[1] as Variant) : undefined;

    if (req.method === 'GET' && path === '/') {
      sendJson(res, 200, { variants: Object.fromEntries(VARIANTS.map((v) => [v, `${baseUrl}/${v}/card.json`])) });
      return;
    }
    if (!variant || !match) {
      req.resume();
      sendJson(res, 404, { error: 'Not found' });
      return;
    }
    if (match[2] === 'card.json') {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        req.resume();
        sendJson(res, 405, { error: 'Method not allowed' }, { Allow: 'GET' });
        return;
      }
      sendJson(res, 200, buildCard(variant, baseUrl, modes));
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      sendJson(res, 405, { error: 'Method not allowed' }, { Allow: 'POST' });
      return;
    }
    handleRpc(variant, req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'Internal error' });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  baseUrl = (opts.publicUrl ?? `http://${urlHost}:${port}`).replace(/\/+$/, '');

  return {
    baseUrl,
    cardUrl: (variant) => `${baseUrl}/${variant}/card.json`,
    a2aUrl: (variant) => `${baseUrl}/${variant}/a2a`,
    received,
    pushes,
    calls,
    holdStreams() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        release();
        gate = Promise.resolve();
      };
    },
    dropNextStream(variant) {
      dropNext.add(variant);
    },
    openStreams: () => open,
    failNext(variant, count, status = 503) {
      failures.set(variant, { count, status });
    },
    getTask(taskId) {
      const stored = tasks.get(taskId);
      return stored ? snapshot(stored) : undefined;
    },
    reset() {
      tasks.clear();
      startedBy.clear();
      failures.clear();
      received.length = 0;
      pushes.length = 0;
      calls.length = 0;
      dropNext.clear();
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
