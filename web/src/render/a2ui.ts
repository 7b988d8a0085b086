// A2UI v0.9 envelopes (createSurface, updateComponents, updateDataModel, deleteSurface) folded
// into surfaces, in order: a deleteSurface removes the surface and everything sent to it before;
// envelopes after it start a new one. Only data: nothing here fetches, evaluates or links.

import { isPlainObject } from '../../../server/src/lib/untrusted.js';

export interface A2uiComponent {
  id: string;
  component: string;
  [k: string]: unknown;
}
export interface A2uiSurface {
  surfaceId: string;
  components: Map<string, A2uiComponent>;
  data: Record<string, unknown>;
}

export const A2UI_COMPONENTS = ['Text', 'Row', 'Column', 'Card', 'Divider', 'Button', 'TextField', 'CheckBox', 'ChoicePicker'] as const;

function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('/').filter(Boolean);
  if (keys.some((k) => k === '__proto__' || k === 'constructor' || k === 'prototype')) return;
  if (keys.length === 0) {
    // Key by key, never Object.assign: an own `__proto__` key of agent data must not set root's prototype.
    if (isPlainObject(value)) {
      for (const k of Object.keys(value)) if (k !== '__proto__') root[k] = value[k];
    }
    return;
  }
  let cur = root;
  for (const k of keys.slice(0, -1)) {
    if (!cur[k] || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]!] = value;
}

export function getPath(root: unknown, path: string): unknown {
  let cur = root;
  for (const k of path.split('/').filter(Boolean)) {
    if (!cur || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** A literal, or a {path} binding read from the surface's data model. */
export function resolveValue(v: unknown, data: Record<string, unknown>): unknown {
  if (isPlainObject(v) && typeof v.path === 'string') return getPath(data, v.path);
  return v;
}

/** The surfaces left after all envelopes, and the ids of surfaces the agent deleted (and did not create again). */
export interface A2uiFold {
  surfaces: A2uiSurface[];
  removed: string[];
}

export function foldA2ui(envelopes: unknown): A2uiFold {
  const surfaces = new Map<string, A2uiSurface>();
  const removed = new Set<string>();
  if (!Array.isArray(envelopes)) return { surfaces: [], removed: [] };
  const get = (id: unknown) => {
    if (typeof id !== 'string') return null;
    let s = surfaces.get(id);
    if (!s) {
      s = { surfaceId: id, components: new Map(), data: {} };
      surfaces.set(id, s);
      removed.delete(id);
    }
    return s;
  };
  for (const e of envelopes.slice(0, 200)) {
    if (!e || typeof e !== 'object') continue;
    const env = e as Record<string, any>;
    if (env.createSurface) get(env.createSurface.surfaceId);
    if (env.updateComponents && Array.isArray(env.updateComponents.components)) {
      const s = get(env.updateComponents.surfaceId);
      for (const c of env.updateComponents.components.slice(0, 500)) {
        if (s && c && typeof c.id === 'string' && typeof c.component === 'string') s.components.set(c.id, c);
      }
    }
    if (env.updateDataModel) {
      const s = get(env.updateDataModel.surfaceId);
      if (s) setPath(s.data, typeof env.updateDataModel.path === 'string' ? env.updateDataModel.path : '/', env.updateDataModel.value);
    }
    if (env.deleteSurface && typeof env.deleteSurface.surfaceId === 'string') {
      surfaces.delete(env.deleteSurface.surfaceId);
      removed.add(env.deleteSurface.surfaceId);
    }
  }
  return { surfaces: [...surfaces.values()], removed: [...removed] };
}

/** Every surface id a deleteSurface envelope names. */
function deletedIds(envelopes: unknown): string[] {
  if (!Array.isArray(envelopes)) return [];
  const ids: string[] = [];
  for (const e of envelopes.slice(0, 200)) {
    const del = e && typeof e === 'object' ? (e as Record<string, any>).deleteSurface : undefined;
    if (del && typeof del.surfaceId === 'string') ids.push(del.surfaceId);
  }
  return ids;
}

/**
 * A transcript's A2UI (one entry per message, in order): for each message, the surfaces a later
 * message deletes. Those are gone: the earlier message shows them as removed, not as live UI.
 */
export function deletedLater(transcript: readonly unknown[]): ReadonlySet<string>[] {
  const out: ReadonlySet<string>[] = new Array(transcript.length);
  const later = new Set<string>();
  for (let i = transcript.length - 1; i >= 0; i--) {
    out[i] = new Set(later);
    for (const id of deletedIds(transcript[i])) later.add(id);
  }
  return out;
}
