import { randomUUID } from 'node:crypto';
import { getIntrospectionQuery, parse, print, type DocumentNode } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { formatDocument } from '@urql/core';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ConnectionCounts } from '../../src/graphql/connection-caps.js';
import { loadConfig } from '../../src/config.js';
import { schema } from '../../src/modules.js';
import { boundedParseCaches, CACHED_DOCUMENT_MAX_CHARS, literalDepth, useGraphqlLimits } from '../../src/graphql/limits.js';
import { nestedDeeperThan } from '../../src/lib/untrusted.js';
import { decodeCursor, encodeCursor } from '../../src/graphql/pagination.js';
import { maskError } from '../../src/graphql/mask-error.js';
import { errorForLog, log, LOG_MESSAGE_MAX, logDestination } from '../../src/log.js';
import * as consoleDocuments from '../../../web/src/gql/graphql.js';
import * as cliDocuments from '../../src/commands/cli/gql/graphql.js';
import { OPS } from '../support/harness.js';

// The limits' defaults must let every document Taskbay's own clients send through (the
// console as urql sends it, the CLI, GraphiQL's and codegen's introspection, the tests' own
// operations), and each limit must refuse just past its value.

const defaults = loadConfig({}).graphqlLimits;

/** Parse + validate exactly as a request does (the same plugins, through Yoga's envelop). */
function check(query: string, limits = defaults): { code?: string; reason?: string; message?: string } | null {
  const yoga = createYoga({ schema, plugins: useGraphqlLimits(limits), logging: false });
  const { parse, validate, schema: s } = yoga.getEnveloped({});
  try {
    const errors = validate(s, parse(query));
    return errors.length ? { message: errors.map((e: { message: string }) => e.message).join('; ') } : null;
  } catch (e) {
    const err = e as { message: string; extensions?: { code?: string; reason?: string } };
    return { code: err.extensions?.code, reason: err.extensions?.reason, message: err.message };
  }
}

describe('the default limits accept what Taskbay itself sends', () => {
  const documents: [string, string][] = [
    ...Object.entries(consoleDocuments)
      .filter(([name]) => name.endsWith('Document'))
      .map(([name, doc]): [string, string] => [`console ${name}`, print(formatDocument(doc as DocumentNode))]),
    ...Object.entries(cliDocuments)
      .filter(([name]) => name.endsWith('Document'))
      .map(([name, doc]): [string, string] => [`cli ${name}`, String(doc)]),
    ['introspection (graphql-js defaults)', getIntrospectionQuery()],
    [
      'introspection (every option, as GraphiQL may send)',
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      }),
    ],
    ...Object.entries(OPS)
      .filter(([name]) => name !== 'approvalFields')
      .map(([name, q]): [string, string] => [`test op ${name}`, q]),
    ['test op approvals page', `{ approvals(first: 100) { edges { cursor node { ${OPS.approvalFields} } } pageInfo { hasNextPage endCursor } } }`],
  ];

  test('there are console and CLI documents to check', () => {
    expect(documents.filter(([n]) => n.startsWith('console')).length).toBeGreaterThan(20);
    expect(documents.filter(([n]) => n.startsWith('cli')).length).toBeGreaterThanOrEqual(6);
  });

  test.each(documents)('%s', (_name, query) => {
    expect(check(query)).toBeNull();
  });
});

