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

/**
 * Why a value cannot be stored as it is (the end of a sentence), or null when it can. A value
 * too deeply nested for JSON.stringify (a RangeError: a few thousand levels fit in 1 MiB of JSON
 * text) cannot be serialised for the database either.
 */
export function unstorableReason(value: unknown): string | null {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (e) {
    if (e instanceof RangeError) return 'it is nested too deeply';
    throw e;
  }
  return UNSTORABLE_JSON.test(json ?? '') ? 'it contains a NUL character (U+0000) or an unpaired UTF-16 surrogate' : null;
}

/** True when every string in the value can be stored as it is. */
export function isStorable(value: unknown): boolean {
  return unstorableReason(value) === null;
}

/** The value with unstorable characters replaced; the same object when nothing needs it. */
export function storable<T>(value: T): T {
  return isStorable(value) ? value : replaceDeep(value);
}
