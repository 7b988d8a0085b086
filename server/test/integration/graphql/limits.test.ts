import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { encodeCursor } from '../../../src/graphql/pagination.js';
import { logDestination } from '../../../src/log.js';
import { startTestInstance, type GqlResult, type TestInstance } from '../../support/harness.js';

// The GraphQL limits over real HTTP (instance.url): each refusal is BAD_USER_INPUT with the
// limit in extensions.reason, nothing runs, and the server answers the next request.

let t: TestInstance; // default limits
let small: TestInstance; // small, configured limits (the settings reach the server)

beforeAll(async () => {
  [t, small] = await Promise.all([
    startTestInstance({ worker: false }),
    startTestInstance({
      worker: false,
      env: {
        TASKBAY_GRAPHQL_MAX_TOKENS: '80',
        TASKBAY_GRAPHQL_MAX_DEPTH: '5',
        TASKBAY_GRAPHQL_MAX_ALIASES: '2',
        TASKBAY_GRAPHQL_MAX_DIRECTIVES: '1',
        TASKBAY_GRAPHQL_MAX_COST: '500',
        TASKBAY_GRAPHQL_MAX_INPUT_DEPTH: '10',
        TASKBAY_GRAPHQL_MAX_BODY_BYTES: String(32 * 1024),
      },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), small?.stop()]);
});
afterEach(() => vi.restoreAllMocks());

async function post(on: TestInstance, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: GqlResult }> {
  const res = await fetch(`${on.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${on.adminToken}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as GqlResult };
}

/** The server still answers: /healthz and a small query. */
async function stillAnswers(on: TestInstance) {
  expect((await fetch(`${on.instance.url}/healthz`)).status).toBe(200);
  const r = await post(on, { query: '{ viewer { email } }' });
  expect(r.json).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
}

function refusal(r: { json: GqlResult }) {
  expect(r.json.data ?? null).toBeNull();
  expect(r.json.errors).toHaveLength(1);
  const e = r.json.errors![0]!;
  expect(e.extensions?.code).toBe('BAD_USER_INPUT');
  return { reason: e.extensions?.reason, message: e.message };
}

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('query shape limits', () => {
  test('the 60 KB repeated-field query is refused at parse (tokens)', async () => {
    const r = await post(t, { query: `{ viewer { ${'email '.repeat(10_000)}} }` });
    expect(refusal(r)).toEqual({ reason: 'TOO_MANY_TOKENS', message: 'the query has more than 500 tokens; the limit is 500' });
    await stillAnswers(t);
  });

  test('5,000 aliased approvals(first: i) are refused', async () => {
    const query = `{ ${Array.from({ length: 5000 }, (_, i) => `a${i}: approvals(first: ${(i % 100) + 1}) { edges { cursor } }`).join(' ')} }`;
    expect(refusal(await post(t, { query })).reason).toBe('TOO_MANY_TOKENS');
    // Under the token limit the alias limit holds: 16 aliases of the default 15.
    const aliased = `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`;
    expect(refusal(await post(t, { query: aliased }))).toEqual({ reason: 'TOO_MANY_ALIASES', message: 'the number of aliases is 16; the limit is 15' });
    await stillAnswers(t);
  });

  test.each([
    ['tokens', `{ viewer { ${'id '.repeat(80)}} }`, 'TOO_MANY_TOKENS', 'the limit is 80'],
    ['depth', '{ approvals { edges { node { decisions { reviewer { id } } } } } }', 'TOO_DEEP', 'the query depth is 6; the limit is 5'],
    ['aliases', '{ a: viewer { id } b: viewer { id } c: viewer { id } }', 'TOO_MANY_ALIASES', 'the limit is 2'],
    ['directives', '{ viewer @include(if: true) { id @skip(if: false) } }', 'TOO_MANY_DIRECTIVES', 'the number of directives is 2; the limit is 1'],
    ['cost', '{ approvals(first: 100) { edges { node { id title } } } }', 'TOO_COSTLY', 'the limit is 500'],
  ])('configured %s limit: refused over HTTP, then the server answers', async (_name, query, reason, message) => {
    const r = refusal(await post(small, { query }));
    expect(r.reason).toBe(reason);
    expect(r.message).toContain(message);
    await stillAnswers(small);
  });

  test('just under each configured limit passes', async () => {
    for (const query of [
      '{ approvals { edges { node { id } } } }',
      '{ a: viewer { id } b: viewer { id } }',
      '{ viewer @include(if: true) { id } }',
      '{ approvals(first: 10) { edges { node { id } } } }',
    ]) {
      const r = await post(small, { query });
      expect(r.json.errors, query).toBeUndefined();
    }
  });
});

describe('input nesting', () => {
  const startTask = `mutation($data: JSON) { startTask(input: { agentId: "${Buffer.from(`Agent:${randomUUID()}`).toString('base64')}", data: $data }) { id } }`;

  test('variables nested past the limit are refused before anything walks them', async () => {
    // 10 levels: passes the check and reaches the resolver (the agent does not exist).
    const ok = await post(small, { query: startTask, variables: { data: { x: nested(8) } } });
    expect(ok.json.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const r = await post(small, { query: startTask, variables: { data: { x: nested(9) } } });
    expect(r.status).toBe(400);
    expect(refusal(r)).toEqual({ reason: 'INPUT_TOO_DEEP', message: 'variables are nested more than 10 levels deep; the limit is 10' });
  });

  test('a 10,000-deep variables object is BAD_USER_INPUT, not a 500 (recursive code would overflow)', async () => {
    // Written by hand: JSON.stringify itself cannot serialize it.
    const body = `{"query":${JSON.stringify(startTask)},"variables":{"data":${'['.repeat(10_000)}1${']'.repeat(10_000)}}}`;
    const r = await post(t, body);
    expect(r.status).toBe(400);
    expect(refusal(r).reason).toBe('INPUT_TOO_DEEP');
    await stillAnswers(t);
  });

  test('a JSON literal nested past the limit is refused', async () => {
    const literal = (n: number) => `mutation { startTask(input: { agentId: "x", data: ${'['.repeat(n)}1${']'.repeat(n)} }) { id } }`;
    // input object + 9 lists = 10: allowed (and then the id is refused as malformed).
    expect((await post(small, { query: literal(9) })).json.errors?.[0]?.extensions?.reason).toBeUndefined();
    expect(refusal(await post(small, { query: literal(10) }))).toEqual({
      reason: 'INPUT_TOO_DEEP',
      message: 'a value in the query is nested 11 levels deep; the limit is 10',
    });
    await stillAnswers(small);
  });
});

describe('request body size', () => {
  const limit = 32 * 1024;
  const over = JSON.stringify({ query: '{ viewer { email } }', variables: { pad: 'x'.repeat(limit) } });

  function expect413(status: number, text: string) {
    expect(status).toBe(413);
    const json = JSON.parse(text) as GqlResult;
    expect(json.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'BODY_TOO_LARGE' });
    expect(json.errors?.[0]?.message).toBe(`the request body is too large; the limit is ${limit} bytes`);
  }

  test('Content-Length over the limit: 413 with a GraphQL error', async () => {
    const res = await fetch(`${small.instance.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${small.adminToken}` },
      body: over,
    });
    expect413(res.status, await res.text());
    await stillAnswers(small);
  });

  test('a chunked body counted past the limit while reading: 413, the rest is not read', async () => {
    // No Content-Length: the server can only count. The body keeps coming until the server
    // answers, up to 64 times the limit.
    const { status, text, sent } = await new Promise<{ status: number; text: string; sent: number }>((resolve, reject) => {
      const req = request(`${small.instance.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', authorization: `Bearer ${small.adminToken}` },
      });
      let sent = 0;
      let answered = false;
      const chunk = Buffer.alloc(4096, 'x');
      req.write('{"query":"{ viewer { email } }","variables":{"pad":"');
      const pump = () => {
        if (answered) return;
        if (sent >= 64 * limit) return void req.end('"}}');
        sent += chunk.length;
        // One chunk per turn of the event loop, so the answer is seen as soon as it comes.
        if (req.write(chunk)) setImmediate(pump);
        else req.once('drain', pump);
      };
      req.on('response', (res) => {
        answered = true;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text, sent }));
      });
      req.on('error', (e) => (answered ? undefined : reject(e)));
      pump();
    });
    expect413(status, text);
    expect(sent).toBeLessThan(64 * limit);
    await stillAnswers(small);
  });

  test('a body under the limit (a large approval action fits the default) is read', async () => {
    const pad = 'x'.repeat(200 * 1024);
    const r = await post(t, { query: '{ viewer { email } }', variables: { pad } });
    expect(r.json).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });
});

