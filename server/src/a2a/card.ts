import { cloneJson, isPlainObject, own } from '../lib/untrusted.js';
import { AGENT_LIMITS, codePointLength } from '../limits.js';
import type { AgentCard, AgentExtension, AgentInterface, AgentSkill } from './types.js';
import { defaultAgentFetch } from '../net/agent-network.js';
import { classifyConnectFailure, httpFailureDetail, httpStatusReason, type AgentFailureKind } from '../net/failure.js';

// Agent Card fetch and validation. A card comes from an agent we do not control: everything is
// checked, and only recognised fields are copied into a fresh object (nothing of the input's
// prototype or unknown keys survives).

export const CARD_MAX_BYTES = 1024 * 1024;
export const CARD_DEFAULT_TIMEOUT_MS = 10_000;
/** Redirects a card fetch follows (each hop judged again by the network policy). */
export const CARD_MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

export class AgentCardError extends Error {
  /** The short reason without the URL, e.g. "supportedInterfaces is missing". */
  readonly reason: string;
  readonly kind: AgentFailureKind;
  /** Admin-only: what the server or the network said (never part of the message). */
  readonly detail?: string;
  constructor(message: string, reason?: string, extra: { kind?: AgentFailureKind; detail?: string } = {}) {
    super(message);
    this.name = 'AgentCardError';
    this.reason = reason ?? message;
    this.kind = extra.kind ?? 'invalid_answer';
    if (extra.detail !== undefined) this.detail = extra.detail;
  }
}

/** Thrown inside validation; turned into an AgentCardError with or without the card URL. */
class Invalid extends Error {}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Whether card text is over `max` characters (code points, as every text limit counts). */
const longerThan = (s: string, max: number) => codePointLength(s, max) > max;

function optionalString(obj: Record<string, unknown>, key: string, max: number, where: string): string | undefined {
  const v = own(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Invalid(`${where}${key} must be a string`);
  if (longerThan(v, max)) throw new Invalid(`${where}${key} is longer than ${max} characters`);
  return v;
}

function stringList(v: unknown, maxItems: number, maxLen: number): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((s): s is string => typeof s === 'string' && s.length > 0 && !longerThan(s, maxLen)).slice(0, maxItems);
}

/** A copy of card JSON (extension params) without `__proto__` keys: a card is configuration, copied field by field. */
const copyJson = (v: unknown, where: string): unknown => cloneJson(v, { protoKeys: 'drop', tooDeep: () => new Invalid(`${where} is nested too deeply`) });

function validateInterfaces(v: unknown): AgentInterface[] {
  if (v === undefined || v === null) throw new Invalid('supportedInterfaces is missing');
  if (!Array.isArray(v)) throw new Invalid('supportedInterfaces must be an array');
  if (v.length === 0) throw new Invalid('supportedInterfaces is empty');
  const out: AgentInterface[] = [];
  for (const entry of v.slice(0, AGENT_LIMITS.interfacesMax)) {
    if (!isPlainObject(entry)) continue;
    const url = own(entry, 'url');
    const binding = own(entry, 'protocolBinding');
    if (typeof url !== 'string' || url.length > AGENT_LIMITS.urlMax || !isHttpUrl(url)) continue;
    if (typeof binding !== 'string' || binding.length === 0 || binding.length > AGENT_LIMITS.bindingMax) continue;
    const iface: AgentInterface = { url, protocolBinding: binding };
    const version = own(entry, 'protocolVersion');
    if (typeof version === 'string' && !longerThan(version, AGENT_LIMITS.versionMax)) iface.protocolVersion = version;
    out.push(iface);
  }
  if (out.length === 0) {
    throw new Invalid('supportedInterfaces has no entry with an http(s) url and a protocolBinding');
  }
  return out;
}

function validateExtensions(v: unknown): AgentExtension[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new Invalid('capabilities.extensions must be an array');
  if (v.length > AGENT_LIMITS.extensionsMax) throw new Invalid(`capabilities.extensions has more than ${AGENT_LIMITS.extensionsMax} entries`);
  return v.map((entry, i) => {
    const where = `capabilities.extensions[${i}]`;
    if (!isPlainObject(entry)) throw new Invalid(`${where} must be an object`);
    const uri = own(entry, 'uri');
    if (typeof uri !== 'string' || uri.length === 0) throw new Invalid(`${where}.uri is missing`);
    if (uri.length > AGENT_LIMITS.urlMax) throw new Invalid(`${where}.uri is too long`);
    const ext: AgentExtension = { uri };
    const description = optionalString(entry, 'description', AGENT_LIMITS.descriptionMax, `${where}.`);
    if (description !== undefined) ext.description = description;
    const required = own(entry, 'required');
    if (required !== undefined && required !== null) {
      if (typeof required !== 'boolean') throw new Invalid(`${where}.required must be a boolean`);
      ext.required = required;
    }
    const params = own(entry, 'params');
    if (params !== undefined && params !== null) {
      if (!isPlainObject(params)) throw new Invalid(`${where}.params must be an object`);
      ext.params = copyJson(params, `${where}.params`) as Record<string, unknown>;
    }
    return ext;
  });
}

