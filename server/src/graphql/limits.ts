import { type GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import { createLRUCache, type Plugin } from 'graphql-yoga';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import type { GraphqlLimits } from '../config.js';
import { badInput } from '../errors.js';
import { nestedDeeperThan } from '../lib/untrusted.js';

// What one GraphQL operation may ask for, enforced before the expensive work: the token count
// while parsing (graphql-js's field-merging validation is quadratic in repeated fields, and its
// parser recursive), depth/aliases/directives/cost as validation rules that refuse on entering
// the operation, and the nesting of variables and literal values before anything walks them
// recursively. The Yoga plugins run on HTTP and, through yoga.getEnveloped, on WebSocket.

/** Why a request was refused, in extensions.reason next to code BAD_USER_INPUT. */
export type LimitReason =
  | 'TOO_MANY_TOKENS'
  | 'TOO_DEEP'
  | 'TOO_MANY_ALIASES'
  | 'TOO_MANY_DIRECTIVES'
  | 'TOO_COSTLY'
  | 'INPUT_TOO_DEEP'
  | 'BODY_TOO_LARGE'
  | 'TOO_MANY_OPERATIONS'
  | 'RATE_LIMITED';

export function limitError(reason: LimitReason, message: string, status = 400): GraphQLError {
  return badInput(message, { reason, http: { status } });
}

type Reject = (ctx: unknown, err: Error) => void;

/** Armor's rules report "… limit of N exceeded, found M."; the refusal names the limit and what was found. */
function refuse(reason: LimitReason, what: string, max: number): Reject[] {
  return [
    (_ctx, err) => {
      const found = /found (\d+(?:\.\d+)?)/.exec(err.message)?.[1];
      throw limitError(reason, `${what} is ${found ?? 'over the limit'}; the limit is ${max}`);
    },
  ];
}

/** The deepest nesting of list and object literals in a document (graphql's visit is iterative). */
export function literalDepth(document: DocumentNode): number {
  let depth = 0;
  let deepest = 0;
  const enter = () => {
    depth++;
    if (depth > deepest) deepest = depth;
  };
  const leave = () => {
    depth--;
  };
  visit(document, {
    [Kind.LIST]: { enter, leave },
    [Kind.OBJECT]: { enter, leave },
  });
  return deepest;
}

/** Variables and extensions of a request: refused when nested deeper than the limit. */
export function checkRequestNesting(params: { variables?: unknown; extensions?: unknown }, maxInputDepth: number): void {
  for (const [name, value] of [
    ['variables', params.variables],
    ['extensions', params.extensions],
  ] as const) {
    if (nestedDeeperThan(value, maxInputDepth)) {
      throw limitError('INPUT_TOO_DEEP', `${name} are nested more than ${maxInputDepth} levels deep; the limit is ${maxInputDepth}`);
    }
  }
}

/** Characters of a document that Yoga's parse caches keep (the console's largest, a decision answered with the whole approval page, is about 4,100). */
export const CACHED_DOCUMENT_MAX_CHARS = 16 * 1024;

/**
 * Yoga's parse caches (its LRU, keyed by the document text) keeping only documents up to
 * CACHED_DOCUMENT_MAX_CHARS: otherwise each distinct refused or accepted 250 KB query would be
 * held for an hour, a thousand of them at a time.
 */
export function boundedParseCaches() {
  const bounded = <T extends {}>() => {
    const lru = createLRUCache<T>();
    return {
      get: (key: string) => lru.get(key),
      set: (key: string, value: T) => {
        if (key.length <= CACHED_DOCUMENT_MAX_CHARS) lru.set(key, value);
      },
    };
  };
  return { documentCache: bounded<DocumentNode>(), errorCache: bounded<{}>() };
}

/** The Yoga/Envelop plugins that enforce `limits` on every operation. */
export function useGraphqlLimits(limits: GraphqlLimits): Plugin[] {
  const common = { exposeLimits: true, propagateOnRejection: true };
  return [
    {
      // Before useStorableInput (it serializes the variables, recursively).
      onParams({ params }) {
        checkRequestNesting(params, limits.maxInputDepth);
      },
      onParse() {
        return ({ result }) => {
          if (!result || result instanceof Error) return;
          const deepest = literalDepth(result as DocumentNode);
          if (deepest > limits.maxInputDepth) {
            throw limitError('INPUT_TOO_DEEP', `a value in the query is nested ${deepest} levels deep; the limit is ${limits.maxInputDepth}`);
          }
        };
      },
    },
    maxTokensPlugin({
      ...common,
      n: limits.maxTokens,
      onReject: [
        () => {
          throw limitError('TOO_MANY_TOKENS', `the query has more than ${limits.maxTokens} tokens; the limit is ${limits.maxTokens}`);
        },
      ],
    }) as Plugin,
    maxDepthPlugin({ ...common, n: limits.maxDepth, onReject: refuse('TOO_DEEP', 'the query depth', limits.maxDepth) }) as Plugin,
    maxAliasesPlugin({ ...common, n: limits.maxAliases, onReject: refuse('TOO_MANY_ALIASES', 'the number of aliases', limits.maxAliases) }) as Plugin,
    maxDirectivesPlugin({
      ...common,
      n: limits.maxDirectives,
      onReject: refuse('TOO_MANY_DIRECTIVES', 'the number of directives', limits.maxDirectives),
    }) as Plugin,
    costLimitPlugin({ ...common, maxCost: limits.maxCost, onReject: refuse('TOO_COSTLY', 'the estimated query cost', limits.maxCost) }) as Plugin,
  ];
}
