import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, stream, SYSTEM, type AuditEventInput } from '../../../src/audit/log.js';
import { hashApiToken } from '../../../src/auth/credentials.js';
import { codeOf, createMember, eventually, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';
import { sampleText } from '../../support/doc-samples.js';
import { REPO_ROOT } from '../../support/repo-root.js';

// Signed outgoing webhooks (docs/WEBHOOKS.md) against a local receiver on 127.0.0.1 that verifies
// every message with the standardwebhooks library, as a receiver would. Names resolve through
// the test's own resolver (rebind.test can be moved to the metadata address), and the instance
// dials 127.0.0.1 whatever it judged, so nothing is ever sent anywhere else.

const PUBLIC_URL = 'https://taskbay.example';
const META = '169.254.169.254';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What the receiver answers on a path: a status per request (the last one repeats). */
const answers = new Map<string, number[]>();
const received: Received[] = [];
const names: Record<string, string[]> = {};
let receiver: Server;
let receiverPort = 0;
let t: TestInstance;
let member: { id: string; token: string };

/** The row id inside a global id. */
const at = (path: string) => received.filter((r) => r.path === path);
const url = (path: string, host = '127.0.0.1') => `http://${host}:${receiverPort}${path}`;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Verifies one received message with a secret (throws when no signature matches). */
function verify(r: Received, secret: string): any {
  return new Webhook(secret).verify(r.body, r.headers);
}

const CREATE = `mutation($url: String!, $types: [WebhookEventType!]!, $description: String) {
  createWebhookEndpoint(input: { url: $url, eventTypes: $types, description: $description }) { secret endpoint { id url eventTypes enabled } } }`;
const UPDATE = `mutation($id: ID!, $url: String) { updateWebhookEndpoint(input: { id: $id, url: $url }) { id url } }`;
const ROTATE = `mutation($id: ID!, $grace: Int) { rotateWebhookSecret(id: $id, graceSeconds: $grace) { secret endpoint { id secrets { createdAt expiresAt } } } }`;
const TEST_EVENT = `mutation($id: ID!) { sendWebhookTestEvent(id: $id) { id webhookId type status } }`;
const DELETE = `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`;
const LIST = `{ webhookEndpoints { id url } }`;
const LOG = `query($id: ID!) { node(id: $id) { ... on WebhookEndpoint { id url deliveries(first: 50) { edges { node {
  id webhookId type status payload createdAt deliveredAt nextAttemptAt lastStatusCode lastError
  attempts { number at statusCode error durationMs nextRetryAt } } } } } } }`;
const CREATE_APPROVAL = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "x" } }) { id revision digest } }`;

async function createEndpoint(path: string, types: string[], host?: string): Promise<{ id: string; secret: string }> {
  answers.set(path, answers.get(path) ?? [204]);
  const r = ok(await t.gql(CREATE, { url: url(path, host), types }));
  return { id: r.createWebhookEndpoint.endpoint.id, secret: r.createWebhookEndpoint.secret };
}

async function deliveryLog(endpointId: string): Promise<any[]> {
  return ok(await t.gql(LOG, { id: endpointId })).node.deliveries.edges.map((e: any) => e.node);
}

/** Waits until every delivery of the endpoint is settled (DELIVERED or FAILED), at least `count` of them. */
async function settled(endpointId: string, count: number, timeoutMs = 20_000): Promise<any[]> {
  return eventually(async () => {
    const log = await deliveryLog(endpointId);
    return log.length >= count && log.every((d) => d.status !== 'PENDING') ? log : null;
  }, timeoutMs);
}

const endpointCount = async () => Number((await t.sql('select count(*)::int as n from webhook_endpoint'))[0].n);

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '/';
    received.push({ path, headers: req.headers as Record<string, string>, body });
    const list = answers.get(path) ?? [404];
    const status = list.length > 1 ? list.shift()! : list[0]!;
    res.writeHead(status, { connection: 'close', 'content-type': 'text/plain' });
    res.end(status >= 300 ? `receiver says ${status}` : '');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverPort = (receiver.address() as AddressInfo).port;
  Object.assign(names, { 'receiver.test': ['127.0.0.1'], 'rebind.test': ['127.0.0.1'], 'meta.test': [META] });
  t = await startTestInstance({
    env: { TASKBAY_PUBLIC_URL: PUBLIC_URL, TASKBAY_WEBHOOK_RETRY_BASE: '1', TASKBAY_WEBHOOK_MAX_ATTEMPTS: '3' },
    network: {
      resolve: async (hostname) => {
        const found = names[hostname];
        if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return found;
      },
      dial: () => '127.0.0.1',
    },
  });
  member = await createMember(t);
});

afterAll(async () => {
  await t?.stop();
  await new Promise<void>((r) => receiver?.close(() => r()));
});

describe('events: exactly the subscribed ones, signed, once each', () => {
  it('an approval opened and decided sends approval.requested and approval.decided to the endpoint that wants them, and nothing to one that does not', async () => {
    const wanted = await createEndpoint('/hook/opened-decided', ['APPROVAL_REQUESTED', 'APPROVAL_DECIDED']);
    const other = await createEndpoint('/hook/expired-only', ['APPROVAL_EXPIRED', 'COMMAND_EXECUTED']);

    // A member asks (a request without a scope: admins decide it); the admin approves.
    const opened = ok(await t.gql(CREATE_APPROVAL, { title: 'Refund 120 EUR to ACME' }, member.token)).createApproval;
    ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest }));

    const log = await settled(wanted.id, 2);
    expect(log.map((d) => d.status)).toEqual(['DELIVERED', 'DELIVERED']);
    const messages = at('/hook/opened-decided');
    expect(messages).toHaveLength(2);
    const payloads = messages.map((m) => verify(m, wanted.secret));
    expect(payloads.map((p) => p.type).sort()).toEqual(['approval.decided', 'approval.requested']);
    // One webhook-id per message, each the id the log shows.
    expect(new Set(messages.map((m) => m.headers['webhook-id'])).size).toBe(2);
    expect(messages.map((m) => m.headers['webhook-id']).sort()).toEqual(log.map((d) => d.webhookId).sort());
    for (const m of messages) expect(m.headers['content-type']).toBe('application/json');

    const requested = payloads.find((p) => p.type === 'approval.requested');
    const decided = payloads.find((p) => p.type === 'approval.decided');
    const link = `${PUBLIC_URL}/approvals/${encodeURIComponent(opened.id)}`;
    expect(requested.data.approval).toMatchObject({ id: opened.id, url: link, title: 'Refund 120 EUR to ACME', status: 'PENDING', source: 'USER' });
    expect(requested.data.actor).toEqual({ type: 'user', id: member.id });
    expect(decided.data.approval).toMatchObject({ id: opened.id, url: link, status: 'APPROVED', revision: opened.revision, digest: opened.digest });
    expect(decided.data.decision).toMatchObject({ outcome: 'APPROVE', revision: opened.revision, digest: opened.digest });
    // The event's time, as the audit log recorded it.
    const [event] = await t.sql(`select id, at from audit_event where type = 'approval.decided' and data->>'approvalId' = $1`, [rawId(opened.id)]);
    expect(decided.timestamp).toBe(event.at.toISOString());
    expect(decided.data.auditEventId).toBe(event.id);

    // Nothing for the endpoint that wants neither (its deliveries would have been written with the events).
    expect(await deliveryLog(other.id)).toEqual([]);
    expect(at('/hook/expired-only')).toEqual([]);
  });

  it("a request's externalId (issue 23) is in the approval its messages describe; a request without one says null", async () => {
    const hook = await createEndpoint('/hook/external-id', ['APPROVAL_REQUESTED', 'APPROVAL_DECIDED']);
    const CREATE_TAGGED = `mutation($e: String) { createApproval(input: { title: "Tagged", externalId: $e, action: { kind: "send_message", text: "x" } }) { id revision digest } }`;
    const tagged = ok(await t.gql(CREATE_TAGGED, { e: 'lg-thread-7:call_2' }, member.token)).createApproval;
    ok(await t.gql(OPS.approve, { id: tagged.id, revision: tagged.revision, digest: tagged.digest }));
    const untagged = ok(await t.gql(CREATE_TAGGED, { e: null }, member.token)).createApproval;
    await settled(hook.id, 3);
    const payloads = at('/hook/external-id').map((m) => verify(m, hook.secret));
    const about = (id: string) => payloads.filter((p) => p.data.approval.id === id).map((p) => [p.type, p.data.approval.externalId]);
    expect(about(tagged.id).sort()).toEqual([
      ['approval.decided', 'lg-thread-7:call_2'],
      ['approval.requested', 'lg-thread-7:call_2'],
    ]);
    expect(about(untagged.id)).toEqual([['approval.requested', null]]);
  });

  it('a change that rolls back queues nothing; the same events committed queue one delivery each', async () => {
    const ep = await createEndpoint('/hook/rollback', ['APPROVAL_EXPIRED']);
    const opened = ok(await t.gql(CREATE_APPROVAL, { title: 'to be expired by hand' }, member.token)).createApproval;
    const approvalId = rawId(opened.id);
    const [a] = await t.sql('select tenant_id, agent_id, task_id from approval where id = $1', [approvalId]);
    const expiredEvent: AuditEventInput = {
      tenantId: a.tenant_id,
      stream: stream.approval(approvalId),
      type: 'approval.expired',
      actor: SYSTEM,
      data: { approvalId, agentId: a.agent_id, taskId: a.task_id, expiresAt: new Date().toISOString() },
    };
    const rolledBack = t.instance.orm.em.fork().transactional(async (tem) => {
      await appendEvents(tem, [expiredEvent]);
      throw new Error('the change fails after its event was appended');
    });
    await expect(rolledBack).rejects.toThrow('the change fails');
    expect(await t.sql('select id from webhook_delivery where endpoint_id = $1', [rawId(ep.id)])).toEqual([]);

    await t.instance.orm.em.fork().transactional((tem) => appendEvents(tem, [expiredEvent]));
    const log = await settled(ep.id, 1);
    expect(log).toHaveLength(1);
    expect(verify(at('/hook/rollback')[0]!, ep.secret).type).toBe('approval.expired');
  });
});

describe('command approvals (seed 002) through the hook REST API', () => {
  const hookApi = async (method: string, path: string, body?: unknown) => (await rest(t, member.token, method, path, body)).json;

  it('a command requested, approved, consumed and run sends requested, decided, grant_consumed and executed; a failing one sends command.failed without its output', async () => {
    const ep = await createEndpoint('/hook/commands', [
      'APPROVAL_REQUESTED',
      'APPROVAL_DECIDED',
      'COMMAND_GRANT_CONSUMED',
      'COMMAND_EXECUTED',
      'COMMAND_FAILED',
    ]);
    const run = async (command: string, exit: number, detail?: string) => {
      const a = await hookApi('POST', '/api/command-approvals', { agent_id: 'a1b2c3d4', payload: sealedPayload(command) });
      ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
      await hookApi('POST', `/api/command-approvals/${a.approval_id}/consume`);
      await hookApi('POST', `/api/command-approvals/${a.approval_id}/outcome`, { exit_code: exit, detail });
      return a;
    };
    const good = await run('rm -rf build-webhooks', 0);
    const bad = await run('rm -rf protected-webhooks', 3, 'rm: cannot remove SECRET-OUTPUT');
    await settled(ep.id, 8);
    const payloads = at('/hook/commands').map((m) => verify(m, ep.secret));
    const of = (a: any) =>
      payloads
        .filter((p) => p.data.approval.id === a.id)
        .map((p) => p.type)
        .sort();
    expect(of(good)).toEqual(['approval.decided', 'approval.requested', 'command.executed', 'command.grant_consumed']);
    expect(of(bad)).toEqual(['approval.decided', 'approval.requested', 'command.failed', 'command.grant_consumed']);
    const executed = payloads.find((p) => p.type === 'command.executed');
    expect(executed.data.approval).toMatchObject({ source: 'COMMAND', status: 'APPROVED' });
    expect(executed.data.command).toEqual({ approvalId: good.approval_id, commands: ['rm -rf build-webhooks'], exit_code: 0 });
    const failed = payloads.find((p) => p.type === 'command.failed');
    expect(failed.data.command).toEqual({ approvalId: bad.approval_id, commands: ['rm -rf protected-webhooks'], exit_code: 3 });
    expect(at('/hook/commands').some((m) => m.body.includes('SECRET-OUTPUT'))).toBe(false);
  });
});

describe('retries', () => {
  it('a receiver failing twice then succeeding gets the same webhook-id three times, with backoff; the log shows the attempts', async () => {
    const ep = await createEndpoint('/hook/flaky', ['APPROVAL_REQUESTED']);
    answers.set('/hook/flaky', [500, 503, 204]);
    const queued = ok(await t.gql(TEST_EVENT, { id: ep.id })).sendWebhookTestEvent;
    expect(queued).toMatchObject({ type: 'webhook.test', status: 'PENDING' });

    const [d] = await settled(ep.id, 1);
    const messages = at('/hook/flaky');
    expect(messages).toHaveLength(3);
    expect(messages.map((m) => m.headers['webhook-id'])).toEqual([queued.webhookId, queued.webhookId, queued.webhookId]);
    // The same body each time, signed anew with the attempt's timestamp.
    expect(new Set(messages.map((m) => m.body)).size).toBe(1);
    for (const m of messages) expect(verify(m, ep.secret)).toMatchObject({ type: 'webhook.test', data: { endpointId: ep.id } });

    expect(d).toMatchObject({ webhookId: queued.webhookId, status: 'DELIVERED', lastStatusCode: 204, lastError: null, nextAttemptAt: null });
    expect(d.deliveredAt).not.toBeNull();
    expect(d.attempts.map((a: any) => [a.number, a.statusCode])).toEqual([
      [1, 500],
      [2, 503],
      [3, 204],
    ]);
    expect(d.attempts[0].error).toBe('HTTP 500: receiver says 500');
    expect(d.attempts[1].error).toBe('HTTP 503: receiver says 503');
    expect(d.attempts[2]).toMatchObject({ error: null, nextRetryAt: null });
    // Exponential backoff (base 1 s, ±10 %): about 1 s after the first failure, 2 s after the second,
    // and no attempt before its time.
    const wait = (i: number) => Date.parse(d.attempts[i].nextRetryAt) - Date.parse(d.attempts[i].at);
    expect(wait(0)).toBeGreaterThanOrEqual(900);
    expect(wait(0)).toBeLessThanOrEqual(1100 + 100);
    expect(wait(1)).toBeGreaterThanOrEqual(1800);
    expect(wait(1)).toBeLessThanOrEqual(2200 + 100);
    for (const i of [1, 2]) expect(Date.parse(d.attempts[i].at)).toBeGreaterThanOrEqual(Date.parse(d.attempts[i - 1].nextRetryAt) - 50);
  });

  it('a receiver that keeps failing makes the delivery FAILED after the last attempt', async () => {
    const ep = await createEndpoint('/hook/down', ['APPROVAL_REQUESTED']);
    answers.set('/hook/down', [500]);
    ok(await t.gql(TEST_EVENT, { id: ep.id }));
    const [d] = await settled(ep.id, 1);
    expect(d).toMatchObject({ status: 'FAILED', lastStatusCode: 500, nextAttemptAt: null });
    expect(d.attempts).toHaveLength(3);
    expect(at('/hook/down')).toHaveLength(3);
  });
});

describe('network policy: the one of agent URLs', () => {
  it.each([
    ['the metadata address', () => url('/hook/x', META), 'protected: cloud metadata'],
    [
      'a name resolving to it',
      () => url('/hook/x', 'meta.test'),
      'meta.test is refused by the network policy that agent and webhook URLs follow (protected: cloud metadata)',
    ],
    ['a link-local address', () => url('/hook/x', '169.254.10.10'), 'protected: link-local'],
    ["Taskbay's own port", () => `http://127.0.0.1:${t.instance.port}/graphql`, "protected: Taskbay's own port"],
  ])('registering %s is BAD_USER_INPUT and stores nothing', async (_label, target, reason) => {
    const before = await endpointCount();
    const r = await t.gql(CREATE, { url: target(), types: ['APPROVAL_REQUESTED'] });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain(reason);
    expect(await endpointCount()).toBe(before);
  });

  it('changing a URL to a refused one is refused too', async () => {
    const ep = await createEndpoint('/hook/update', ['APPROVAL_REQUESTED']);
    const r = await t.gql(UPDATE, { id: ep.id, url: url('/hook/x', META) });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(ok(await t.gql(LOG, { id: ep.id })).node.url).toBe(url('/hook/update'));
  });

  it('a name that resolves to a refused address at delivery time is refused then: nothing is sent, the log says why', async () => {
    const ep = await createEndpoint('/hook/rebind', ['APPROVAL_REQUESTED'], 'rebind.test');
    ok(await t.gql(TEST_EVENT, { id: ep.id }));
    expect((await settled(ep.id, 1))[0].status).toBe('DELIVERED');
    expect(at('/hook/rebind')).toHaveLength(1);

    names['rebind.test'] = [META];
    ok(await t.gql(TEST_EVENT, { id: ep.id }));
    const log = await settled(ep.id, 2);
    const refused = log.find((d) => d.status !== 'DELIVERED');
    expect(refused).toMatchObject({ status: 'FAILED', lastStatusCode: null });
    expect(refused.attempts).toHaveLength(3);
    for (const a of refused.attempts) expect(a.error).toBe('rebind.test is refused by the agent network policy (protected: cloud metadata)');
    expect(at('/hook/rebind')).toHaveLength(1);
  });
});