function validateSkills(v: unknown): AgentSkill[] {
  if (v === undefined || v === null) throw new Invalid('skills is missing');
  if (!Array.isArray(v)) throw new Invalid('skills must be an array');
  if (v.length > AGENT_LIMITS.skillsMax) throw new Invalid(`skills has more than ${AGENT_LIMITS.skillsMax} entries`);
  const seen = new Set<string>();
  return v.map((entry, i) => {
    const where = `skills[${i}]`;
    if (!isPlainObject(entry)) throw new Invalid(`${where} must be an object`);
    const id = own(entry, 'id');
    if (typeof id !== 'string' || id.length === 0) throw new Invalid(`${where}.id is missing`);
    if (longerThan(id, AGENT_LIMITS.skillIdMax)) throw new Invalid(`${where}.id is longer than ${AGENT_LIMITS.skillIdMax} characters`);
    if (seen.has(id)) throw new Invalid(`${where}.id "${id}" is used by another skill`);
    seen.add(id);
    const name = own(entry, 'name');
    if (typeof name !== 'string' || name.length === 0) throw new Invalid(`${where}.name is missing`);
    if (longerThan(name, AGENT_LIMITS.skillNameMax)) throw new Invalid(`${where}.name is longer than ${AGENT_LIMITS.skillNameMax} characters`);
    const skill: AgentSkill = { id, name };
    const description = optionalString(entry, 'description', AGENT_LIMITS.descriptionMax, `${where}.`);
    if (description !== undefined) skill.description = description;
    const tags = stringList(own(entry, 'tags'), AGENT_LIMITS.tagsMax, AGENT_LIMITS.tagMax);
    if (tags) skill.tags = tags;
    return skill;
  });
}

function validate(json: unknown): AgentCard {
  if (!isPlainObject(json)) throw new Invalid('the card is not a JSON object');
  const name = own(json, 'name');
  if (typeof name !== 'string' || name.trim().length === 0) throw new Invalid('name is missing');
  if (longerThan(name, AGENT_LIMITS.nameMax)) throw new Invalid(`name is longer than ${AGENT_LIMITS.nameMax} characters`);

  const supportedInterfaces = validateInterfaces(own(json, 'supportedInterfaces'));

  const caps = own(json, 'capabilities');
  if (caps === undefined || caps === null) throw new Invalid('capabilities is missing');
  if (!isPlainObject(caps)) throw new Invalid('capabilities must be an object');
  const capabilities: AgentCard['capabilities'] = {};
  const streaming = own(caps, 'streaming');
  if (typeof streaming === 'boolean') capabilities.streaming = streaming;
  const push = own(caps, 'pushNotifications');
  if (typeof push === 'boolean') capabilities.pushNotifications = push;
  const extensions = validateExtensions(own(caps, 'extensions'));
  if (extensions) capabilities.extensions = extensions;

  const skills = validateSkills(own(json, 'skills'));

  const card: AgentCard = { name, supportedInterfaces, capabilities, skills };
  const description = optionalString(json, 'description', AGENT_LIMITS.descriptionMax, '');
  if (description !== undefined) card.description = description;
  const version = optionalString(json, 'version', AGENT_LIMITS.versionMax, '');
  if (version !== undefined) card.version = version;
  const inModes = stringList(own(json, 'defaultInputModes'), AGENT_LIMITS.modesMax, AGENT_LIMITS.modeMax);
  if (inModes) card.defaultInputModes = inModes;
  const outModes = stringList(own(json, 'defaultOutputModes'), AGENT_LIMITS.modesMax, AGENT_LIMITS.modeMax);
  if (outModes) card.defaultOutputModes = outModes;
  return card;
}

/** Validates untrusted JSON as an A2A v1.0 Agent Card and returns a clean copy. */
export function validateAgentCard(json: unknown): AgentCard {
  try {
    return validate(json);
  } catch (err) {
    if (err instanceof Invalid) throw new AgentCardError(`Agent card is not valid: ${err.message}`, err.message);
    throw err;
  }
}

