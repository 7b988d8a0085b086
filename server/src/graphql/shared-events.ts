import { createSourceEventStream, execute, getOperationAST, Kind, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { EventStream } from '../events/pubsub.js';
import { inEventScope, type Context } from './context.js';
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
// event at all); only the execution of the selection is shared. The first subscriber of each
// group executes while the event is prepared (events/pubsub.ts), so at delivery the others
// find their result at once. Over graphql-ws a result without errors then goes out as one
// frame serialized once (`sendNextDirectly`); a result with errors, and every result over SSE,
// goes through Yoga's result hooks (error masking) and the transport as any other.
//
// A field opting in promises: its subscription sets the subscriber's scope for each event
// (graphql/context.ts setEventScope: the event's shared entity manager and loaders, the
// subscriber's access as of the event) before the event is delivered; its resolvers are only
// ever executed here, through that scope; they read the viewer only through the context
// (viewer, access, other properties).

const SHARE_EVENT_RESULTS = 'taskbayShareEventResults';
/** `extensions` of a subscription field whose event results may be shared (see above). */
export const shareEventResults = { [SHARE_EVENT_RESULTS]: true } as const;

/** Executions of shared subscription events since start (tests and metrics read it). */
export const sharedEventStats = { executions: 0 };

/** Past this many distinct answers in one group, a subscriber no longer waits for others' executions. */
const MAX_VARIANTS = 32;
/** Subscribers of a group tried, in order, for the execution made while an event is prepared. */
const MAX_CANDIDATES = 8;

interface Variants {
  questions: Question[];
  results: Map<string, ExecutionResult>;
}
interface Group {
  /** By the questions asked (sorted keys): that execution's results by their answers. */
  settled: Map<string, Variants>;
  pending: Set<Promise<unknown>>;
  count: number;
  candidates: { args: ExecutionArgs; visible: () => boolean | Promise<boolean> }[];
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
  // Always through here once the field opts in (its resolvers read the event's scope); an
  // operation that cannot be grouped is a group of one.
  const body = args.document.loc?.source.body;
  const viewer = (args.contextValue as Context | undefined)?.viewer;
  if (body === undefined || !viewer) return `alone ${++alone}`;
  return JSON.stringify([body, args.operationName ?? null, args.variableValues ?? {}, viewer.tenantId]);
}
let alone = 0;

function groupOf(payload: object, key: string): Group {
  let groups = groupsByEvent.get(payload);
  if (!groups) {
    groups = new Map();
    groupsByEvent.set(payload, groups);
  }
  let group = groups.get(key);
  if (!group) {
    group = { settled: new Map(), pending: new Set(), count: 0, candidates: [] };
    groups.set(key, group);
  }
  return group;
}

async function executeRecorded(args: ExecutionArgs, payload: unknown) {
  sharedEventStats.executions++;
  const facts = new ViewerFacts();
  const result = await execute({ ...args, rootValue: payload, contextValue: facts.context(inEventScope(args.contextValue as Context, payload)) });
  return { result, ...(await facts.settle()) };
}

/**
 * This subscriber's result for the event: an alike subscriber's, or its own execution. At once
 * when an alike result is there and this subscriber's answers are (the usual case once the
 * first subscriber of the group has executed the event).
 */
function resultFor(args: ExecutionArgs, key: string, payload: unknown): ExecutionResult | Promise<ExecutionResult> {
  if (!payload || typeof payload !== 'object') return executeRecorded(args, payload).then((r) => r.result);
  const group = groupOf(payload, key);
  if (!group.pending.size) {
    const ctx = inEventScope(args.contextValue as Context, payload);
    for (const variants of group.settled.values()) {
      const answers = answersOf(variants.questions, ctx);
      if (typeof answers !== 'string') break;
      const hit = variants.results.get(answers);
      if (hit) return hit;
    }
  }
  return resultAfterOthers(args, payload, group);
}

/** resultFor, waiting for executions under way and answers still loading. */
async function resultAfterOthers(args: ExecutionArgs, payload: object, group: Group): Promise<ExecutionResult> {
  const ctx = inEventScope(args.contextValue as Context, payload);
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
        if (mine.has(questionsKey)) continue;
        const answers = answersOf(variants.questions, ctx);
        mine.set(questionsKey, typeof answers === 'string' ? answers : await answers);
      }
      continue;
    }
    // Nobody alike so far and nothing under way (checked without an await since): execute.
    return executeFor(args, payload, group);
  }
}