describe('each limit refuses just past its value, with BAD_USER_INPUT naming it', () => {
  const small = { ...defaults, maxTokens: 60, maxDepth: 4, maxAliases: 2, maxDirectives: 2, maxCost: 200 };

  test('tokens', () => {
    expect(check(`{ viewer { ${'email '.repeat(50)}} }`, small)).toBeNull();
    const r = check(`{ viewer { ${'email '.repeat(56)}} }`, small);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_MANY_TOKENS' });
    expect(r!.message).toContain('60');
  });

  test('depth', () => {
    // approvals > edges > node > id = 4 (leaves count)
    expect(check('{ approvals { edges { node { id } } } }', small)).toBeNull();
    const r = check('{ approvals { edges { node { decisions { id } } } } }', small);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_DEEP' });
    expect(r!.message).toMatch(/5; the limit is 4/);
  });

  test('aliases', () => {
    expect(check('{ a: viewer { id } b: viewer { id } }', small)).toBeNull();
    const r = check('{ a: viewer { id } b: viewer { id } c: viewer { id } }', small);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_MANY_ALIASES' });
    expect(r!.message).toMatch(/3; the limit is 2/);
  });

  test('directives', () => {
    expect(check('{ viewer @include(if: true) { id @skip(if: false) } }', small)).toBeNull();
    const r = check('{ viewer @include(if: true) { id @skip(if: false) email @skip(if: false) } }', small);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_MANY_DIRECTIVES' });
    expect(r!.message).toMatch(/3; the limit is 2/);
  });

  test('cost (first: n multiplies)', () => {
    expect(check('{ approvals(first: 10) { edges { node { id } } } }', small)).toBeNull();
    const r = check('{ approvals(first: 100) { edges { node { id } } } }', small);
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_COSTLY' });
    expect(r!.message).toContain('the limit is 200');
  });

  test('literal nesting in the document', () => {
    // The input object is the first level; `data` holds the rest.
    const literal = (n: number) => `mutation { startTask(input: { agentId: "x", data: ${'['.repeat(n - 1)}1${']'.repeat(n - 1)} }) { id } }`;
    expect(check(literal(defaults.maxInputDepth))?.reason).not.toBe('INPUT_TOO_DEEP');
    const r = check(literal(defaults.maxInputDepth + 1));
    expect(r).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'INPUT_TOO_DEEP' });
    expect(r!.message).toContain(`the limit is ${defaults.maxInputDepth}`);
  });

  test('the 60 KB repeated-field query dies at parse', () => {
    expect(check(`{ viewer { ${'email '.repeat(10_000)}} }`)).toMatchObject({ reason: 'TOO_MANY_TOKENS' });
  });
});

describe('nesting checks are iterative', () => {
  const nested = (n: number, make: (inner: unknown) => unknown) => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = make(v);
    return v;
  };

  test('nestedDeeperThan counts objects and arrays, top level is 1', () => {
    expect(nestedDeeperThan(1, 1)).toBe(false);
    expect(nestedDeeperThan({ a: 1 }, 1)).toBe(false);
    expect(nestedDeeperThan({ a: [1] }, 1)).toBe(true);
    expect(
      nestedDeeperThan(
        nested(64, (v) => ({ a: v })),
        64,
      ),
    ).toBe(false);
    expect(
      nestedDeeperThan(
        nested(65, (v) => [v]),
        64,
      ),
    ).toBe(true);
    // A wide value that is shallow is fine.
    expect(nestedDeeperThan({ list: Array.from({ length: 10_000 }, () => ({ x: [1] })) }, 4)).toBe(false);
    expect(nestedDeeperThan({ list: Array.from({ length: 10_000 }, () => ({ x: [1] })) }, 3)).toBe(true);
  });

  test('a value nested 200,000 deep is refused without overflowing the stack', () => {
    expect(
      nestedDeeperThan(
        nested(200_000, (v) => [v]),
        100,
      ),
    ).toBe(true);
  });

  test('literalDepth', () => {
    const doc = (value: string) => parse(`{ viewer(x: ${value}) { id } }`);
    expect(literalDepth(doc('1'))).toBe(0);
    expect(literalDepth(doc('{ a: [1, { b: 2 }] }'))).toBe(3);
  });
});

test("Yoga's parse caches keep small documents and not large ones", () => {
  const { documentCache, errorCache } = boundedParseCaches();
  const doc = parse('{ viewer { id } }');
  const small = `{ viewer { id } } # ${'x'.repeat(CACHED_DOCUMENT_MAX_CHARS - 30)}`;
  const large = `{ viewer { id } } # ${'x'.repeat(200_000)}`;
  documentCache.set(small, doc);
  documentCache.set(large, doc);
  errorCache.set(large, new Error('refused'));
  expect(documentCache.get(small)).toBe(doc);
  expect(documentCache.get(large)).toBeUndefined();
  expect(errorCache.get(large)).toBeUndefined();
});

