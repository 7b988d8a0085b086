import type { Context } from './context.js';

// What one execution learned about its viewer, so that its result can be handed to another
// subscriber exactly when that subscriber's answers to the same questions are the same.
//
// The execution runs on a recording context: a copy of one subscriber's context whose viewer,
// access and other per-connection properties are proxies that write down every question a
// resolver asks and the answer it got ("viewer.role" -> "ADMIN", "access.has(VIEW, a1, null)" ->
// true, "access.isViewer(u7)" -> false). Nothing has to be declared per field: a field that
// reads the viewer in a way not foreseen here is still recorded. Anything that cannot be
// compared as plain data (a promise read as a property, a class instance) is recorded as an
// answer nobody else can match, so that result stays with its own subscriber.
//
// Shared as they are (never questions): the entity manager and loaders of the event (they read
// by id, for every viewer alike; approvals/event-view.ts), the instance's deps and pub/sub.

const SHARED_CONTEXT_KEYS = new Set<PropertyKey>(['em', 'loaders', 'deps', 'pubsub']);

/** One question, how to ask it of another subscriber's context, and its answer here. */
interface Question {
  key: string;
  ask(ctx: Context): unknown;
}

let unmatchable = 0;

/**
 * A comparable form of an answer: plain data as JSON, anything else unmatched by any other. A
 * thrown error is `!threw:` and its message; only those and unmatchable answers start with `!`.
 */
function answerKey(value: unknown): string {
  // The common answers without building a string (thousands of subscribers per event).
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value === undefined) return 'u';
  // Strings as JSON: no answer's form holds a line break (answers are joined with them).
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object')
    return typeof value === 'function' || typeof value === 'symbol' ? `!${++unmatchable}` : `${typeof value}:${String(value)}`;
  let plain = true;
  const json = JSON.stringify(value, (_k, v) => {
    if (v && typeof v === 'object') {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) plain = false;
    } else if (typeof v === 'function') plain = false;
    return v;
  });
  return plain ? `json:${json}` : `!${++unmatchable}`;
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => !!v && typeof (v as { then?: unknown }).then === 'function';

const threw = (e: unknown) => `!threw:${JSON.stringify(e instanceof Error ? e.message : String(e))}`;

/** The key of `question`'s answer on `ctx`: at once when it is answered synchronously (most are). */
function answerOf(question: Question, ctx: Context): string | Promise<string> {
  try {
    const v = question.ask(ctx);
    return isThenable(v) ? Promise.resolve(v).then(answerKey, threw) : answerKey(v);
  } catch (e) {
    return threw(e);
  }
}

export class ViewerFacts {
  private readonly questions = new Map<string, { question: Question; answer: string | Promise<string> }>();

  /** Records `key` (once) with the answer `ask` gives on the recorded context; returns the value. */
  private record<T>(key: string, question: Question, value: () => T): T {
    let v: T;
    try {
      v = value();
    } catch (e) {
      if (!this.questions.has(key)) this.questions.set(key, { question, answer: threw(e) });
      throw e;
    }
    if (!this.questions.has(key)) {
      const answer = isThenable(v) ? Promise.resolve(v).then(answerKey, threw) : answerKey(v);
      this.questions.set(key, { question, answer });
    }
    return v;
  }

