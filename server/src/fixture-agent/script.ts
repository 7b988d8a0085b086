import { actionDigest } from '../approvals/digest.js';
import { MEDIA_TYPE } from '../a2a/extensions.js';
import { A2A_TASK_STATES, type A2ATaskState, type Message, type Part } from '../a2a/types.js';
import { isPlainObject } from '../lib/untrusted.js';
import { codePointLength, jsonBytes } from '../limits.js';
import { executionEvidencePart, receivedAction, verifyApprovedMessage, type ApprovalAction } from '../verify-approval/index.js';
import type { ApprovalKeysCheck } from './approval-trust.js';
import {
  a2uiSurface,
  APPROVAL_REQUEST,
  APPROVAL_REQUEST_SEND_DATA,
  approvalPart,
  DEPLOY_APPROVAL_REQUEST,
  DEPLOY_REQUEST_FORM,
  INVALID_FORM,
  NEW_DEPLOYMENT_START_FORM,
  ROGUE_APPROVAL_REQUEST,
  UNKNOWN_MEDIA_TYPE,
  type Variant,
} from './content.js';

// The fixture agent's reply script: what each variant answers to a message, as a pure function
// of the message (and the form the task last asked for). No I/O and no task state: tasks.ts
// applies the reply.

export interface Reply {
  state: A2ATaskState;
  parts: Part[];
}

/** A JSON-RPC error the agent answers with (the HTTP+JSON binding maps it to a status). */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function textOf(message: Message): string {
  return message.parts
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
}

function dataPart(message: Message, mediaType: string): Record<string, unknown> | undefined {
  const part = message.parts.find((p) => p.mediaType === mediaType && isPlainObject(p.data));
  return part ? (part.data as Record<string, unknown>) : undefined;
}

const ECHO_HINT = 'Say approve to get an approval request.';

function say(state: A2ATaskState, text: string, ...more: Part[]): Reply {
  return { state, parts: [{ text }, ...more] };
}

/** What an approved message is checked against when the agent trusts a Taskbay (approval-trust.ts). */
export interface SignatureCheck {
  keys: ApprovalKeysCheck;
  /** The task the message arrived on (undefined: it started a new one). */
  taskId: string | undefined;
}

/**
 * An approved message: completes when it verifies, fails otherwise (seed 003 "check the digest").
 * Trusting a Taskbay, the agent checks its signature, request and task with the verification
 * module (docs/VERIFYING-APPROVALS.md), so a forged approval is refused; otherwise the digest only.
 */
function verifyApproval(variant: Variant, message: Message, askedForm: Record<string, unknown> | undefined, signed: SignatureCheck | undefined): Reply {
  const approval = message.metadata?.approval;
  if (!isPlainObject(approval) || typeof approval.revisionDigest !== 'string' || typeof approval.revision !== 'number') {
    return say('TASK_STATE_FAILED', 'Approval metadata is malformed: revision and revisionDigest are required.');
  }
  const done = `Done. Approved revision ${approval.revision}, digest ${approval.revisionDigest}`;
  if (signed) {
    if ('error' in signed.keys) return say('TASK_STATE_FAILED', `Approval refused: ${signed.keys.error}.`);
    const verdict = verifyApprovedMessage(message, { jwks: signed.keys.jwks, issuer: signed.keys.issuer, taskId: signed.taskId ?? '', form: askedForm });
    if (!verdict.ok) return say('TASK_STATE_FAILED', `Approval refused: ${verdict.reason}.`);
    return executed(variant, approval, verdict.action, say('TASK_STATE_COMPLETED', `${done}. Signature verified (key ${verdict.keyId}).`));
  }
  const action = receivedAction(message, askedForm);
  const computed = actionDigest(action);
  if (computed === approval.revisionDigest) return executed(variant, approval, action, say('TASK_STATE_COMPLETED', done));
  return say('TASK_STATE_FAILED', `Digest mismatch: expected ${computed}, got ${approval.revisionDigest}`);
}

/**
 * The evidence variants add an execution report to their reply (docs/VERIFYING-APPROVALS.md
 * "Reporting execution"): the reporter and the unlisted agent the digest recomputed from what
 * they received, the divergent agent the digest of something else it "executed" instead.
 */
function executed(variant: Variant, approval: Record<string, unknown>, action: ApprovalAction, reply: Reply): Reply {
  if (!EVIDENCE_VARIANTS.includes(variant)) return reply;
  if (typeof approval.requestId !== 'string' || typeof approval.decisionId !== 'string') return reply;
  const ids = { requestId: approval.requestId, decisionId: approval.decisionId };
  const part =
    variant === 'divergent'
      ? executionEvidencePart(ids, { kind: 'send_message', text: 'Delete the production cluster.', data: null }, 'succeeded', 'Ran a different command.')
      : executionEvidencePart(ids, action, 'succeeded', 'Executed the approved action.');
  return { state: reply.state, parts: [...reply.parts, part as unknown as Part] };
}

function scriptedReply(message: Message): Reply | undefined {
  const data = dataPart(message, MEDIA_TYPE.json);
  if (!data || !('reply' in data)) return undefined;
  const reply = data.reply;
  if (!isPlainObject(reply)) throw new RpcFailure(-32602, 'reply must be an object { state, parts }');
  if (typeof reply.state !== 'string' || !A2A_TASK_STATES.includes(reply.state as A2ATaskState)) {
    throw new RpcFailure(-32602, 'reply.state must be a TASK_STATE_* value');
  }
  if (!Array.isArray(reply.parts)) throw new RpcFailure(-32602, 'reply.parts must be an array');
  const parts = structuredClone(reply.parts) as Part[];
  if (reply.pad !== undefined) padPart(parts, reply.pad);
  return { state: reply.state as A2ATaskState, parts };
}

