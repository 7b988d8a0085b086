import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { AgentCardError, validateAgentCard } from '../../src/a2a/card.js';
import { A2A_ID_MAX, A2AError, parseMessage, parseStreamEvent, parseTask } from '../../src/a2a/client.js';
import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { A2A_TASK_STATES, TERMINAL_STATES, type Message } from '../../src/a2a/types.js';
import type { TaskbayInstance } from '../../src/app.js';
import {
  applyActionEdit,
  findApprovalRequest,
  parseApprovalAction,
  parseApprovalRequest,
  type ApprovalRequestInput,
} from '../../src/approvals/request-part.js';
import { actionDigest, type ApprovalAction } from '../../src/approvals/digest.js';
import { storable, isStorable } from '../../src/db/storable.js';
import { ERROR_CODES } from '../../src/errors.js';
import { parseA2uiAction, parseA2uiEnvelopes } from '../../src/forms/a2ui.js';
import { coerceFormReply, FORM_ERROR_KEY, isEnumProperty, parseFormDefinition, validateFormValues, type FormDefinition } from '../../src/forms/form-subset.js';
import { parseCommands, parseSealedPayload, SEALED_FIELDS, type SealedPayload } from '../../src/commands/rules.js';
import {
  A2UI_LIMITS,
  AGENT_LIMITS,
  APPROVAL_LIMITS,
  codePointLength,
  COMMAND_LIMITS,
  FORM_LIMITS,
  JSON_DEPTH_MAX,
  jsonBytes,
  RISKS,
} from '../../src/limits.js';
import { recordObservation } from '../../src/tasks/observe.js';
import { hashPushToken } from '../../src/tasks/service.js';
import { Task } from '../../src/tasks/entities.js';
import { canon, sha256 } from '../support/independent-digest.js';
import {
  a2uiAction,
  a2uiEnvelopes,
  agentCard,
  agentIdText,
  agentMessage,
  agentPart,
  anyIds,
  anyValue,
  approvalAction,
  approvalRequest,
  commandList,
  FIXED_FORMS,
  formDefinition,
  formValuesFor,
  hostileNumber,
  hostileString,
  pushBody,
  sealedPayload,
} from './arbitraries.js';

// The properties of hostile input (issue 14, item 5), in one place, run by two entries: a small
// sample in `npm test` (server/test/unit/fuzz-sample.test.ts, world ones in
// server/test/integration/security/fuzz-sample.test.ts) and the long run `npm run fuzz`
// (server/scripts/fuzz.ts). For every reader of agent or person input:
//   - no crash: nothing but a result (or the reader's own domain error) comes out;
//   - every rejection is explained: a non-empty message (and, over the API, a contract code);
//   - deterministic: the same input gives the same answer;
//   - what is accepted is within the limits of server/src/limits.ts (and the reader's own);
//   - observations never fail: a hostile part is stored as ordinary data;
//   - nothing pollutes Object.prototype.
// A property throws a PropertyViolation naming what broke; fast-check shrinks the input.

export class PropertyViolation extends Error {}

/** Outcomes of the current run (accepted, refused, ...), so a run shows both paths were taken. */
let outcomes = new Map<string, number>();
function tally(outcome: string): void {
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
}

function must(cond: unknown, what: string): asserts cond {
  if (!cond) throw new PropertyViolation(what);
}

const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();
function noPollution(): void {
  must(isDeepStrictEqual(Object.getOwnPropertyNames(Object.prototype).sort(), PROTO_KEYS), 'Object.prototype gained a property');
  must(Object.getPrototypeOf({}) === Object.prototype, 'the prototype of {} changed');
}

/**
 * Structural equality without recursion (deep inputs overflow util.isDeepStrictEqual): same
 * prototypes, same own keys, numbers by Object.is.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length) {
    const [x, y] = stack.pop()!;
    if (typeof x !== 'object' || x === null || typeof y !== 'object' || y === null) {
      if (!Object.is(x, y)) return false;
      continue;
    }
    if (Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return false;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!Object.hasOwn(y, k)) return false;
      stack.push([(x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]]);
    }
  }
  return true;
}

/** Runs fn; a throw is returned as a value (so properties can say what escaped). */
function attempt<T>(fn: () => T): { value: T } | { thrown: unknown } {
  try {
    return { value: fn() };
  } catch (e) {
    return { thrown: e };
  }
}

function describeThrown(e: unknown): string {
  return e instanceof Error ? `${e.constructor.name}: ${e.message.slice(0, 200)}` : String(e).slice(0, 200);
}

/** A reader that answers { ok, error } must never throw and must explain every refusal. */
function explainedResult<T extends { ok: boolean }>(what: string, fn: () => T): T {
  const r = attempt(fn);
  must(!('thrown' in r), `${what} threw ${'thrown' in r ? describeThrown(r.thrown) : ''}`);
  const v = r.value;
  must(v && typeof v === 'object' && typeof v.ok === 'boolean', `${what} answered something that is not a result`);
  if (!v.ok) {
    const err = (v as unknown as { error?: unknown; errors?: unknown }).error ?? (v as unknown as { errors?: unknown }).errors;
    const messages = typeof err === 'string' ? [err] : err && typeof err === 'object' ? Object.values(err as Record<string, unknown>) : [];
    must(messages.length > 0 && messages.every((m) => typeof m === 'string' && m.trim().length > 0), `${what} refused without a message`);
  }
  return v;
}

/** Same input, same answer (results compared deeply, thrown errors by class and message). */
function deterministic(what: string, fn: () => unknown): void {
  const a = attempt(fn);
  const b = attempt(fn);
  if ('thrown' in a || 'thrown' in b) {
    must('thrown' in a && 'thrown' in b && describeThrown(a.thrown) === describeThrown(b.thrown), `${what} is not deterministic (one run threw)`);
    return;
  }
  must(sameValue(a.value, b.value), `${what} is not deterministic`);
}

/**
 * Plain JSON data: plain objects (prototype Object.prototype or null), arrays, finite numbers,
 * strings, booleans, null; nothing nested deeper than `maxDepth`. Checked without recursion.
 */
function jsonClean(value: unknown, what: string, maxDepth = 100): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    must(d <= maxDepth, `${what} is nested deeper than ${maxDepth}`);
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      must(Number.isFinite(v), `${what} holds a non-finite number`);
      continue;
    }
    must(typeof v === 'object', `${what} holds a ${typeof v}`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        must(i in v && v[i] !== undefined, `${what} holds a hole or undefined in an array`);
        stack.push([v[i], d + 1]);
      }
      continue;
    }
    const proto = Object.getPrototypeOf(v);
    must(proto === Object.prototype || proto === null, `${what} holds an object that is not plain`);
    for (const k of Object.keys(v as object)) {
      const x = (v as Record<string, unknown>)[k];
      must(x !== undefined, `${what} holds undefined under ${JSON.stringify(k)}`);
      stack.push([x, d + 1]);
    }
  }
}