/** Reads a response body up to maxBytes; resolves null when it is larger. */
export async function readBodyLimited(res: Response, maxBytes: number): Promise<Buffer | null> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Fetches an Agent Card (http/https only, 1 MiB, default 10 s for the whole fetch) and validates
 * it. Up to CARD_MAX_REDIRECTS redirects are followed by hand, each to an http(s) URL and through
 * the same fetch, so the network policy judges every hop. The default fetch is the default-policy
 * agent network; Taskbay passes its own (deps.network.fetch).
 */
export async function fetchAgentCard(url: string, opts: { timeoutMs?: number; fetchImpl?: typeof fetch } = {}): Promise<AgentCard> {
  if (typeof url !== 'string' || !isHttpUrl(url)) {
    throw new AgentCardError(`Agent card URL must be an http or https URL: ${String(url).slice(0, 200)}`, 'not an http(s) URL');
  }
  const timeoutMs = opts.timeoutMs ?? CARD_DEFAULT_TIMEOUT_MS;
  const fetchImpl = opts.fetchImpl ?? defaultAgentFetch();
  const fail = (reason: string, kind: AgentFailureKind, detail?: string) =>
    new AgentCardError(`Agent card at ${url} could not be fetched: ${reason}`, reason, { kind, ...(detail !== undefined ? { detail } : {}) });

  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let body: Buffer | null;
  try {
    let current = url;
    for (let hop = 0; ; hop++) {
      res = await fetchImpl(current, { method: 'GET', headers: { Accept: 'application/json' }, redirect: 'manual', signal });
      if (!REDIRECT_STATUSES.includes(res.status)) break;
      const location = res.headers.get('location');
      const detail = await httpFailureDetail(res, current);
      if (!location) throw fail(`HTTP ${res.status} without a location`, 'http_status', detail);
      if (hop >= CARD_MAX_REDIRECTS) throw fail(`more than ${CARD_MAX_REDIRECTS} redirects`, 'http_status', detail);
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw fail('a redirect to an invalid URL', 'invalid_answer', detail);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw fail('a redirect to a URL that is not http or https', 'invalid_answer', detail);
      current = next.toString();
    }
    if (!res.ok) throw fail(httpStatusReason(res.status), 'http_status', await httpFailureDetail(res, current));
    body = await readBodyLimited(res, CARD_MAX_BYTES);
  } catch (err) {
    if (err instanceof AgentCardError) throw err;
    const f = classifyConnectFailure(err, timeoutMs);
    throw fail(f.reason, f.kind, f.detail);
  }
  if (body === null) throw fail('the card is larger than 1 MiB', 'invalid_answer');

  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AgentCardError(`Agent card at ${url} is not valid: the response is not JSON`, 'the response is not JSON');
  }
  try {
    return validate(json);
  } catch (err) {
    if (err instanceof Invalid) throw new AgentCardError(`Agent card at ${url} is not valid: ${err.message}`, err.message);
    throw err;
  }
}

/** The first interface speaking JSON-RPC (the only binding Taskbay's client uses). */
export function preferredJsonRpcInterface(card: AgentCard): AgentInterface | undefined {
  return card.supportedInterfaces.find((i) => i.protocolBinding.toUpperCase() === 'JSONRPC');
}

export type Binding = 'JSONRPC' | 'HTTP+JSON';

/**
 * The interface Taskbay talks to: the first entry of supportedInterfaces (card order is the
 * agent's preference) whose binding Taskbay speaks, JSON-RPC or HTTP+JSON. gRPC is not used.
 */
export function preferredInterface(card: AgentCard): { url: string; binding: Binding } | undefined {
  for (const i of card.supportedInterfaces) {
    const b = i.protocolBinding.toUpperCase();
    if (b === 'JSONRPC') return { url: i.url, binding: 'JSONRPC' };
    if (b === 'HTTP+JSON' || b === 'REST') return { url: i.url, binding: 'HTTP+JSON' };
  }
  return undefined;
}

/** Extension URIs the card lists, in card order, without duplicates. */
export function advertisedExtensionUris(card: AgentCard): string[] {
  const out: string[] = [];
  for (const ext of card.capabilities.extensions ?? []) {
    if (!out.includes(ext.uri)) out.push(ext.uri);
  }
  return out;
}

export function advertises(card: AgentCard, uri: string): boolean {
  return (card.capabilities.extensions ?? []).some((ext) => ext.uri === uri);
}