/** The largest part a scripted reply pads to (what Taskbay reads of an answer is bounded anyway). */
const PAD_MAX_BYTES = 1024 * 1024;

/**
 * A scripted reply's `pad: { part, member, toBytes }`: part `part` gets a member of that name
 * holding "x"s, so that its JSON is exactly `toBytes` bytes. The person's message that scripts
 * the reply is held to 64 KiB of data; a padded part can be larger (seed 000's 128 KB part).
 */
function padPart(parts: Part[], pad: unknown): void {
  if (!isPlainObject(pad) || !Number.isInteger(pad.part) || typeof pad.member !== 'string' || !Number.isInteger(pad.toBytes)) {
    throw new RpcFailure(-32602, 'reply.pad must be { part: integer, member: string, toBytes: integer }');
  }
  const part = parts[pad.part as number] as Record<string, unknown> | undefined;
  if (!isPlainObject(part)) throw new RpcFailure(-32602, 'reply.pad.part must name an object part');
  // defineProperty: a member named __proto__ is a plain member too.
  const set = (value: string) => Object.defineProperty(part, pad.member as string, { value, enumerable: true, writable: true, configurable: true });
  set('');
  const missing = (pad.toBytes as number) - jsonBytes(part);
  if (missing < 0 || (pad.toBytes as number) > PAD_MAX_BYTES)
    throw new RpcFailure(-32602, `reply.pad.toBytes must be at least the part's size and at most ${PAD_MAX_BYTES}`);
  set('x'.repeat(missing));
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
  const serviceRule = NEW_DEPLOYMENT_START_FORM.schema.properties.service;
  if (service !== undefined && (typeof service !== 'string' || service.length < serviceRule.minLength || codePointLength(service) > serviceRule.maxLength)) {
    problems.push(`service must be ${serviceRule.minLength} to ${serviceRule.maxLength} characters`);
  }
  if (dryRun !== undefined && typeof dryRun !== 'boolean') problems.push('dryRun must be a boolean');
  const noteMax = DEPLOY_REQUEST_FORM.schema.properties.note.maxLength;
  if (note !== undefined && (typeof note !== 'string' || codePointLength(note) > noteMax)) problems.push(`note must be at most ${noteMax} characters`);
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

const EVIDENCE_VARIANTS: readonly Variant[] = ['reporter', 'divergent', 'unlisted'];

function approvalReply(variant: Variant, command: string): Reply | undefined {
  const asks = 'Please approve this action.';
  const asksForApproval = variant === 'approver' || variant === 'showcase' || EVIDENCE_VARIANTS.includes(variant);
  if (command === 'approve data' && asksForApproval) {
    return say('TASK_STATE_INPUT_REQUIRED', 'Please approve this deploy.', approvalPart(APPROVAL_REQUEST_SEND_DATA));
  }
  if (command !== 'approve') return undefined;
  switch (variant) {
    case 'showcase':
    case 'approver':
    case 'plain':
    case 'reporter':
    case 'divergent':
    case 'unlisted':
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
    case 'deployer':
      return say('TASK_STATE_INPUT_REQUIRED', 'Please approve this deploy.', approvalPart(DEPLOY_APPROVAL_REQUEST));
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

/**
 * The reply of `variant` to `message`; `askedForm` is the form of the latest send_data approval
 * request sent on the task (its digest covers the form); `signed` when the agent checks approval
 * signatures. Throws RpcFailure for a malformed scripted reply.
 */
export function computeReply(variant: Variant, message: Message, askedForm: Record<string, unknown> | undefined, signed?: SignatureCheck): Reply {
  if (message.metadata && 'approval' in message.metadata) return verifyApproval(variant, message, askedForm, signed);

  if (variant === 'scripted') {
    const scripted = scriptedReply(message);
    if (scripted) return scripted;
  }

  const values = dataPart(message, MEDIA_TYPE.json);
  if (values && (variant === 'form' || variant === 'showcase')) return deploySubmission(values);

  const a2uiData = dataPart(message, MEDIA_TYPE.a2ui);
  if (a2uiData && isPlainObject(a2uiData.action) && (variant === 'a2ui' || variant === 'showcase')) {
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
export function formAskedIn(parts: Part[]): Record<string, unknown> | undefined {
  for (const part of parts) {
    if (part.mediaType !== MEDIA_TYPE.approvalRequest || !isPlainObject(part.data)) continue;
    const action = part.data.action;
    if (isPlainObject(action) && action.kind === 'send_data' && isPlainObject(action.form)) return structuredClone(action.form);
  }
  return undefined;
}

/** params.message of a SendMessage, checked before anything is stored. */
export function validateMessage(v: unknown): Message {
  if (!isPlainObject(v)) throw new RpcFailure(-32602, 'params.message must be an object');
  if (typeof v.messageId !== 'string' || v.messageId.length === 0) throw new RpcFailure(-32602, 'message.messageId is required');
  if (v.role !== 'ROLE_USER') throw new RpcFailure(-32602, 'message.role must be ROLE_USER');
  if (!Array.isArray(v.parts) || v.parts.length === 0) throw new RpcFailure(-32602, 'message.parts must be a non-empty array');
  if (!v.parts.every(isPlainObject)) throw new RpcFailure(-32602, 'message.parts must hold objects');
  for (const key of ['taskId', 'contextId'] as const) {
    if (v[key] !== undefined && typeof v[key] !== 'string') throw new RpcFailure(-32602, `message.${key} must be a string`);
  }
  if (v.metadata !== undefined && !isPlainObject(v.metadata)) throw new RpcFailure(-32602, 'message.metadata must be an object');
  return v as unknown as Message;
}