describe('cursors', () => {
  const row = { createdAt: new Date('2026-11-29T10:11:12.345Z'), id: randomUUID() };
  const b64 = (s: string) => Buffer.from(s).toString('base64url');

  test('a cursor of ours round-trips', () => {
    expect(decodeCursor(encodeCursor(row))).toEqual(row);
  });

  test.each([
    ['not base64url', 'abc+/='],
    ['too long', 'A'.repeat(129)],
    ['10 MiB', 'A'.repeat(10 * 1024 * 1024)],
    ['no separator', b64('2026-11-29T10:11:12.345Z')],
    ['an id that is not a uuid', b64(`2026-11-29T10:11:12.345Z|'; drop table x; --`)],
    ['a date Date() accepts but we never write', b64(`Sun Nov 29 2026|${row.id}`)],
    ['an impossible date', b64(`2026-02-30T10:11:12.345Z|${row.id}`)],
    ['empty', ''],
  ])('%s is BAD_USER_INPUT "invalid cursor"', (_name, cursor) => {
    let caught: unknown;
    try {
      decodeCursor(cursor);
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({ message: 'invalid cursor', extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('settings', () => {
  test('defaults', () => {
    const c = loadConfig({});
    expect(c.graphqlLimits).toEqual({
      maxTokens: 500,
      maxDepth: 15,
      maxAliases: 15,
      maxDirectives: 10,
      maxCost: 100_000,
      maxBodyBytes: 256 * 1024,
      maxInputDepth: 100,
    });
    expect(c.wsMaxSubscriptions).toBe(50);
    expect(c.wsOperationsPerSecond).toBe(20);
    expect(c.corsOrigins).toEqual([]);
    expect(c.graphiql).toBe(false);
  });

  test('each limit is read from its variable and validated', () => {
    const c = loadConfig({
      TASKBAY_GRAPHQL_MAX_TOKENS: '800',
      TASKBAY_GRAPHQL_MAX_DEPTH: '9',
      TASKBAY_GRAPHQL_MAX_ALIASES: '3',
      TASKBAY_GRAPHQL_MAX_DIRECTIVES: '4',
      TASKBAY_GRAPHQL_MAX_COST: '1234',
      TASKBAY_GRAPHQL_MAX_BODY_BYTES: '65536',
      TASKBAY_GRAPHQL_MAX_INPUT_DEPTH: '32',
      TASKBAY_WS_MAX_SUBSCRIPTIONS: '7',
      TASKBAY_WS_OPERATIONS_PER_SECOND: '3',
    });
    expect(c.graphqlLimits).toEqual({ maxTokens: 800, maxDepth: 9, maxAliases: 3, maxDirectives: 4, maxCost: 1234, maxBodyBytes: 65536, maxInputDepth: 32 });
    expect([c.wsMaxSubscriptions, c.wsOperationsPerSecond]).toEqual([7, 3]);
    // Past 2,000 tokens graphql-js's recursive parser could be driven near the stack limit.
    expect(() => loadConfig({ TASKBAY_GRAPHQL_MAX_TOKENS: '5000' })).toThrow(/TASKBAY_GRAPHQL_MAX_TOKENS/);
    expect(() => loadConfig({ TASKBAY_GRAPHQL_MAX_BODY_BYTES: 'lots' })).toThrow(/TASKBAY_GRAPHQL_MAX_BODY_BYTES/);
    expect(() => loadConfig({ TASKBAY_WS_MAX_SUBSCRIPTIONS: '0' })).toThrow(/TASKBAY_WS_MAX_SUBSCRIPTIONS/);
  });

  test('the per-address socket settings: defaults, values, and refusals at start', () => {
    const d = loadConfig({});
    expect([d.wsAuthGraceMs, d.wsMaxUnauthenticatedPerAddress, d.wsMaxConnectionsPerAddress]).toEqual([3000, 64, 1000]);
    const c = loadConfig({ TASKBAY_WS_AUTH_GRACE_MS: '250', TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: '2', TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS: '9' });
    expect([c.wsAuthGraceMs, c.wsMaxUnauthenticatedPerAddress, c.wsMaxConnectionsPerAddress]).toEqual([250, 2, 9]);
    expect(() => loadConfig({ TASKBAY_WS_AUTH_GRACE_MS: '0' })).toThrow(/TASKBAY_WS_AUTH_GRACE_MS must be an integer between 100 and 60000/);
    expect(() => loadConfig({ TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: 'many' })).toThrow(/TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS/);
    expect(() => loadConfig({ TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS: '0' })).toThrow(/TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS/);
  });

  test('sockets and streams are counted per address, IPv6 by /64 (as the sign-in limiter keys addresses)', async () => {
    const counts = new ConnectionCounts({ maxUnauthenticatedPerAddress: 2, maxConnectionsPerAddress: 3, maxSubscriptions: 5, operationsPerSecond: 100 });
    const a = counts.socketOpened('2001:db8:0:1::10');
    counts.socketOpened('2001:db8:0:1:ffff::20');
    expect(counts.socketRefusal('2001:db8:0:1::30')).toMatch(/already holds 2 WebSockets that have not authenticated/);
    expect(counts.socketRefusal('2001:db8:0:2::1')).toBeNull();
    a.authenticated();
    expect(counts.socketRefusal('2001:db8:0:1::30')).toBeNull();
    // A stream takes the third place of the /64; the address is then full for sockets and streams.
    const stream = await counts.streamOpened('viewer-1', '2001:db8:0:1::40');
    expect('release' in stream).toBe(true);
    expect(counts.socketRefusal('2001:db8:0:1::30')).toMatch(/already holds 3 WebSockets and subscription streams/);
    expect(await counts.streamOpened('viewer-2', '2001:db8:0:1::50')).toMatchObject({ refused: { extensions: { reason: 'TOO_MANY_OPERATIONS' } } });
    // IPv4 and IPv4-mapped IPv6 are one address.
    counts.socketOpened('192.0.2.7');
    counts.socketOpened('::ffff:192.0.2.7');
    expect(counts.socketRefusal('192.0.2.7')).toMatch(/have not authenticated/);
    // Closing gives the place back, once: a closed twice leaves the /64 with 2 of 3, and one more fills it.
    a.closed();
    a.closed();
    expect(counts.socketRefusal('2001:db8:0:1::30')).toBeNull();
    counts.socketOpened('2001:db8:0:1::60').authenticated();
    expect(counts.socketRefusal('2001:db8:0:1::30')).toMatch(/already holds 3 WebSockets and subscription streams/);
    if ('release' in stream) stream.release();
    expect(counts.socketRefusal('2001:db8:0:1::30')).toBeNull();
  });

  test('TASKBAY_CORS_ORIGINS takes exact origins only', () => {
    expect(loadConfig({ TASKBAY_CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    for (const bad of [
      '*',
      'null',
      'https://a.example/',
      'https://a.example/path',
      'a.example',
      'ftp://a.example',
      'https://user@a.example',
      'https://A.example',
    ]) {
      expect(() => loadConfig({ TASKBAY_CORS_ORIGINS: bad }), bad).toThrow(/TASKBAY_CORS_ORIGINS/);
    }
  });

  test('GraphiQL: TASKBAY_GRAPHIQL, or NODE_ENV=development', () => {
    expect(loadConfig({ TASKBAY_GRAPHIQL: '1' }).graphiql).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).graphiql).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development', TASKBAY_GRAPHIQL: '0' }).graphiql).toBe(false);
    expect(() => loadConfig({ TASKBAY_GRAPHIQL: 'yes please' })).toThrow(/TASKBAY_GRAPHIQL/);
  });
});

describe('logged errors are bounded', () => {
  afterEach(() => vi.restoreAllMocks());

  test('errorForLog keeps the start of a long message and the stack frames', () => {
    const e = new Error(`select * from t where id = '${'x'.repeat(10 * 1024 * 1024)}'`);
    const text = errorForLog(e);
    expect(text.length).toBeLessThan(LOG_MESSAGE_MAX + 2048);
    expect(text).toContain("Error: select * from t where id = 'xxx");
    expect(text).toMatch(/more characters\]/);
    expect(text).toMatch(/\n\s+at /);
  });

  test('an unexpected error is masked for the caller and logged clipped, as one JSON line', () => {
    const logged: string[] = [];
    vi.spyOn(logDestination, 'write').mockImplementation((line: string) => (logged.push(line), true));
    const masked = maskError(new Error(`insert ... ${'y'.repeat(5 * 1024 * 1024)}`), 'Unexpected error.');
    expect(masked.message).toBe('Unexpected error.');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.length).toBeLessThan(LOG_MESSAGE_MAX + 2048);
    const line = JSON.parse(logged[0]!);
    expect(line).toMatchObject({ level: 'error', msg: '[graphql] unexpected error' });
    expect(line.err).toMatch(/^Error: insert \.\.\. y+… \[\d+ more characters\]/);
  });

  test("every logged string is clipped, whoever logs it (an agent's text in a message or a field)", () => {
    const logged: string[] = [];
    vi.spyOn(logDestination, 'write').mockImplementation((line: string) => (logged.push(line), true));
    const hostile = 'z'.repeat(1024 * 1024);
    log.warn({ detail: { text: hostile } }, `agent said ${hostile}`);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.length).toBeLessThan(2 * LOG_MESSAGE_MAX + 2048);
    const line = JSON.parse(logged[0]!);
    expect(line.msg).toMatch(/^agent said z+… \[\d+ more characters\]$/);
    expect(line.detail.text).toMatch(/^z+… \[\d+ more characters\]$/);
  });
});