describe('secret rotation', () => {
  it('during the grace period both secrets sign (either verifies); with no grace only the new one does', async () => {
    const ep = await createEndpoint('/hook/rotate', ['APPROVAL_REQUESTED']);
    const first = ep.secret;
    const rotated = ok(await t.gql(ROTATE, { id: ep.id, grace: 3600 })).rotateWebhookSecret;
    const second = rotated.secret as string;
    expect(second).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(second).not.toBe(first);
    expect(rotated.endpoint.secrets).toHaveLength(2);
    const graceEnds = rotated.endpoint.secrets.find((s: any) => s.expiresAt);
    // The grace ends an hour after the rotation: a minute either way tells that from no grace, or a
    // grace of another length (a schedule, not a speed).
    expect(Math.abs(Date.parse(graceEnds.expiresAt) - Date.now() - 3600_000)).toBeLessThan(60_000);

    ok(await t.gql(TEST_EVENT, { id: ep.id }));
    await settled(ep.id, 1);
    const during = at('/hook/rotate')[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(during, first).type).toBe('webhook.test');
    expect(verify(during, second).type).toBe('webhook.test');
    expect(() => verify(during, `whsec_${Buffer.alloc(32, 7).toString('base64')}`)).toThrow('No matching signature found');

    const third = ok(await t.gql(ROTATE, { id: ep.id, grace: 0 })).rotateWebhookSecret;
    expect(third.endpoint.secrets).toHaveLength(1);
    ok(await t.gql(TEST_EVENT, { id: ep.id }));
    await settled(ep.id, 2);
    const after = at('/hook/rotate')[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verify(after, third.secret).type).toBe('webhook.test');
    expect(() => verify(after, second)).toThrow('No matching signature found');
    expect(() => verify(after, first)).toThrow('No matching signature found');
  });

  it('a secret is shown only by the mutation that made it: not in the API, the audit log or the URL kept there', async () => {
    const ep = await createEndpoint('/hook/private/path-token-123', ['APPROVAL_REQUESTED']);
    const rotated = ok(await t.gql(ROTATE, { id: ep.id, grace: 60 })).rotateWebhookSecret.secret as string;
    const events = await t.sql(`select type, data::text as data from audit_event where type like 'webhook.%'`);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['webhook.created', 'webhook.secret_rotated']));
    for (const e of events) {
      expect(e.data).not.toContain(ep.secret.slice(6));
      expect(e.data).not.toContain(rotated.slice(6));
      expect(e.data).not.toContain('path-token-123');
    }
  });
});