  /** A context that records what is read of `ctx`'s viewer; `ctx` itself is left as it is. */
  context(ctx: Context): Context {
    // Reads fall through to `ctx` (and what it inherits); writes stay here.
    const target = Object.create(ctx) as Context & Record<PropertyKey, unknown>;
    const written = new Set<PropertyKey>();
    let viewer = ctx.viewer ? this.viewerProxy(ctx.viewer, 'viewer', (c) => c.viewer) : null;
    let access = ctx.access ? this.objectProxy(ctx.access, 'access', (c) => c.access, viewer) : null;
    return new Proxy(target, {
      get: (t, prop, receiver) => {
        if (prop === 'viewer') return viewer;
        if (prop === 'access') return access;
        if (typeof prop === 'symbol' || SHARED_CONTEXT_KEYS.has(prop) || written.has(prop)) return Reflect.get(t, prop, receiver);
        return this.record(`ctx.${prop}`, { key: `ctx.${prop}`, ask: (c) => (c as unknown as Record<string, unknown>)[prop] }, () =>
          Reflect.get(t, prop, receiver),
        );
      },
      set: (t, prop, value, receiver) => {
        // A viewer or access set during the execution is the subscriber's too (built from its
        // viewer): it answers only through the recorder, as asked of the other subscriber's.
        if (prop === 'viewer') viewer = value ? this.viewerProxy(value, 'viewer', (c) => c.viewer) : null;
        else if (prop === 'access') access = value ? this.objectProxy(value, 'access', (c) => c.access, viewer) : null;
        else written.add(prop);
        return Reflect.set(t, prop, value, receiver);
      },
    }) as Context;
  }

  private viewerProxy<T extends object>(viewer: T, path: string, from: (c: Context) => unknown): T {
    return new Proxy(viewer, {
      get: (t, prop, receiver) => {
        if (typeof prop === 'symbol') return Reflect.get(t, prop, receiver);
        const key = `${path}.${prop}`;
        return this.record(key, { key, ask: (c) => (from(c) as Record<string, unknown> | null)?.[prop] }, () => Reflect.get(t, prop, receiver));
      },
    });
  }

  /**
   * Access-like objects: a method call is one question (its name and arguments), asked of the
   * other subscriber's own object; what the method reads inside runs unrecorded on the real
   * object. `viewer` is the recording viewer.
   */
  private objectProxy<T extends object>(obj: T, path: string, from: (c: Context) => unknown, viewer: unknown): T {
    return new Proxy(obj, {
      get: (t, prop) => {
        if (typeof prop === 'symbol') return Reflect.get(t, prop, t);
        if (prop === 'viewer' && viewer) return viewer;
        const value = Reflect.get(t, prop, t);
        if (typeof value !== 'function') {
          const key = `${path}.${prop}`;
          return this.record(key, { key, ask: (c) => (from(c) as Record<string, unknown> | null)?.[prop] }, () => value);
        }
        return (...args: unknown[]) => {
          const key = `${path}.${prop}(${answerKey(args)})`;
          const ask = (c: Context) => {
            const other = from(c) as Record<string, (...a: unknown[]) => unknown> | null;
            if (!other) return undefined;
            return other[prop]!.apply(other, args);
          };
          return this.record(key, { key, ask }, () => (value as (...a: unknown[]) => unknown).apply(t, args));
        };
      },
    });
  }

  /** The questions asked, in a stable order, and this viewer's answers to them. */
  async settle(): Promise<{ questionsKey: string; questions: Question[]; answersKey: string }> {
    // An answer may still be pending if a resolver did not await it; settle what is there.
    const entries = [...this.questions.values()].sort((a, b) => (a.question.key < b.question.key ? -1 : 1));
    const answers = await Promise.all(entries.map((e) => e.answer));
    return {
      questionsKey: entries.map((e) => e.question.key).join('\n'),
      questions: entries.map((e) => e.question),
      answersKey: answers.join('\n'),
    };
  }
}

/** Another subscriber's answers to `questions`, in the form `settle` gives. */
export function answersOf(questions: Question[], ctx: Context): string | Promise<string> {
  const answers: (string | Promise<string>)[] = new Array(questions.length);
  let loading = false;
  for (let i = 0; i < questions.length; i++) {
    const a = answerOf(questions[i]!, ctx);
    answers[i] = a;
    if (typeof a !== 'string') loading = true;
  }
  return loading ? Promise.all(answers).then((all) => all.join('\n')) : answers.join('\n');
}

export type { Question };