/**
 * Agent data keeps an own `__proto__` key as data (docs/choices.md, "Agent data is kept
 * exactly"), but never as a prototype: every object is still a plain object.
 */
function plainObjects(value: unknown, what: string): void {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    const proto = Object.getPrototypeOf(v);
    must(Array.isArray(v) ? proto === Array.prototype : proto === Object.prototype || proto === null, `${what} has an object whose prototype was changed`);
    for (const x of Object.values(v)) stack.push(x);
  }
}

/** No own `__proto__` key anywhere (readers that promise to drop them). */
function noProtoKeys(value: unknown, what: string): void {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    if (!Array.isArray(v)) must(!Object.hasOwn(v, '__proto__'), `${what} kept a __proto__ key`);
    for (const x of Object.values(v)) stack.push(x);
  }
}

/**
 * Whether a value gets past Taskbay's boundaries to the readers as it is: a person's input with
 * U+0000, a lone surrogate (or too deep to serialise) is refused (graphql/storable-input.ts),
 * an agent's is stored with U+FFFD (db/storable.ts) before detection reads it. The readers'
 * accepted values are checked for storability and digestibility on such input.
 */
function passesBoundary(value: unknown): boolean {
  try {
    return isStorable(value);
  } catch {
    return false;
  }
}

const within = (s: unknown, min: number, max: number) => typeof s === 'string' && codePointLength(s, max) >= min && codePointLength(s, max) <= max;

/** The digest of an action, computed without the product's code (RFC 8785 of plain values). */
export function independentDigest(action: ApprovalAction): string {
  const input =
    action.kind === 'send_message'
      ? { kind: action.kind, text: action.text, data: action.data ?? null }
      : { kind: action.kind, form: action.form, values: action.values };
  return sha256(canon(input));
}

// ---------------------------------------------------------------------------------------------
// Limits of accepted values (server/src/limits.ts and each reader's own)

function formWithinLimits(form: FormDefinition, what: string): void {
  jsonClean(form, what);
  const names = Object.keys(form.schema.properties);
  must(names.length >= FORM_LIMITS.propertiesMin && names.length <= FORM_LIMITS.propertiesMax, `${what} has ${names.length} properties`);
  for (const name of names) {
    must(FORM_LIMITS.propertyName.test(name) && !FORM_LIMITS.reservedNames.includes(name), `${what} accepted the property name ${JSON.stringify(name)}`);
    const p = form.schema.properties[name]!;
    must(['string', 'number', 'integer', 'boolean'].includes(p.type), `${what}.${name} has type ${p.type}`);
    if (isEnumProperty(p)) {
      must(p.enum.length >= 1 && p.enum.length <= FORM_LIMITS.enumMax && new Set(p.enum).size === p.enum.length, `${what}.${name} enum out of limits`);
      if (p.enumNames) must(p.enumNames.length === p.enum.length, `${what}.${name} enumNames length`);
    }
    if ('minimum' in p && 'maximum' in p && p.minimum !== undefined && p.maximum !== undefined)
      must(p.minimum <= p.maximum, `${what}.${name} minimum > maximum`);
    if ('minLength' in p && 'maxLength' in p && p.minLength !== undefined && p.maxLength !== undefined)
      must(p.minLength <= p.maxLength, `${what}.${name} minLength > maxLength`);
  }
  for (const list of [form.schema.required ?? [], form.order ?? []])
    must(
      list.every((n) => names.includes(n)),
      `${what} lists an undeclared name`,
    );
}

/** Values accepted for a form: declared keys only, types, bounds, lengths in code points, enums, required. */
function valuesWithinForm(form: FormDefinition, values: Record<string, unknown>, what: string): void {
  jsonClean(values, what);
  const props = form.schema.properties;
  for (const [k, v] of Object.entries(values)) {
    must(Object.hasOwn(props, k), `${what} holds the undeclared key ${JSON.stringify(k)}`);
    const p = props[k]!;
    if (p.type === 'boolean') must(typeof v === 'boolean', `${what}.${k} is not a boolean`);
    else if (p.type === 'string') {
      must(typeof v === 'string', `${what}.${k} is not a string`);
      if (isEnumProperty(p)) must(p.enum.includes(v as string), `${what}.${k} is not one of its enum`);
      else {
        const n = codePointLength(v as string);
        if (p.minLength !== undefined) must(n >= p.minLength, `${what}.${k} is shorter than minLength`);
        if (p.maxLength !== undefined) must(n <= p.maxLength, `${what}.${k} is longer than maxLength`);
      }
    } else {
      must(typeof v === 'number' && Number.isFinite(v), `${what}.${k} is not a finite number`);
      if (p.type === 'integer') must(Number.isInteger(v), `${what}.${k} is not an integer`);
      if (p.minimum !== undefined) must((v as number) >= p.minimum, `${what}.${k} is below its minimum`);
      if (p.maximum !== undefined) must((v as number) <= p.maximum, `${what}.${k} is above its maximum`);
    }
  }
  for (const r of form.schema.required ?? []) must(Object.hasOwn(values, r), `${what} lacks the required ${r}`);
}

function actionWithinLimits(action: ApprovalAction, what: string): void {
  jsonClean(action, what, Infinity);
  if (action.kind === 'send_message') {
    must(
      within(action.text, APPROVAL_LIMITS.textMin, APPROVAL_LIMITS.textMax),
      `${what}.text is outside ${APPROVAL_LIMITS.textMin}..${APPROVAL_LIMITS.textMax} code points`,
    );
    if (action.data !== undefined && action.data !== null) {
      must(typeof action.data === 'object' && !Array.isArray(action.data), `${what}.data is not an object`);
      must(jsonBytes(action.data) <= APPROVAL_LIMITS.dataMaxBytes, `${what}.data is over ${APPROVAL_LIMITS.dataMaxBytes} bytes`);
      must(depthOf(action.data) <= APPROVAL_LIMITS.dataDepthMax, `${what}.data is nested deeper than ${APPROVAL_LIMITS.dataDepthMax}`);
    }
  } else {
    must(action.kind === 'send_data', `${what}.kind is ${String((action as { kind: unknown }).kind)}`);
    must(jsonBytes(action.form) <= APPROVAL_LIMITS.formMaxBytes, `${what}.form is over ${APPROVAL_LIMITS.formMaxBytes} bytes`);
    const form = parseFormDefinition(action.form);
    must(form.ok, `${what}.form does not parse again`);
    formWithinLimits(form.form, `${what}.form`);
    valuesWithinForm(form.form, action.values, `${what}.values`);
  }
  // The product can digest what it accepted (its digest and the audit hash recurse), and what
  // is digested at creation is what a JSON round trip (the database) gives back.
  const digest = attempt(() => actionDigest(action));
  must(!('thrown' in digest), `${what} cannot be digested: ${'thrown' in digest ? describeThrown(digest.thrown) : ''}`);
  if (depthOf(action) <= 500) {
    must(independentDigest(action) === digest.value, `${what}: the product's digest differs from an independent one`);
    must(independentDigest(JSON.parse(JSON.stringify(action)) as ApprovalAction) === digest.value, `${what} does not survive a JSON round trip`);
  }
}