/** Executes the event for this subscriber and keeps the result for the alike ones. */
function executeFor(args: ExecutionArgs, payload: object, group: Group): Promise<ExecutionResult> {
  const run = executeRecorded(args, payload).then((r) => {
    let variants = group.settled.get(r.questionsKey);
    if (!variants) {
      variants = { questions: r.questions, results: new Map() };
      group.settled.set(r.questionsKey, variants);
    }
    if (!variants.results.has(r.answersKey)) {
      variants.results.set(r.answersKey, r.result);
      group.count++;
    }
    return r.result;
  });
  group.pending.add(run);
  const forget = () => void group.pending.delete(run);
  run.then(forget, forget);
  return run;
}

/**
 * While the event is prepared: once the first subscriber of a group has its own preparation
 * done, the first of the group's subscribers that sees the event executes it, so the alike
 * ones find the result ready when the event is delivered. The others wait for nothing more
 * than their own preparation (the pub/sub waits for one execution per group, not one per
 * subscriber); a group whose candidates cannot tell yet is executed at delivery instead.
 */
function prepareResult(args: ExecutionArgs, key: string, payload: unknown, visible: () => boolean | Promise<boolean>, own: unknown): unknown {
  if (!payload || typeof payload !== 'object') return own;
  const group = groupOf(payload, key);
  if (group.pending.size || group.settled.size || group.candidates.length >= MAX_CANDIDATES) return own;
  group.candidates.push({ args, visible });
  if (group.candidates.length > 1) return own;
  return Promise.resolve(own).then(() => {
    if (group.pending.size || group.settled.size) return undefined;
    for (const c of group.candidates) {
      if (c.visible() === true) return executeFor(c.args, payload, group);
    }
    return undefined;
  });
}

/**
 * Sends one operation's `next` payload, already serialized, on its transport (nothing once the
 * operation or its connection has ended). Registered per operation by the graphql-ws server
 * (ws.ts): there, each result would otherwise go through Yoga's result hooks and graphql-ws's
 * own message path (promises, validation, JSON of the whole message) once per subscriber.
 */
export type SendNext = (payloadJson: string) => void;
const directSenders = new WeakMap<object, SendNext>();

/** Results of the operation with this context may be sent with `send` (see SendNext). */
export function sendNextDirectly(contextValue: object, send: SendNext): void {
  directSenders.set(contextValue, send);
}

/** The JSON of a shared result, made once for all its subscribers. */
const serialized = new WeakMap<ExecutionResult, string>();
function jsonOf(result: ExecutionResult): string {
  let json = serialized.get(result);
  if (json === undefined) {
    json = JSON.stringify(result);
    serialized.set(result, json);
  }
  return json;
}

/**
 * Maps each event of `source` to its result; `return` reaches the source at once (unsubscribe).
 * With `send`, a result without errors is sent directly (it is what Yoga's error masking would
 * pass unchanged, and no other hook here changes subscription results) and the next event is
 * read; a result with errors is yielded, to be masked and sent the usual way, in order.
 */
function mapEvents(
  source: AsyncIterator<unknown>,
  map: (payload: unknown) => ExecutionResult | Promise<ExecutionResult>,
  send?: SendNext,
): AsyncGenerator<ExecutionResult> {
  const done = { value: undefined, done: true } as const;
  const iterator: AsyncGenerator<ExecutionResult> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      for (;;) {
        const step = await source.next();
        if (step.done) return done;
        const mapped = map(step.value);
        const result = mapped instanceof Promise ? await mapped : mapped;
        if (!send || result.errors) return { value: result, done: false };
        send(jsonOf(result));
      }
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
  const events = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]() as AsyncIterator<unknown> & Partial<EventStream<unknown>>;
  // Computed while the event is prepared, for every subscriber at once, so that the delivery
  // finds each subscriber's result ready (events/pubsub.ts) and, over graphql-ws, sends it then
  // and there; what is not ready goes the way of every other event, through the iterator.
  events.alsoPrepare?.((payload, visible, own) => prepareResult(args, key, payload, visible, own));
  const send = directSenders.get(args.contextValue as object);
  if (send) {
    events.handleAtOnce?.((payload) => {
      const result = resultFor(args, key, payload);
      if (result instanceof Promise) {
        // Left to the iterator, which waits for the same execution (and meets its failure).
        result.catch(() => {});
        return false;
      }
      if (result.errors) return false;
      send(jsonOf(result));
      return true;
    });
  }
  return mapEvents(events, (payload) => resultFor(args, key, payload), send);
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
