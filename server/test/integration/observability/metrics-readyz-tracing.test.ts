import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { logDestination } from '../../../src/log.js';
import {
  createMember,
  createTestDatabase,
  eventually,
  hasEvent,
  OPS,
  probeRequests,
  startTestInstance,
  subscribe,
  untilProbeArrives,
  type GqlResult,
  type TestInstance,
  ok,
} from '../../support/harness.js';

// Issue 11, "Observability in production" and "What must be shown": /metrics exposes the named
// series and its counters move with what the instance does; /readyz is 503 naming the database
// when the database is unreachable (a TCP forwarder in front of Postgres is closed), and ready
// again once it is back; the request id is on every log line of one request; with an OTLP
// endpoint set, a GraphQL operation's span reaches a local receiver.

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterEach(() => vi.restoreAllMocks());

/** Postgres behind a loopback TCP forwarder: down() closes its port and cuts every connection. */
async function databaseDoor(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve();
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  await open();
  return {
    get port() {
      return port;
    },
    async down() {
      const closing = server!;
      server = null;
      const closed = new Promise<void>((r) => closing.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    up: open,
  };
}

/** The value of one Prometheus sample (labels: a subset to match), summed over the matching series. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total = (total ?? 0) + Number(m[3]);
  }
  return total;
}

async function scrape(t: TestInstance, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.instance.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** Log lines written while fn runs, parsed (every line must be JSON). */
async function logLinesDuring(fn: () => Promise<void>): Promise<Record<string, any>[]> {
  const written = vi.spyOn(logDestination, 'write');
  await fn();
  const lines = written.mock.calls.map((c) => String(c[0]).trimEnd());
  written.mockRestore();
  return lines.map((l) => JSON.parse(l) as Record<string, any>);
}

const gqlHttp = (t: TestInstance, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${t.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}`, ...headers },
    body: JSON.stringify(body),
  });

describe('/metrics', () => {
  let t: TestInstance;
  let agent: FixtureAgent;
  beforeAll(async () => {
    agent = await startFixtureAgent();
    cleanups.push(() => agent.close());
    t = await startTestInstance();
    cleanups.push(() => t.stop());
  });

  it('exposes every named series, and the counters move with a createApproval, an agent request, decisions and a delivery', async () => {
    const before = await scrape(t);
    expect(before.status).toBe(200);
    expect(before.type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const [name, type] of [
      ['taskbay_approvals_opened_total', 'counter'],
      ['taskbay_approvals_decided_total', 'counter'],
      ['taskbay_approval_decision_seconds', 'histogram'],
      ['taskbay_delivery_latency_seconds', 'histogram'],
      ['taskbay_delivery_attempts', 'histogram'],
      ['taskbay_integrity_alerts_total', 'counter'],
      ['taskbay_job_queue_depth', 'gauge'],
      ['taskbay_graphql_ws_operations', 'gauge'],
      ['taskbay_graphql_ws_connections', 'gauge'],
      ['taskbay_events_listener_reconnects_total', 'counter'],
      ['taskbay_events_listener_connected', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['process_cpu_user_seconds_total', 'counter'],
    ]) {
      expect(before.text, name).toContain(`# TYPE ${name} ${type}\n`);
    }
    // Sampled: a number of seconds (a missing sample or NaN fails; a gauge of lag is never negative).
    expect(Number.isFinite(sample(before.text, 'nodejs_eventloop_lag_seconds'))).toBe(true);
    expect(sample(before.text, 'taskbay_events_listener_connected')).toBe(1);
    const n = (text: string, name: string, labels?: Record<string, string>) => sample(text, name, labels) ?? 0;

    // A person's request, decided (rejected) by another admin (the requester may not decide it).
    const reviewer = await createMember(t, { role: 'ADMIN' });
    const mine = ok(
      await t.gql(`mutation { createApproval(input: { title: "metrics", risk: HIGH, action: { kind: "send_message", text: "x" } }) { id revision digest } }`),
    ).createApproval;
    ok(await t.gql(OPS.reject, { id: mine.id, revision: mine.revision, digest: mine.digest }, reviewer.token));

    // An agent's request (startTask), approved: the approved message is delivered to the agent.
    const agentId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    const [{ node: asked }] = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest risk } } } }`, { t: task.id }))
      .approvals.edges;
    ok(await t.gql(OPS.approve, { id: asked.id, revision: asked.revision, digest: asked.digest }));
    await eventually(
      async () =>
        (await t.gql(`query($id: ID!) { approval(id: $id) { execution { status } } }`, { id: asked.id })).data?.approval.execution?.status === 'DELIVERED',
    );

    const after = await scrape(t);
    expect(
      n(after.text, 'taskbay_approvals_opened_total', { source: 'USER', risk: 'HIGH' }) -
        n(before.text, 'taskbay_approvals_opened_total', { source: 'USER', risk: 'HIGH' }),
    ).toBe(1);
    expect(
      n(after.text, 'taskbay_approvals_opened_total', { source: 'AGENT', risk: asked.risk }) -
        n(before.text, 'taskbay_approvals_opened_total', { source: 'AGENT', risk: asked.risk }),
    ).toBe(1);
    expect(
      n(after.text, 'taskbay_approvals_decided_total', { outcome: 'REJECT' }) - n(before.text, 'taskbay_approvals_decided_total', { outcome: 'REJECT' }),
    ).toBe(1);
    expect(
      n(after.text, 'taskbay_approvals_decided_total', { outcome: 'APPROVE' }) - n(before.text, 'taskbay_approvals_decided_total', { outcome: 'APPROVE' }),
    ).toBe(1);
    expect(n(after.text, 'taskbay_approval_decision_seconds_count') - n(before.text, 'taskbay_approval_decision_seconds_count')).toBe(2);
    expect(n(after.text, 'taskbay_delivery_latency_seconds_count') - n(before.text, 'taskbay_delivery_latency_seconds_count')).toBe(1);
    expect(
      n(after.text, 'taskbay_delivery_attempts_count', { outcome: 'delivered' }) - n(before.text, 'taskbay_delivery_attempts_count', { outcome: 'delivered' }),
    ).toBe(1);
    expect(
      n(after.text, 'taskbay_delivery_attempts_sum', { outcome: 'delivered' }) - n(before.text, 'taskbay_delivery_attempts_sum', { outcome: 'delivered' }),
    ).toBe(1);

    // Queue depth is read from graphile-worker's table when scraped (here: the audit checkpoint and
    // whatever else is queued), by task and state, as the table says when the test asks it.
    const queued = await t.sql<{ task: string; state: string; n: number }>(`select task_identifier as task,
        case when attempts >= max_attempts then 'failed' when locked_at is not null then 'running'
             when run_at <= now() then 'due' else 'scheduled' end as state, count(*)::int as n
      from graphile_worker.jobs group by 1, 2`);
    const depth = await scrape(t);
    expect(queued.length).toBeGreaterThan(0);
    for (const q of queued) expect(sample(depth.text, 'taskbay_job_queue_depth', { task: q.task, state: q.state }), `${q.task} ${q.state}`).toBe(q.n);
    expect(sample(depth.text, 'taskbay_job_queue_depth')).toBe(queued.reduce((sum, q) => sum + q.n, 0));
  }, 60_000);

  it('counts live graphql-ws connections and operations', async () => {
    const probes = probeRequests(() => t);
    const client = t.ws();
    const sub = subscribe(client, 'subscription { approvalRequested { id } }');
    await untilProbeArrives(async () => {
      const id = await probes.open();
      return () => hasEvent(sub, 'approvalRequested', id);
    });
    const live = await scrape(t);
    expect(sample(live.text, 'taskbay_graphql_ws_connections')).toBe(1);
    expect(sample(live.text, 'taskbay_graphql_ws_operations')).toBe(1);
    await client.dispose();
    await eventually(async () => sample((await scrape(t)).text, 'taskbay_graphql_ws_connections') === 0);
    expect(sample((await scrape(t)).text, 'taskbay_graphql_ws_operations')).toBe(0);
  });

  // Issue 22, finding 9: with no Host check, a page whose name was rebound to 127.0.0.1 (DNS
  // rebinding) read /metrics from a browser on this machine: a loopback client naming its own host.
  it('DNS rebinding: a request to 127.0.0.1 naming another host is refused (403); naming 127.0.0.1 or localhost it is answered', async () => {
    const port = t.instance.port;
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const rebound = await get('attacker.example');
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error).toMatch(/^metrics are served to loopback clients whose Host is localhost, a loopback address/);
    expect((await get(`attacker.example:${port}`)).status).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const answered = await get(host);
      expect(answered.status, host).toBe(200);
      expect(answered.body).toContain('# TYPE taskbay_approvals_opened_total counter');
    }
  });

  it('with TASKBAY_METRICS_TOKEN, only a request bearing it is answered (loopback too)', async () => {
    const token = 'metrics-secret-0123456789';
    const guarded = await startTestInstance({ databaseUrl: t.databaseUrl, env: { TASKBAY_METRICS_TOKEN: token } });
    cleanups.push(() => guarded.stop());
    expect((await scrape(guarded)).status).toBe(401);
    expect((await scrape(guarded, { authorization: 'Bearer metrics-secret-wrong-456789' })).status).toBe(401);
    const allowed = await scrape(guarded, { authorization: `Bearer ${token}` });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('# TYPE taskbay_approvals_opened_total counter');
  });
});

describe('/readyz and request ids', () => {
  let t: TestInstance;
  let door: Awaited<ReturnType<typeof databaseDoor>>;
  let direct: pg.Pool;
  beforeAll(async () => {
    const databaseUrl = await createTestDatabase();
    direct = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    cleanups.push(() => direct.end());
    const url = new URL(databaseUrl);
    door = await databaseDoor({ host: url.hostname, port: Number(url.port) });
    url.host = `127.0.0.1:${door.port}`;
    t = await startTestInstance({ databaseUrl: url.toString() });
    cleanups.push(async () => {
      await door.up();
      await t.stop();
    });
  });

  const readyz = async () => {
    const res = await fetch(`${t.instance.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { ready: boolean; checks: Record<string, string>; failed: string[] } };
  };

  it("echoes a safe X-Request-Id, replaces an unsafe one, and puts it on the request's log line", async () => {
    let res!: Response;
    const lines = await logLinesDuring(async () => {
      res = await gqlHttp(t, { query: 'query ObsViewer { viewer { email } }' }, { 'x-request-id': 'obs-req-1' });
      await res.text();
    });
    expect(res.headers.get('x-request-id')).toBe('obs-req-1');
    expect(lines.filter((l) => l.reqId === 'obs-req-1')).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'request',
        method: 'POST',
        path: '/graphql',
        route: '/graphql',
        status: 200,
        operation: 'query ObsViewer',
      }),
    ]);
    for (const unsafe of ['has spaces in it', 'x'.repeat(65), '<script>']) {
      const r = await gqlHttp(t, { query: '{ viewer { email } }' }, { 'x-request-id': unsafe });
      expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('is 200 with every check ok; 503 naming the database while it is unreachable (an operation then logs its error under its request id); 200 again once it is back', async () => {
    expect(await readyz()).toEqual({ status: 200, body: { ready: true, checks: { database: 'ok', worker: 'ok', listener: 'ok' }, failed: [] } });
    const reconnects = sample((await scrape(t)).text, 'taskbay_events_listener_reconnects_total');

    await door.down();
    const down = await eventually(async () => {
      const r = await readyz();
      return r.status === 503 ? r : null;
    });
    expect(down.body.ready).toBe(false);
    expect(down.body.checks.database).toBe('failed');
    expect(down.body.failed).toContain('database');
    expect((await fetch(`${t.instance.url}/healthz`)).status).toBe(200); // liveness: the process answers

    // A GraphQL request meanwhile fails unexpectedly: its error line and its request line carry its id.
    let res!: Response;
    const lines = await logLinesDuring(async () => {
      res = await gqlHttp(t, { query: '{ viewer { email } }' }, { 'x-request-id': 'obs-req-down' });
      await res.text();
    });
    expect(res.headers.get('x-request-id')).toBe('obs-req-down');
    const mine = lines.filter((l) => l.reqId === 'obs-req-down');
    expect(mine).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 'error', msg: '[graphql] unexpected error', err: expect.stringMatching(/\S/) }),
        expect.objectContaining({ level: res.status >= 500 ? 'warn' : 'info', msg: 'request', path: '/graphql', status: res.status }),
      ]),
    );

    await door.up();
    await eventually(async () => (await readyz()).status === 200, 30_000, 200);
    expect((await readyz()).body.failed).toEqual([]);
    const after = sample((await scrape(t)).text, 'taskbay_events_listener_reconnects_total')!;
    expect(after).toBeGreaterThan(reconnects!);
    expect((await direct.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  }, 60_000);
});