/** The value with unstorable characters replaced, or as it is when too deep to rewrite. */
function storableIfPossible<T>(value: T): T {
  try {
    return storable(value);
  } catch {
    return value;
  }
}

/** A NUL or a lone surrogate in any string or key (checked here without the product's code). */
function holdsUnstorableText(value: unknown): boolean {
  const bad = /\u0000|\p{Cs}/u;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (bad.test(v)) return true;
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (bad.test(k)) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/** Nesting depth, without recursion. */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (d > max) max = d;
    if (v && typeof v === 'object') for (const x of Object.values(v)) stack.push([x, d + 1]);
  }
  return max;
}

function requestWithinLimits(r: ApprovalRequestInput, what: string): void {
  must(within(r.title, APPROVAL_LIMITS.titleMin, APPROVAL_LIMITS.titleMax), `${what}.title is outside the limits`);
  must(r.summary === null || within(r.summary, 0, APPROVAL_LIMITS.summaryMax), `${what}.summary is outside the limits`);
  must((RISKS as readonly string[]).includes(r.risk), `${what}.risk is ${r.risk}`);
  must(
    r.expiresInSeconds === null ||
      (Number.isInteger(r.expiresInSeconds) &&
        r.expiresInSeconds >= APPROVAL_LIMITS.expiresMinSeconds &&
        r.expiresInSeconds <= APPROVAL_LIMITS.expiresMaxSeconds),
    `${what}.expiresInSeconds is ${r.expiresInSeconds}`,
  );
  must(isDeepStrictEqual(Object.keys(r).sort(), ['action', 'expiresInSeconds', 'risk', 'summary', 'title']), `${what} carries fields it should not read`);
  actionWithinLimits(r.action, `${what}.action`);
}

// ---------------------------------------------------------------------------------------------
// Pure properties

export interface PureProperty {
  name: string;
  /** Share of the generated cases (runs = weight x scale). */
  weight: number;
  property: () => fc.IProperty<any>;
}