describe('cursors', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64url');

  test.each([
    ['approvals', 'approvals'],
    ['tasks', 'tasks'],
  ])('a malformed %s cursor is BAD_USER_INPUT "invalid cursor" and reaches no SQL (nothing logged)', async (_n, field) => {
    const logged = vi.spyOn(logDestination, 'write');
    for (const after of [b64(`2026-11-29T10:11:12.345Z|not-a-uuid`), 'garbage!', 'A'.repeat(200 * 1024)]) {
      const r = await post(t, { query: `query($after: String) { ${field}(first: 1, after: $after) { edges { cursor } } }`, variables: { after } });
      expect(r.json.errors?.[0]).toMatchObject({ message: 'invalid cursor', extensions: { code: 'BAD_USER_INPUT' } });
    }
    // Only each request's own line (info); no error line.
    expect(logged.mock.calls.map((c) => JSON.parse(String(c[0])).level)).toEqual(['info', 'info', 'info']);
  });

  test('a well-formed cursor pages', async () => {
    const after = encodeCursor({ createdAt: new Date(), id: randomUUID() });
    const r = await post(t, {
      query: `query($after: String) { approvals(first: 1, after: $after) { edges { cursor } pageInfo { hasPreviousPage } } }`,
      variables: { after },
    });
    expect(r.json).toEqual({ data: { approvals: { edges: [], pageInfo: { hasPreviousPage: true } } } });
  });
});