describe('admins only', () => {
  it('a member cannot register, list, rotate, test or delete endpoints (FORBIDDEN); nothing changes', async () => {
    const ep = await createEndpoint('/hook/admin-only', ['APPROVAL_REQUESTED']);
    const before = await endpointCount();
    const attempts = [
      await t.gql(CREATE, { url: url('/hook/member'), types: ['APPROVAL_REQUESTED'] }, member.token),
      await t.gql(LIST, {}, member.token),
      await t.gql(ROTATE, { id: ep.id, grace: 0 }, member.token),
      await t.gql(TEST_EVENT, { id: ep.id }, member.token),
      await t.gql(DELETE, { id: ep.id }, member.token),
      await t.gql(UPDATE, { id: ep.id, url: url('/hook/member') }, member.token),
    ];
    expect(attempts.map(codeOf)).toEqual(['FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN']);
    // The node query answers null to a member (as for anything they may not see).
    expect((await t.gql(LOG, { id: ep.id }, member.token)).data?.node).toBeNull();
    expect(await endpointCount()).toBe(before);
    expect(await deliveryLog(ep.id)).toEqual([]);

    expect(ok(await t.gql(DELETE, { id: ep.id })).deleteWebhookEndpoint).toBe(ep.id);
    expect(await endpointCount()).toBe(before - 1);
  });
});