export const PURE_PROPERTIES: PureProperty[] = [
  {
    name: 'approval request: parseApprovalRequest',
    weight: 16,
    property: () =>
      fc.property(approvalRequest, (data) => {
        const r = explainedResult('parseApprovalRequest', () => parseApprovalRequest(data));
        tally(r.ok ? 'accepted' : 'refused');
        deterministic('parseApprovalRequest', () => parseApprovalRequest(data));
        if (r.ok) {
          // What is accepted is what was sent (documented fields only, defaults when absent).
          const d = data as Record<string, any>;
          must(r.request.title === d.title, 'the accepted title is not the one sent');
          must(r.request.summary === (d.summary ?? null), 'the accepted summary is not the one sent');
          must(r.request.risk === (d.risk ?? 'medium'), 'the accepted risk is not the one sent');
          must(r.request.expiresInSeconds === (d.expiresInSeconds ?? null), 'the accepted expiry is not the one sent');
          must(r.request.action.kind === d.action.kind, 'the accepted action kind is not the one sent');
          if (r.request.action.kind === 'send_message') must(r.request.action.text === d.action.text, 'the accepted text is not the one sent');
          if (passesBoundary(data)) requestWithinLimits(r.request, 'request');
        }
        noPollution();
      }),
  },
  {
    name: 'approval request: findApprovalRequest over message parts',
    weight: 8,
    property: () =>
      fc.property(fc.oneof({ weight: 8, arbitrary: fc.array(agentPart, { maxLength: 5 }) }, { weight: 1, arbitrary: anyValue }), (parts) => {
        const found = attempt(() => findApprovalRequest(parts));
        must(!('thrown' in found), `findApprovalRequest threw ${'thrown' in found ? describeThrown(found.thrown) : ''}`);
        tally(found.value ? 'found' : 'none found');
        deterministic('findApprovalRequest', () => findApprovalRequest(parts));
        const f = found.value;
        if (f) {
          const list = parts as unknown[];
          const part = list[f.partIndex] as { mediaType?: unknown; data?: unknown };
          must(part?.mediaType === MEDIA_TYPE.approvalRequest, 'the found part is not an approval part');
          must(jsonBytes(part) <= APPROVAL_LIMITS.partMaxBytes, `the found part is over ${APPROVAL_LIMITS.partMaxBytes} bytes`);
          const again = parseApprovalRequest(part.data);
          must(again.ok && sameValue(again.request, f.request), 'the found request differs from its part');
          if (passesBoundary(parts)) requestWithinLimits(f.request, 'found request');
          // "The first valid part in the message wins."
          for (let i = 0; i < f.partIndex; i++) must(findApprovalRequest([list[i]]) === null, `part ${i} was valid but part ${f.partIndex} won`);
        }
        noPollution();
      }),
  },
  {
    name: 'approval action: applyActionEdit (editAndApprove)',
    weight: 8,
    property: () =>
      fc.property(
        approvalAction.filter((a) => passesBoundary(a) && parseApprovalAction(a).ok),
        fc.oneof(
          approvalAction,
          anyValue,
          fc.record({ text: hostileString }),
          fc.record({ values: anyValue }),
          fc.record({ text: fc.string({ minLength: 1 }), data: anyValue }),
        ),
        (raw, edit) => {
          const original = (parseApprovalAction(raw) as { ok: true; action: ApprovalAction }).action;
          const r = explainedResult('applyActionEdit', () => applyActionEdit(original, edit));
          tally(r.ok ? 'accepted' : 'refused');
          deterministic('applyActionEdit', () => applyActionEdit(original, edit));
          if (r.ok) {
            must(r.action.kind === original.kind, 'the edit changed the action kind');
            if (r.action.kind === 'send_data' && original.kind === 'send_data')
              must(canon(r.action.form) === canon(original.form), 'the edit changed the form');
            if (passesBoundary(edit)) actionWithinLimits(r.action, 'edited action');
          }
          noPollution();
        },
      ),
  },
  {
    name: 'forms: parseFormDefinition',
    weight: 12,
    property: () =>
      fc.property(fc.oneof({ weight: 6, arbitrary: formDefinition }, { weight: 1, arbitrary: anyValue }), (input) => {
        const r = explainedResult('parseFormDefinition', () => parseFormDefinition(input));
        tally(r.ok ? 'accepted' : 'refused');
        deterministic('parseFormDefinition', () => parseFormDefinition(input));
        if (r.ok) {
          formWithinLimits(r.form, 'form');
          const again = parseFormDefinition(r.form);
          must(again.ok && sameValue(again.form, r.form), 'an accepted form does not parse to itself');
        }
        noPollution();
      }),
  },
  {
    name: 'forms: validateFormValues and coerceFormReply',
    weight: 10,
    property: () =>
      fc.property(
        fc
          .oneof({ weight: 1, arbitrary: fc.constantFrom(...FIXED_FORMS) }, { weight: 2, arbitrary: formDefinition })
          .map((f) => parseFormDefinition(f))
          .filter((r): r is { ok: true; form: FormDefinition } => r.ok)
          .chain((r) => fc.tuple(fc.constant(r.form), formValuesFor(r.form as never))),
        ([form, values]) => {
          const v = explainedResult('validateFormValues', () => validateFormValues(form, values));
          tally(v.ok ? 'values accepted' : 'values refused');
          deterministic('validateFormValues', () => validateFormValues(form, values));
          if (v.ok) valuesWithinForm(form, v.values, 'validated values');
          const c = explainedResult('coerceFormReply', () => coerceFormReply(form, values));
          deterministic('coerceFormReply', () => coerceFormReply(form, values));
          if (c.ok) valuesWithinForm(form, c.values, 'coerced reply');
          else
            for (const k of Object.keys(c.errors))
              must(k === FORM_ERROR_KEY || Object.hasOwn(form.schema.properties, k), `coerceFormReply keyed an error by ${JSON.stringify(k)}`);
          noPollution();
        },
      ),
  },
  {
    name: 'A2UI: parseA2uiEnvelopes',
    weight: 8,
    property: () =>
      fc.property(a2uiEnvelopes, (data) => {
        const r = attempt(() => parseA2uiEnvelopes(data));
        must(!('thrown' in r), `parseA2uiEnvelopes threw ${'thrown' in r ? describeThrown(r.thrown) : ''}`);
        tally(r.value ? 'accepted' : 'ordinary data');
        deterministic('parseA2uiEnvelopes', () => parseA2uiEnvelopes(data));
        const out = r.value;
        if (out !== null) {
          must(Array.isArray(out) && out.length >= 1 && out.length <= A2UI_LIMITS.envelopesMax, 'envelope count out of limits');
          must(jsonBytes(out) <= A2UI_LIMITS.bytesMax, `envelopes over ${A2UI_LIMITS.bytesMax} bytes`);
          jsonClean(out, 'envelopes', JSON_DEPTH_MAX);
          noProtoKeys(out, 'envelopes');
          for (const env of out as Record<string, any>[]) {
            const kinds = ['createSurface', 'updateComponents', 'updateDataModel', 'deleteSurface'].filter((k) => Object.hasOwn(env, k));
            must(
              env.version === 'v0.9' && kinds.length === 1 && typeof env[kinds[0]!].surfaceId === 'string' && env[kinds[0]!].surfaceId.length > 0,
              'an envelope is not v0.9 with one message and a surfaceId',
            );
          }
        }
        noPollution();
      }),
  },
  {
    name: "A2UI: parseA2uiAction (a person's button press)",
    weight: 5,
    property: () =>
      fc.property(a2uiAction, (input) => {
        const r = explainedResult('parseA2uiAction', () => parseA2uiAction(input));
        tally(r.ok ? 'accepted' : 'refused');
        deterministic('parseA2uiAction', () => {
          const x = parseA2uiAction(input);
          // The timestamp defaults to now: compare everything else.
          return x.ok ? { ...x.action, timestamp: typeof x.action.timestamp } : x;
        });
        if (r.ok) {
          must(within(r.action.name, 1, A2UI_LIMITS.nameMax) && within(r.action.surfaceId, 1, A2UI_LIMITS.nameMax), 'name or surfaceId out of limits');
          must(jsonBytes(r.action) <= A2UI_LIMITS.actionBytesMax, `action over ${A2UI_LIMITS.actionBytesMax} bytes`);
          jsonClean(r.action, 'action', JSON_DEPTH_MAX + 1); // context sits one level down
          noProtoKeys(r.action, 'action');
        }
        noPollution();
      }),
  },
  {
    name: 'push bodies: parseStreamEvent (and the bare-Task fallback)',
    weight: 10,
    property: () =>
      fc.property(pushBody(anyIds), (body) => {
        const parse = () => {
          try {
            return parseStreamEvent(body);
          } catch (e) {
            // push.ts: a bare Task (what pre-1.0 agents push).
            if (body && typeof body === 'object' && 'status' in body && 'id' in body) return { task: parseTask(body) };
            throw e;
          }
        };
        const r = attempt(parse);
        tally('thrown' in r ? 'refused' : 'accepted');
        deterministic('parseStreamEvent', parse);
        if ('thrown' in r) {
          must(r.thrown instanceof A2AError && r.thrown.message.trim().length > 0, `parseStreamEvent threw ${describeThrown(r.thrown)}`);
        } else {
          const ev = r.value as Record<string, any>;
          must(Object.keys(ev).length === 1, 'an event with more than one kind');
          jsonClean(ev, 'event', 200);
          plainObjects(ev, 'event');
          const status = ev.task?.status ?? ev.statusUpdate?.status;
          if (status) must((A2A_TASK_STATES as readonly string[]).includes(status.state), 'unknown task state accepted');
          // Ids Taskbay indexes fit an index entry.
          const ids = [
            ev.task?.id,
            ev.task?.contextId,
            ev.statusUpdate?.taskId,
            ev.statusUpdate?.contextId,
            ev.artifactUpdate?.taskId,
            ev.message?.messageId,
            status?.message?.messageId,
          ];
          for (const m of ev.task?.history ?? []) ids.push(m.messageId);
          for (const id of ids)
            if (id !== undefined)
              must(typeof id === 'string' && id.length >= 1 && id.length <= A2A_ID_MAX, `an id of ${String(id).length} characters was accepted`);
          // What is accepted can be stored: the storable copy serialises (depth bounded).
          const stored = attempt(() => JSON.stringify(storable(ev)));
          must(!('thrown' in stored), `an accepted event cannot be serialised: ${'thrown' in stored ? describeThrown(stored.thrown) : ''}`);
        }
        noPollution();
      }),
  },
  {
    name: 'agent cards: validateAgentCard',
    weight: 10,
    property: () =>
      fc.property(agentCard, (json) => {
        const r = attempt(() => validateAgentCard(json));
        tally('thrown' in r ? 'refused' : 'accepted');
        deterministic('validateAgentCard', () => validateAgentCard(json));
        if ('thrown' in r) {
          must(
            r.thrown instanceof AgentCardError && r.thrown.message.trim().length > 0 && r.thrown.reason.trim().length > 0,
            `validateAgentCard threw ${describeThrown(r.thrown)}`,
          );
        } else {
          const c = r.value;
          const L = AGENT_LIMITS;
          must(typeof c.name === 'string' && c.name.trim().length > 0 && within(c.name, 1, L.nameMax), 'card name out of limits');
          must(c.name === (json as Record<string, unknown>).name, "the accepted name is not the card's");
          must(c.supportedInterfaces.length >= 1 && c.supportedInterfaces.length <= L.interfacesMax, 'interface count out of limits');
          for (const i of c.supportedInterfaces) {
            must(/^https?:$/.test(new URL(i.url).protocol) && i.url.length <= L.urlMax, `interface url ${i.url.slice(0, 80)} accepted`);
            must(i.protocolBinding.length >= 1 && i.protocolBinding.length <= L.bindingMax, 'binding out of limits');
          }
          must((c.capabilities.extensions ?? []).length <= L.extensionsMax, 'too many extensions');
          must(c.skills.length <= L.skillsMax && new Set(c.skills.map((s) => s.id)).size === c.skills.length, 'skills out of limits or not unique');
          for (const s of c.skills) must(within(s.id, 1, L.skillIdMax) && within(s.name, 1, L.skillNameMax), 'skill out of limits');
          must(c.description === undefined || within(c.description, 0, L.descriptionMax), 'description out of limits');
          jsonClean(c, 'card', JSON_DEPTH_MAX + 4); // extension params sit four levels down
          noProtoKeys(c, 'card');
        }
        noPollution();
      }),
  },
  {
    name: 'command payloads: parseSealedPayload and parseCommands',
    weight: 10,
    property: () =>
      fc.property(sealedPayload, commandList, (payload, commands) => {
        const p = explainedResult('parseSealedPayload', () => parseSealedPayload(payload));
        tally(p.ok ? 'accepted' : 'refused');
        deterministic('parseSealedPayload', () => parseSealedPayload(payload));
        if (!p.ok) return noPollution();
        const v: SealedPayload = p.value;
        must(isDeepStrictEqual(Object.keys(v).sort(), [...SEALED_FIELDS].sort()), 'the sealed payload has other fields');
        // Seed 002: relayed verbatim, exactly the seven fields.
        const input = payload as Record<string, unknown>;
        must(
          Object.keys(input).every((k) => (SEALED_FIELDS as readonly string[]).includes(k)),
          'a payload with other fields was accepted',
        );
        for (const f of SEALED_FIELDS)
          must(Object.hasOwn(input, f) && Object.is(input[f], (v as unknown as Record<string, unknown>)[f]), `payload.${f} was not relayed verbatim`);
        const limits: Record<string, number> = {
          operation: COMMAND_LIMITS.operationMaxChars,
          exact_content: COMMAND_LIMITS.commandMaxChars,
          scope: COMMAND_LIMITS.scopeMaxChars,
          rationale: COMMAND_LIMITS.rationaleMaxChars,
          verification: COMMAND_LIMITS.verificationMaxChars,
        };
        for (const [f, max] of Object.entries(limits)) must(within((v as unknown as Record<string, unknown>)[f], 1, max), `payload.${f} out of 1..${max}`);
        must(v.risk_level === 'high' || v.risk_level === 'medium', 'risk_level accepted');
        must(v.rollback === null, 'rollback accepted');
        const c = explainedResult('parseCommands', () => parseCommands(commands, v));
        deterministic('parseCommands', () => parseCommands(commands, v));
        if (c.ok) {
          must(c.value.length >= 1 && c.value.length <= COMMAND_LIMITS.commandsMax, 'command count out of limits');
          for (const cmd of c.value) must(within(cmd, 1, COMMAND_LIMITS.commandMaxChars), 'a command out of limits');
          if (c.value.length === 1) must(c.value[0] === v.exact_content, 'a single command differs from exact_content');
        }
        noPollution();
      }),
  },
];

