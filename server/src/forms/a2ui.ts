// A2UI v0.9 (seed 003, "Show an A2UI surface"): what Taskbay stores from an agent's
// application/a2ui+json part, and the action object it sends back. Structural checks only: the
// console renders a closed set of components as inert elements and treats everything as text.

import { A2UI_LIMITS, codePointLength, jsonBytes, KIB } from '../limits.js';
import { cloneJson, isPlainObject } from '../lib/untrusted.js';

const MESSAGE_KINDS = ['createSurface', 'updateComponents', 'updateDataModel', 'deleteSurface'] as const;

/** A clean copy of A2UI JSON without `__proto__` keys; throws when nested over JSON_DEPTH_MAX. */
const copyJson = (v: unknown): unknown => cloneJson(v, { protoKeys: 'drop', tooDeep: () => new Error('nested too deeply') });

/**
 * An array of 1..A2UI_LIMITS.envelopesMax v0.9 envelopes, each `{ version: "v0.9", <one of
 * createSurface, updateComponents, updateDataModel, deleteSurface>: { surfaceId, ... } }`, at
 * most A2UI_LIMITS.bytesMax of JSON.
 * Anything else is null: the part stays ordinary data.
 */
export function parseA2uiEnvelopes(data: unknown): unknown[] | null {
  try {
    if (!Array.isArray(data) || data.length === 0 || data.length > A2UI_LIMITS.envelopesMax) return null;
    if (jsonBytes(data) > A2UI_LIMITS.bytesMax) return null;
    for (const env of data) {
      if (!isPlainObject(env) || env.version !== 'v0.9') return null;
      const kinds = MESSAGE_KINDS.filter((k) => Object.hasOwn(env, k));
      if (kinds.length !== 1) return null;
      const body = env[kinds[0]!];
      if (!isPlainObject(body) || typeof body.surfaceId !== 'string' || body.surfaceId.length === 0) return null;
    }
    return copyJson(data) as unknown[];
  } catch {
    return null;
  }
}

/** A name of an action (1..A2UI_LIMITS.nameMax characters; `min` 0 for an optional one given empty). */
const nameFits = (v: unknown, min: 0 | 1): v is string =>
  typeof v === 'string' && v.length >= min && codePointLength(v, A2UI_LIMITS.nameMax) <= A2UI_LIMITS.nameMax;

export type ParseA2uiActionResult = { ok: true; action: Record<string, unknown> } | { ok: false; error: string };

/**
 * The action a person's button press sends back (A2UI v0.9 client-to-server `action`): `name`
 * (the button's action.event name), `surfaceId`, optional `sourceComponentId`, `timestamp` and
 * `context` object (resolved values). Unknown keys are dropped.
 */
export function parseA2uiAction(input: unknown): ParseA2uiActionResult {
  if (!isPlainObject(input)) return { ok: false, error: 'action must be an object' };
  const { name, surfaceId, sourceComponentId, timestamp, context } = input;
  if (!nameFits(name, 1)) return { ok: false, error: `action.name must be 1..${A2UI_LIMITS.nameMax} characters` };
  if (!nameFits(surfaceId, 1)) return { ok: false, error: `action.surfaceId must be 1..${A2UI_LIMITS.nameMax} characters` };
  const action: Record<string, unknown> = { name, surfaceId };
  if (sourceComponentId !== undefined) {
    if (!nameFits(sourceComponentId, 0)) return { ok: false, error: 'action.sourceComponentId must be a string' };
    action.sourceComponentId = sourceComponentId;
  }
  action.timestamp = typeof timestamp === 'string' && !Number.isNaN(Date.parse(timestamp)) ? timestamp : new Date().toISOString();
  if (context !== undefined && context !== null) {
    if (!isPlainObject(context)) return { ok: false, error: 'action.context must be an object' };
    let clean: unknown;
    try {
      clean = copyJson(context);
    } catch {
      return { ok: false, error: 'action.context is nested too deeply' };
    }
    action.context = clean;
  } else {
    action.context = {};
  }
  if (jsonBytes(action) > A2UI_LIMITS.actionBytesMax) return { ok: false, error: `action is larger than ${A2UI_LIMITS.actionBytesMax / KIB} KiB` };
  return { ok: true, action };
}