describe('tenants', () => {
  it("another tenant's admin sees and changes none of this tenant's endpoints (NOT_FOUND), and gets none of its events", async () => {
    const tenantId = randomUUID();
    const adminId = randomUUID();
    const token = `tb_${randomBytes(32).toString('base64url')}`;
    await t.sql('insert into tenant (id, name) values ($1, $2)', [tenantId, `other-${tenantId.slice(0, 8)}`]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'admin@other.test', 'Other admin', 'ADMIN')`, [adminId, tenantId]);
    await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'test', $3)`, [randomUUID(), adminId, hashApiToken(token)]);

    const ours = await createEndpoint('/hook/ours', ['APPROVAL_REQUESTED']);
    answers.set('/hook/theirs', [204]);
    const theirs = ok(await t.gql(CREATE, { url: url('/hook/theirs'), types: ['APPROVAL_REQUESTED'] }, token)).createWebhookEndpoint.endpoint;
    expect(ok(await t.gql(LIST, {}, token)).webhookEndpoints.map((e: any) => e.id)).toEqual([theirs.id]);
    expect((await t.gql(LOG, { id: ours.id }, token)).data?.node).toBeNull();
    const refused = [
      await t.gql(ROTATE, { id: ours.id, grace: 0 }, token),
      await t.gql(TEST_EVENT, { id: ours.id }, token),
      await t.gql(UPDATE, { id: ours.id, url: url('/hook/theirs') }, token),
      await t.gql(DELETE, { id: ours.id }, token),
    ];
    expect(refused.map(codeOf)).toEqual(['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND']);

    ok(await t.gql(CREATE_APPROVAL, { title: 'only for this tenant' }, member.token));
    await settled(ours.id, 1);
    expect(await t.sql('select id from webhook_delivery where endpoint_id = $1', [rawId(theirs.id)])).toEqual([]);
    expect(at('/hook/theirs')).toEqual([]);
  });
});