// ---------------------------------------------------------------------------------------------
// Properties against a running instance (database, HTTP, GraphQL)

export interface FuzzWorld {
  instance: TaskbayInstance;
  adminToken: string;
  /** A member with OPERATE on the agent: requests a person opens (createApproval, command hook). */
  memberToken: string;
  tenantId: string;
  /** A registered agent whose card advertises approvals, forms and A2UI (the fixture's showcase). */
  agentId: string;
}

/** Raw GraphQL over yoga.fetch (the body is text: deep values cannot go through JSON.stringify). */
async function gqlText(world: FuzzWorld, body: string, token: string) {
  const res = await world.instance.yoga.fetch('http://taskbay.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, json, text };
}

const gql = (world: FuzzWorld, query: string, variables: Record<string, unknown>, token = world.adminToken) =>
  gqlText(world, JSON.stringify({ query, variables }), token);

/**
 * JSON text of any generated value without recursion (deep values overflow JSON.stringify):
 * what an HTTP client would send. NaN/±Infinity become null as in JSON.stringify.
 */
export function jsonText(value: unknown): string {
  const out: string[] = [];
  type Frame = { v: unknown } | { close: string } | { sep: true } | { key: string };
  const stack: Frame[] = [{ v: value }];
  while (stack.length) {
    const f = stack.pop()!;
    if ('close' in f) out.push(f.close);
    else if ('sep' in f) out.push(',');
    else if ('key' in f) out.push(`${JSON.stringify(f.key)}:`);
    else {
      const v = f.v;
      if (v === null || v === undefined || typeof v === 'function') out.push('null');
      else if (typeof v !== 'object') out.push(JSON.stringify(v) ?? 'null');
      else if (Array.isArray(v)) {
        out.push('[');
        const frames: Frame[] = [];
        v.forEach((x, i) => {
          if (i) frames.push({ sep: true });
          frames.push({ v: x });
        });
        stack.push({ close: ']' }, ...frames.reverse());
      } else {
        out.push('{');
        const frames: Frame[] = [];
        Object.keys(v)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .forEach((k, i) => {
            if (i) frames.push({ sep: true });
            frames.push({ key: k }, { v: (v as Record<string, unknown>)[k] });
          });
        stack.push({ close: '}' }, ...frames.reverse());
      }
    }
  }
  return out.join('');
}

/** An answer over the API: data, or errors that each carry a message and a contract code. */
function explainedGraphql(what: string, r: { status: number; json: any; text: string }): boolean {
  must(r.status < 500, `${what} answered HTTP ${r.status}: ${r.text.slice(0, 300)}`);
  must(r.json && typeof r.json === 'object', `${what} answered no JSON: ${r.text.slice(0, 200)}`);
  if (!r.json.errors) return true;
  must(Array.isArray(r.json.errors) && r.json.errors.length > 0, `${what} answered an empty errors list`);
  for (const e of r.json.errors) {
    must(typeof e.message === 'string' && e.message.trim().length > 0, `${what} refused without a message`);
    // A contract code; or none for GraphQL's own request errors (a variable of the wrong type is
    // refused by graphql-js before any resolver runs, with its message). Never INTERNAL_SERVER_ERROR.
    const code = e.extensions?.code;
    must(
      code === undefined || (ERROR_CODES as readonly string[]).includes(code),
      `${what} refused with code ${JSON.stringify(code)}: ${e.message.slice(0, 200)}`,
    );
    if (code === undefined) must(/^Variable "\$\w+"/.test(e.message), `${what} refused without a code: ${e.message.slice(0, 200)}`);
  }
  return false;
}

async function sqlRows<T = any>(world: FuzzWorld, text: string, params: unknown[] = []): Promise<T[]> {
  return world.instance.orm.em.getConnection().execute<T[]>(text, params);
}

async function newTask(world: FuzzWorld, opts: { remoteTaskId: string | null; contextId: string | null; pushToken?: string; state?: string }) {
  const em = world.instance.orm.em.fork();
  const id = randomUUID();
  em.create(Task, {
    id,
    tenantId: world.tenantId,
    agentId: world.agentId,
    skillId: null,
    remoteTaskId: opts.remoteTaskId,
    contextId: opts.contextId,
    state: (opts.state ?? 'TASK_STATE_WORKING') as never,
    createdById: null,
    lastStepSeq: 0,
    pushTokenHash: opts.pushToken ? hashPushToken(opts.pushToken) : null,
    createdAt: new Date(),
    updatedAt: new Date(),
  });
  await em.flush();
  return id;
}

export interface WorldProperty {
  name: string;
  weight: number;
  property: (world: FuzzWorld) => fc.IAsyncProperty<any>;
}

const CREATE_APPROVAL = `mutation($title: String!, $summary: String, $risk: Risk, $expiresInSeconds: Int, $action: JSON!) {
  createApproval(input: { title: $title, summary: $summary, risk: $risk, expiresInSeconds: $expiresInSeconds, action: $action }) {
    id status title revision digest action } }`;
const EDIT_AND_APPROVE = `mutation($id: ID!, $revision: Int!, $digest: String!, $action: JSON!) {
  editAndApprove(input: { approvalId: $id, revision: $revision, digest: $digest, action: $action }) { id outcome revision digest } }`;

export const WORLD_PROPERTIES: WorldProperty[] = [
  {
    name: 'observation: a hostile agent answer is stored, never fails the observation',
    weight: 2,
    property: (world) =>
      fc.asyncProperty(
        agentMessage,
        fc.oneof({ weight: 4, arbitrary: fc.constant('TASK_STATE_INPUT_REQUIRED') }, { weight: 1, arbitrary: fc.constantFrom(...A2A_TASK_STATES) }),
        async (raw, state) => {
          // The client's reading of the answer first: a malformed message is refused there, explained.
          const parsed = attempt(() => parseMessage(raw));
          tally('thrown' in parsed ? 'refused by the client' : 'observed');
          if ('thrown' in parsed) {
            must(parsed.thrown instanceof A2AError && parsed.thrown.message.trim().length > 0, `parseMessage threw ${describeThrown(parsed.thrown)}`);
            return;
          }
          const message: Message = parsed.value;
          const remoteId = randomUUID();
          const taskId = await newTask(world, { remoteTaskId: remoteId, contextId: 'ctx' });
          const observed = await recordObservation(world.instance.orm.em.fork(), world.instance.deps.config, taskId, {
            result: { task: { id: remoteId, contextId: 'ctx', status: { state: state as never, message } } },
          }).then(
            (t) => ({ ok: true as const, t }),
            (e: unknown) => ({ ok: false as const, e }),
          );
          must(observed.ok, `the observation failed: ${observed.ok ? '' : describeThrown(observed.e)}`);
          // Stored as sent, unstorable characters (in the id too) as U+FFFD.
          const rows = await sqlRows(world, `select parts, role from task_message where task_id = ? and message_id = ?`, [taskId, storable(message).messageId]);
          must(rows.length === 1, `the message was stored ${rows.length} times`);
          const stored = typeof rows[0].parts === 'string' ? JSON.parse(rows[0].parts) : rows[0].parts;
          must(canon(stored) === canon(JSON.parse(JSON.stringify(storable(message.parts)))), 'the stored parts differ from what the agent sent');
          const [task] = await sqlRows(world, `select state from task where id = ?`, [taskId]);
          must(task.state === state, `the task is ${task.state}, the agent said ${state}`);
          // Detection: the first valid approval part opens one request; anything else opens none.
          const approvals = await sqlRows(world, `select status, title, digest from approval where task_id = ?`, [taskId]);
          const expected = state === 'TASK_STATE_INPUT_REQUIRED' && message.role === 'ROLE_AGENT' ? findApprovalRequest(storable(message.parts)) : null;
          if (expected) {
            must(approvals.length === 1, `a valid approval part opened ${approvals.length} requests`);
            must(approvals[0].status === 'PENDING' && approvals[0].title === expected.request.title, 'the opened request differs from the part');
            must(approvals[0].digest === independentDigest(expected.request.action), 'the opened request has another digest');
          } else {
            must(approvals.length === 0, `no valid approval part, yet ${approvals.length} requests opened`);
          }
          must(!(TERMINAL_STATES as readonly string[]).includes(state) || approvals.every((a) => a.status !== 'PENDING'), 'a request is open on an ended task');
          noPollution();
        },
      ),
  },
  {
    name: 'push route: any body gets 200 or a 4xx with a reason, never 5xx; a refused push changes nothing',
    weight: 2,
    property: (world) =>
      fc.asyncProperty(
        anyIds.chain((ids) =>
          fc.tuple(
            fc.constant(ids),
            // As generated (NUL and lone surrogates are common), or with such characters replaced
            // so that pushes also get past the storability check.
            fc.oneof(pushBody(fc.constant(ids)), pushBody(fc.constant(ids)).map(storableIfPossible)),
            fc.boolean(),
          ),
        ),
        async ([ids, body, named]) => {
          const token = randomBytes(16).toString('base64url');
          // Setup: the task named here takes its remote id from any earlier case's task. (An
          // unnamed task may still collide when the push names it: that is part of the input.)
          if (named) await sqlRows(world, `update task set remote_task_id = null where agent_id = ? and remote_task_id = ?`, [world.agentId, ids.id]);
          const taskId = await newTask(world, { remoteTaskId: named ? ids.id : null, contextId: named ? ids.contextId : null, pushToken: token });
          const before = await sqlRows(world, `select state, last_step_seq from task where id = ?`, [taskId]);
          const res = await fetch(`${world.instance.url}/a2a/push/${taskId}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-a2a-notification-token': token },
            body: jsonText(body),
          });
          const text = await res.text();
          must([200, 400, 409, 413].includes(res.status), `the push route answered HTTP ${res.status}: ${text.slice(0, 300)}`);
          tally(`HTTP ${res.status}`);
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            must(false, `the push route answered no JSON: ${text.slice(0, 200)}`);
          }
          // A push Postgres cannot hold as sent is refused, so the agent learns of it (a reply
          // cannot be refused and is stored with U+FFFD instead).
          if (holdsUnstorableText(body) && res.status !== 413) must(res.status === 400, `a push with NUL or a lone surrogate got HTTP ${res.status}`);
          if (res.status !== 200) {
            must(typeof json.error === 'string' && json.error.trim().length > 0, 'a refused push has no reason');
            const after = await sqlRows(world, `select state, last_step_seq from task where id = ?`, [taskId]);
            must(sameValue(after, before), 'a refused push changed the task');
          }
          noPollution();
        },
      ),
  },
  {
    name: 'GraphQL createApproval: hostile inputs get a contract code and change nothing',
    weight: 0.5,
    property: (world) =>
      fc.asyncProperty(
        fc.record({
          title: fc.oneof(
            { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
            { weight: 2, arbitrary: hostileString },
            { weight: 1, arbitrary: anyValue },
          ),
          summary: fc.oneof(fc.constant(undefined), hostileString),
          risk: fc.oneof(fc.constant(undefined), fc.constantFrom('LOW', 'MEDIUM', 'HIGH', 'CRITICAL', 'low', 'NONE'), anyValue),
          expiresInSeconds: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 100_000 }), hostileNumber, anyValue),
          action: fc.oneof({ weight: 3, arbitrary: approvalAction }, { weight: 1, arbitrary: anyValue }),
        }),
        async (vars) => {
          const [{ n: before }] = await sqlRows(world, `select count(*)::int as n from approval`);
          const r = await gqlText(world, `{"query":${JSON.stringify(CREATE_APPROVAL)},"variables":${jsonText(vars)}}`, world.memberToken);
          const accepted = explainedGraphql('createApproval', r);
          tally(accepted ? 'accepted' : 'refused');
          const [{ n: after }] = await sqlRows(world, `select count(*)::int as n from approval`);
          if (!accepted) {
            must(after === before, 'a refused createApproval changed the approvals');
            return;
          }
          const a = r.json.data.createApproval;
          must(after === before + 1, 'an accepted createApproval did not open exactly one request');
          must(a.status === 'PENDING' && a.revision === 1, 'the new request is not PENDING at revision 1');
          must(a.title === vars.title, 'the stored title differs from the one sent');
          actionWithinLimits(a.action, 'stored action');
          must(a.digest === independentDigest(a.action), 'the stored digest is not the digest of the stored action');
          noPollution();
        },
      ),
  },
  {
    name: 'GraphQL editAndApprove: hostile edits get a contract code and change nothing',
    weight: 0.3,
    property: (world) =>
      fc.asyncProperty(
        fc
          .constantFrom<ApprovalAction>(
            { kind: 'send_message', text: 'Approved. Restart the cache.' },
            { kind: 'send_data', form: FIXED_FORMS[0] as never, values: { environment: 'staging', replicas: 2 } },
          )
          .chain((action) =>
            fc.tuple(
              fc.constant(action),
              fc.oneof(
                // Edits of the right shape for the action (valid or nearly), and anything else.
                {
                  weight: 4,
                  arbitrary:
                    action.kind === 'send_message'
                      ? fc.record(
                          { text: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), hostileString), data: fc.oneof(fc.constant(null), anyValue) },
                          { requiredKeys: ['text'] },
                        )
                      : fc.record({ values: formValuesFor(FIXED_FORMS[0] as never) }),
                },
                { weight: 2, arbitrary: approvalAction },
                { weight: 1, arbitrary: anyValue },
              ),
              fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileNumber }),
            ),
          ),
        async ([action, edit, revision]) => {
          const created = await gql(world, CREATE_APPROVAL, { title: 'fuzz edit', action }, world.memberToken);
          must(!created.json?.errors, `setup: createApproval failed: ${created.text.slice(0, 200)}`);
          const a = created.json.data.createApproval;
          const id = Buffer.from(a.id, 'base64').toString('utf8').split(':').slice(1).join(':');
          const vars = { id: a.id, revision: revision ?? a.revision, digest: a.digest, action: edit };
          const r = await gqlText(world, `{"query":${JSON.stringify(EDIT_AND_APPROVE)},"variables":${jsonText(vars)}}`, world.adminToken);
          const accepted = explainedGraphql('editAndApprove', r);
          tally(accepted ? 'accepted' : 'refused');
          const [row] = await sqlRows(world, `select status, revision, digest, action from approval where id = ?`, [id]);
          const [{ n: decisions }] = await sqlRows(world, `select count(*)::int as n from decision where approval_id = ?`, [id]);
          if (!accepted) {
            must(row.status === 'PENDING' && row.revision === 1 && row.digest === a.digest && decisions === 0, 'a refused edit changed the request');
            return;
          }
          const stored = typeof row.action === 'string' ? JSON.parse(row.action) : row.action;
          must(row.status === 'APPROVED' && row.revision === 2 && decisions === 1, 'an accepted edit did not approve revision 2 once');
          actionWithinLimits(stored, 'edited action');
          must(
            row.digest === independentDigest(stored) && r.json.data.editAndApprove.digest === row.digest,
            'the edited digest is not the digest of the stored action',
          );
          noPollution();
        },
      ),
  },
  {
    name: 'command hook REST: hostile requests get a 4xx with a contract code, never 5xx, and change nothing',
    weight: 0.5,
    property: (world) =>
      fc.asyncProperty(
        fc.record({
          agent_id: agentIdText,
          payload: sealedPayload,
          commands: commandList,
          expires_in_seconds: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 1000 }), hostileNumber, anyValue),
        }),
        async (body) => {
          const [{ n: before }] = await sqlRows(world, `select count(*)::int as n from command_approval`);
          const res = await fetch(`${world.instance.url}/api/command-approvals`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${world.memberToken}` },
            body: jsonText(body),
          });
          const text = await res.text();
          must(res.status < 500, `the command route answered HTTP ${res.status}: ${text.slice(0, 300)}`);
          tally(`HTTP ${res.status}`);
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            must(false, `the command route answered no JSON: ${text.slice(0, 200)}`);
          }
          const [{ n: after }] = await sqlRows(world, `select count(*)::int as n from command_approval`);
          if (res.status >= 400) {
            must(
              (ERROR_CODES as readonly string[]).includes(json.error) && typeof json.message === 'string' && json.message.trim().length > 0,
              `refused without a code and message: ${text.slice(0, 200)}`,
            );
            must(after === before, 'a refused command request changed the command approvals');
          } else {
            must(after === before + (json.created ? 1 : 0), 'an accepted command request did not record exactly what it said');
            must(isStorable(json.payload), 'an accepted payload holds characters that cannot be stored');
          }
          noPollution();
        },
      ),
  },
];

