import { createSourceEventStream, execute, getOperationAST, Kind, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from './context.js';
import { answersOf, ViewerFacts, type Question } from './viewer-facts.js';

// Subscription events executed once per group of alike subscribers, not once per subscriber.
//
// graphql-js executes a subscription's selection once per subscriber and event; at a thousand
// subscribers of one approval that is the whole fan-out cost. For the subscription fields that
// opt in (`shareEventResults`), the event's payload object (the same object for every
// subscriber of this instance) keys a cache of results:
// - a group: the same document, operation name and variables, in the same tenant;
// - within it, a result is handed to another subscriber only when that subscriber gives the
//   same answers to every question the execution asked about its viewer (viewer-facts.ts): the
//   role, whether it is a given user, its grants on the agents and skills involved. A
//   subscriber that answers differently gets its own execution, kept for the next alike.
// Each subscriber's own subscribe resolver still runs (its filters decide whether it gets the
// event at all); only the execution of the selection is shared. Results go through Yoga's
// result hooks (error masking) per subscriber as before, over graphql-ws and over SSE alike.
//
// A field opting in promises: its event filter has put the subscriber's context on the event's
// shared entity manager and loaders (approvals/event-view.ts) before the event is executed, and
// its resolvers read the viewer only through the context (viewer, access, other properties).

const SHARE_EVENT_RESULTS = 'taskbayShareEventResults';
/** `extensions` of a subscription field whose event results may be shared (see above). */
export const shareEventResults = { [SHARE_EVENT_RESULTS]: true } as const;

/** Executions of shared subscription events since start (tests and metrics read it). */
export const sharedEventStats = { executions: 0 };

/** Past this many distinct answers in one group, a subscriber no longer waits for others' executions. */
const MAX_VARIANTS = 32;

interface Variants {
  questions: Question[];
  results: Map<string, ExecutionResult>;
}
interface Group {
  /** By the questions asked (sorted keys): that execution's results by their answers. */
  settled: Map<string, Variants>;
  pending: Set<Promise<unknown>>;
  count: number;
}

const groupsByEvent = new WeakMap<object, Map<string, Group>>();

/** The group key of an operation when its one root field opts in, else null. */
function groupKeyOf(args: ExecutionArgs): string | null {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'subscription' || operation.selectionSet.selections.length !== 1) return null;
  const root = operation.selectionSet.selections[0]!;
  if (root.kind !== Kind.FIELD || root.directives?.length) return null;
  const field = args.schema.getSubscriptionType()?.getFields()[root.name.value];
  if (!field?.extensions?.[SHARE_EVENT_RESULTS]) return null;
  const body = args.document.loc?.source.body;
  const viewer = (args.contextValue as Context | undefined)?.viewer;
  if (body === undefined || !viewer) return null;
  return JSON.stringify([body, args.operationName ?? null, args.variableValues ?? {}, viewer.tenantId]);
}

async function executeRecorded(args: ExecutionArgs, payload: unknown) {
  sharedEventStats.executions++;
  const facts = new ViewerFacts();
  const result = await execute({ ...args, rootValue: payload, contextValue: facts.context(args.contextValue as Context) });
  return { result, ...(await facts.settle()) };
}

/** This subscriber's result for the event: an alike subscriber's, or its own execution. */
async function resultFor(args: ExecutionArgs, key: string, payload: unknown): Promise<ExecutionResult> {
  if (!payload || typeof payload !== 'object') return (await executeRecorded(args, payload)).result;
  let groups = groupsByEvent.get(payload);
  if (!groups) groupsByEvent.set(payload, (groups = new Map()));
  let group = groups.get(key);
  if (!group) groups.set(key, (group = { settled: new Map(), pending: new Set(), count: 0 }));
  const ctx = args.contextValue as Context;
  const mine = new Map<string, string>();

  for (;;) {
    // The questions of an execution under way are known once it ends: wait for it first.
    if (group.pending.size && group.count < MAX_VARIANTS) {
      await Promise.allSettled([...group.pending]);
      continue;
    }
    let unanswered = false;
    for (const [questionsKey, variants] of group.settled) {
      const answers = mine.get(questionsKey);
      if (answers === undefined) unanswered = true;
      else {
        const hit = variants.results.get(answers);
        if (hit) return hit;
      }
    }
    if (unanswered) {
      for (const [questionsKey, variants] of group.settled) {
        if (!mine.has(questionsKey)) mine.set(questionsKey, await answersOf(variants.questions, ctx));
      }
      continue;
    }
    // Nobody alike so far and nothing under way (checked without an await since): execute.
    const run = executeRecorded(args, payload).then((r) => {
      let variants = group.settled.get(r.questionsKey);
      if (!variants) group.settled.set(r.questionsKey, (variants = { questions: r.questions, results: new Map() }));
      if (!variants.results.has(r.answersKey)) {
        variants.results.set(r.answersKey, r.result);
        group.count++;
      }
      return r.result;
    });
    group.pending.add(run);
    try {
      return await run;
    } finally {
      group.pending.delete(run);
    }
  }
}

/** Maps each event of `source` to its result; `return` reaches the source at once (unsubscribe). */
function mapEvents(source: AsyncIterator<unknown>, map: (payload: unknown) => Promise<ExecutionResult>): AsyncGenerator<ExecutionResult> {
  const done = { value: undefined, done: true } as const;
  const iterator: AsyncGenerator<ExecutionResult> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      const step = await source.next();
      return step.done ? done : { value: await map(step.value), done: false };
    },
    async return() {
      await source.return?.();
      return done;
    },
    async throw(error: unknown) {
      if (source.throw) await source.throw(error);
      else await source.return?.();
      throw error;
    },
  };
  return iterator;
}

type SubscribeFn = (args: ExecutionArgs) => unknown;

async function subscribeShared(args: ExecutionArgs, key: string, engine: SubscribeFn): Promise<unknown> {
  const source = await createSourceEventStream(args);
  // Refused (unauthenticated, a malformed id...): the engine answers, with its own error shape.
  // The resolvers of fields that opt in have no effect until their stream is read.
  if (!(Symbol.asyncIterator in Object(source))) return engine(args);
  const events = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  return mapEvents(events, (payload) => resultFor(args, key, payload));
}

/** The Yoga plugin: operations whose root field opts in are subscribed through the shared path. */
export function useSharedSubscriptionEvents(): Plugin {
  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const key = groupKeyOf(args);
      if (key === null) return;
      setSubscribeFn((a) => subscribeShared(a, key, subscribeFn) as never);
    },
  };
}