describe('OpenTelemetry tracing', () => {
  it("with OTEL_EXPORTER_OTLP_ENDPOINT set, spans reach an OTLP/HTTP receiver: a GraphQL operation's (child of its HTTP span, in the caller's trace; its error codes), a delivery sent by the deciding instance (in the approve's trace) and a job run's", async () => {
    const posts: { path: string; type: string | undefined; body: any }[] = [];
    const receiver = createHttpServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posts.push({ path: req.url ?? '', type: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => receiver.close(() => r())));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const t = await startTestInstance({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'taskbay-test' } });
    let stopped = false;
    cleanups.push(() => (stopped ? undefined : t.stop()));

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await gqlHttp(t, { query: 'query ObsTraced { viewer { email } }' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(res.status).toBe(200);
    const failing = await gqlHttp(t, { query: 'query ObsFails($id: ID!) { approval(id: $id) { id } }', variables: { id: 'not-an-id' } });
    const failedCode = ((await failing.json()) as GqlResult).errors?.[0]?.extensions?.code;
    expect(failedCode).toBeTruthy();
    // A job run: the delivery of an approved agent request, retried by its job (the deciding
    // instance's own send, right after the decision, is refused once).
    const agent = await startFixtureAgent();
    cleanups.push(() => agent.close());
    const agentId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    const [{ node: asked }] = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals
      .edges;
    agent.failNext('showcase', 1);
    // Approved over HTTP in a caller's trace: the deciding instance's own send is traced in it.
    const approveTraceId = '0af7651916cd43dd8448eb211c80319c';
    const approved = await gqlHttp(
      t,
      { query: OPS.approve, variables: { id: asked.id, revision: asked.revision, digest: asked.digest } },
      { traceparent: `00-${approveTraceId}-b7ad6b7169203331-01` },
    );
    expect(((await approved.json()) as GqlResult).errors).toBeUndefined();
    await eventually(
      async () =>
        (await t.gql(`query($id: ID!) { approval(id: $id) { execution { status } } }`, { id: asked.id })).data?.approval.execution?.status === 'DELIVERED',
    );
    await t.stop(); // exports what is buffered
    stopped = true;

    expect(posts.length).toBeGreaterThan(0);
    for (const p of posts) {
      expect(p.path).toBe('/v1/traces');
      expect(p.type).toBe('application/json');
    }
    const resourceSpans = posts.flatMap((p) => p.body.resourceSpans as any[]);
    const service = resourceSpans[0].resource.attributes.find((a: any) => a.key === 'service.name');
    expect(service.value.stringValue).toBe('taskbay-test');
    const spans = resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s: any) => s.spans as any[]));
    const attr = (span: any, key: string) => span.attributes.find((a: any) => a.key === key)?.value;
    const operation = spans.find((s) => s.name === 'query ObsTraced');
    expect(operation).toBeDefined();
    expect(attr(operation, 'graphql.operation.name')).toEqual({ stringValue: 'ObsTraced' });
    expect(attr(operation, 'graphql.operation.type')).toEqual({ stringValue: 'query' });
    const http = spans.find((s) => s.spanId === operation.parentSpanId);
    expect(http.name).toBe('POST /graphql');
    expect(attr(http, 'http.response.status_code')).toEqual({ intValue: 200 });
    expect(http.traceId).toBe(traceId);
    expect(operation.traceId).toBe(traceId);
    const failed = spans.find((s) => s.name === 'query ObsFails');
    expect(attr(failed, 'taskbay.graphql.error_codes')).toEqual({ arrayValue: { values: [{ stringValue: failedCode }] } });
    expect(failed.status.code).toBe(2); // ERROR
    // The deciding instance's send, started by the approve and ending after its answer: a span of
    // its own under the approve's HTTP span, in the caller's trace.
    const send = spans.find((s) => s.name === 'delivery send');
    expect(attr(send, 'taskbay.delivery.sender')).toEqual({ stringValue: 'decision' });
    expect(send.traceId).toBe(approveTraceId);
    expect(spans.find((s) => s.spanId === send.parentSpanId)?.name).toBe('POST /graphql');
    const job = spans.find((s) => s.name === 'job deliver_approval');
    expect(attr(job, 'taskbay.job.task')).toEqual({ stringValue: 'deliver_approval' });
    expect(job.status.code ?? 0).toBe(0); // UNSET: it succeeded
  }, 60_000);
});