// ---------------------------------------------------------------------------------------------
// Running

export interface PropertyResult {
  name: string;
  runs: number;
  failed: boolean;
  seed: number;
  path?: string;
  counterexample?: string;
  error?: string;
  ms: number;
  /** How the generated cases were answered (shrinking runs included after a failure). */
  outcomes: Record<string, number>;
}

/** A short, printable form of a counterexample (huge strings and deep values summarised). */
export function summarise(value: unknown, max = 600): string {
  let text: string;
  try {
    text = fc.stringify(value);
  } catch {
    // Too deep for fast-check's printer: the JSON text (no NaN/undefined, but readable).
    text = `(as JSON) ${jsonText(value)}`;
  }
  // Runs of one short piece (huge strings, deep nesting) shown once with their count.
  text = text.replace(/(.{1,8}?)\1{15,}/gsu, (m, piece: string) => `${piece}…×${m.length / piece.length}`);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** The seed of property `index` for a run seed: each property reproducible on its own. */
export const propertySeed = (seed: number, index: number) => (seed + index * 7919) | 0;

function result(name: string, seed: number, details: fc.RunDetails<unknown>, ms: number): PropertyResult {
  const out: PropertyResult = { name, runs: details.numRuns, failed: details.failed, seed, ms, outcomes: Object.fromEntries(outcomes) };
  if (details.failed) {
    out.path = details.counterexamplePath ?? undefined;
    out.counterexample = summarise(details.counterexample);
    const err = details.errorInstance;
    out.error = err instanceof Error ? err.message.slice(0, 1000) : String(err).slice(0, 1000);
  }
  return out;
}

/** A generator that throws is a failure of the run, reported like a property's. */
const broken = (name: string, seed: number, e: unknown, ms: number): PropertyResult => ({
  name,
  runs: 0,
  failed: true,
  seed,
  ms,
  error: `the run itself failed: ${describeThrown(e)}`,
  outcomes: Object.fromEntries(outcomes),
});

export function runPure(p: PureProperty, runs: number, seed: number, path?: string): PropertyResult {
  const start = Date.now();
  outcomes = new Map();
  try {
    const details = fc.check(p.property(), { numRuns: runs, seed, ...(path ? { path } : {}) });
    return result(p.name, seed, details, Date.now() - start);
  } catch (e) {
    return broken(p.name, seed, e, Date.now() - start);
  }
}

export async function runWorld(p: WorldProperty, world: FuzzWorld, runs: number, seed: number, path?: string): Promise<PropertyResult> {
  const start = Date.now();
  outcomes = new Map();
  try {
    const details = await fc.check(p.property(world), { numRuns: runs, seed, ...(path ? { path } : {}) });
    return result(p.name, seed, details, Date.now() - start);
  } catch (e) {
    return broken(p.name, seed, e, Date.now() - start);
  }
}

/**
 * The world the instance properties run in: the showcase agent registered from `cardUrl`, a
 * member with OPERATE on it. The instance must allow loopback agents (tests and the fuzz script
 * start it on 127.0.0.1 with a fixture agent there).
 */
export async function prepareWorld(instance: TaskbayInstance, adminToken: string, cardUrl: string): Promise<FuzzWorld> {
  const partial = { instance, adminToken, memberToken: '', tenantId: '', agentId: '' } as FuzzWorld;
  const call = async (query: string, variables: Record<string, unknown> = {}) => {
    const r = await gql(partial, query, variables);
    if (!r.json || r.json.errors) throw new Error(`fuzz setup: ${r.text.slice(0, 300)}`);
    return r.json.data;
  };
  const rawId = (gid: string) => Buffer.from(gid, 'base64').toString('utf8').split(':').slice(1).join(':');
  const agent = (await call(`mutation($url: String!) { registerAgent(input: { cardUrl: $url }) { id } }`, { url: cardUrl })).registerAgent;
  const email = `fuzz-${randomBytes(4).toString('hex')}@example.test`;
  const user = (await call(`mutation($e: String!) { createUser(input: { email: $e, name: "fuzz", role: MEMBER }) { id } }`, { e: email })).createUser;
  const token = (await call(`mutation($u: ID) { createApiToken(input: { userId: $u, label: "fuzz" }) { token } }`, { u: user.id })).createApiToken.token;
  await call(`mutation($u: ID!, $a: ID!) { grantAgentAccess(input: { userId: $u, agentId: $a, permission: OPERATE }) { id } }`, { u: user.id, a: agent.id });
  const [t] = await sqlRows<{ tenant_id: string }>(partial, `select tenant_id from agent where id = ?`, [rawId(agent.id)]);
  return { instance, adminToken, memberToken: token, tenantId: t!.tenant_id, agentId: rawId(agent.id) };
}