describe('docs/WEBHOOKS.md', () => {
  let sample: ChildProcess | null = null;
  afterAll(() => {
    sample?.kill();
  });

  it("the receiver sample verifies Taskbay's messages, handles each once, and refuses a forged one", async () => {
    // The page shows this file (docs-samples.test.ts checks the block equals it).
    const code = sampleText('webhook-receiver.mjs');
    // Registered first (its secret starts the sample), then pointed at the port the sample took.
    const ep = await createEndpoint('/hook/placeholder', ['APPROVAL_REQUESTED']);
    const child = spawn(process.execPath, ['--input-type=module', '-e', code!], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: '0', TASKBAY_WEBHOOK_SECRET: ep.secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    sample = child;
    const lines: string[] = [];
    let stderr = '';
    child.stdout!.on('data', (b: Buffer) => lines.push(...b.toString('utf8').split('\n').filter(Boolean)));
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    const port = await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`the sample exited: ${stderr}`);
      return /^listening on (\d+)$/.exec(lines[0] ?? '')?.[1];
    });
    ok(await t.gql(UPDATE, { id: ep.id, url: `http://127.0.0.1:${port}/` }));

    ok(await t.gql(TEST_EVENT, { id: ep.id }));
    const opened = ok(await t.gql(CREATE_APPROVAL, { title: 'for the sample' }, member.token)).createApproval;
    const log = await settled(ep.id, 2);
    expect(log.map((d) => [d.status, d.lastStatusCode])).toEqual([
      ['DELIVERED', 204],
      ['DELIVERED', 204],
    ]);
    expect(lines.slice(1).sort()).toEqual([`approval.requested ${PUBLIC_URL}/approvals/${encodeURIComponent(opened.id)}`, 'webhook.test '].sort());

    // A forged message (signed with another secret) and a replay of a real one with a changed body.
    const real = log.find((d) => d.type === 'approval.requested')!;
    const body = JSON.stringify(real.payload);
    const forged = new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`);
    const now = new Date();
    const post = (headers: Record<string, string>, b: string) =>
      fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });
    const forgedAnswer = await post(
      { 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': forged.sign('msg_forged', now, body) },
      body,
    );
    expect(forgedAnswer.status).toBe(400);
    const genuine = new Webhook(ep.secret);
    const tampered = await post(
      {
        'webhook-id': real.webhookId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': genuine.sign(real.webhookId, now, body),
      },
      body.replace('for the sample', 'something else'),
    );
    expect(tampered.status).toBe(400);
    // Still two lines: a repeat of a handled webhook-id is acknowledged and not handled again.
    const repeat = await post(
      {
        'webhook-id': real.webhookId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': genuine.sign(real.webhookId, now, body),
      },
      body,
    );
    expect(repeat.status).toBe(204);
    expect(lines).toHaveLength(3);
  });
});
