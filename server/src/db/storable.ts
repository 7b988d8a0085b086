// Postgres text and jsonb cannot hold U+0000 or an unpaired surrogate. Agent content may carry
// either: it is stored with such characters as U+FFFD so nothing an agent sends is refused.
// A person's input is refused instead (its digest must be of exactly what is stored).
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// In JSON.stringify output: a \u escape preceded by an even number of backslashes (an odd
// number means the text itself holds a backslash followed by "u0000", which is storable).
const UNSTORABLE_JSON = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

function replaceDeep<T>(value: T): T {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\ufffd') as T;
  if (Array.isArray(value)) return value.map(replaceDeep) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // defineProperty: an own `__proto__` key stays a plain data key.
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, replaceDeep(k), { value: replaceDeep(v), enumerable: true, writable: true, configurable: true });
    }
    return out as T;
  }
  return value;
}

/** True when every string in the value can be stored as it is. */
export function isStorable(value: unknown): boolean {
  return !UNSTORABLE_JSON.test(JSON.stringify(value) ?? '');
}

/** The value with unstorable characters replaced; the same object when nothing needs it. */
export function storable<T>(value: T): T {
  return isStorable(value) ? value : replaceDeep(value);
}
