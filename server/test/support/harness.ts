import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startInstance, type TaskbayInstance } from '../../src/app.js';
import { appendEvents, stream, SYSTEM } from '../../src/audit/log.js';
import { runVerification } from '../../src/audit/verification.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { NetworkOverrides } from '../../src/deps.js';
import { withDatabase, withLogin } from './db-url.js';

// Test harness: a fresh database per test file (cloned from the migrated template), real
// Taskbay instances on it, GraphQL over yoga.fetch (in-process) or real HTTP/WebSocket ports.
// Taskbay runs as the least-privileged app role (migrating as the owner role); the test's own
// SQL runs as the superuser.

/**
 * The audit signing key of this test process (TASKBAY_AUDIT_KEY, base64 seed): instances on one
 * database share it, and no key file is written anywhere.
 */
export const TEST_AUDIT_KEY = randomBytes(32).toString('base64');

/** A fresh folder for the audit pins of an instance a test starts without the harness (audit/pin.ts). */
export function testPinDir(): string {
  return mkdtempSync(join(tmpdir(), 'taskbay-test-pins-'));
}

/** The approval signing key of this test process (TASKBAY_APPROVAL_KEY, base64 seed), for the same reasons. */
export const TEST_APPROVAL_KEY = randomBytes(32).toString('base64');

/**
 * A fresh database cloned from the migrated template (or, with `empty`, one nothing has migrated
 * yet), owned by the owner role; returns its superuser URL.
 */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('pgTemplate');
  // The template's owner pid prefix lets global teardown find leftovers.
  const name = `tb_t_${template.split('_').pop()}_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`create database ${name} template ${opts.empty ? 'template0' : template} owner ${inject('pgOwner').user}`);
  } finally {
    await c.end();
  }
  return withDatabase(adminUrl, name);
}

/** The URLs Taskbay uses for a test database: the app role (runtime) and the owner (migrations). */
export function roleUrls(databaseUrl: string): { appUrl: string; ownerUrl: string } {
  return { appUrl: withLogin(databaseUrl, inject('pgApp')), ownerUrl: withLogin(databaseUrl, inject('pgOwner')) };
}

export interface GqlResult<T = any> {
  data?: T;
  errors?: { message: string; extensions?: { code?: string; [k: string]: unknown }; path?: (string | number)[] }[];
}

export interface TestInstance {
  instance: TaskbayInstance;
  /** The test database as the superuser (assertions, tampering). */
  databaseUrl: string;
  /** The same database as the app role Taskbay runs as. */
  appUrl: string;
  adminToken: string;
  config: Config;
  /** In-process GraphQL (yoga.fetch). */
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GqlResult<T>>;
  /** A graphql-ws client on the real port. */
  ws(token?: string | null): Client;
  /** Direct SQL on the test database (assertions, tampering). */
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

export interface InstanceOptions {
  /** The database (superuser URL) to run on; a fresh one when absent. */
  databaseUrl?: string;
  env?: Record<string, string>;
  worker?: boolean;
  adminToken?: string;
  network?: NetworkOverrides;
}

export async function startTestInstance(opts: InstanceOptions = {}): Promise<TestInstance> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const adminToken = opts.adminToken ?? `tb_admin_${randomUUID()}`;
  const config = loadConfig({
    // Outside the database, per database: instances on one database share it, as they would share a data directory.
    TASKBAY_AUDIT_PIN_DIR: join(tmpdir(), 'taskbay-test-pins', new URL(databaseUrl).pathname.slice(1)),
    PORT: '0',
    HOST: '127.0.0.1',
    TASKBAY_ADMIN_TOKEN: adminToken,
    TASKBAY_CHECKPOINT_INTERVAL: '60',
    TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY,
    TASKBAY_APPROVAL_KEY: TEST_APPROVAL_KEY,
    ...opts.env,
  });
  const { appUrl, ownerUrl } = roleUrls(databaseUrl);
  const instance = await startInstance(config, appUrl, { worker: opts.worker, network: opts.network, migrationDatabaseUrl: ownerUrl });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const clients: Client[] = [];
  return {
    instance,
    databaseUrl,
    appUrl,
    adminToken,
    config,
    async gql(query, variables, token = adminToken) {
      const res = await instance.yoga.fetch('http://taskbay.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as GqlResult;
    },
    ws(token = adminToken) {
      const client = createClient({
        url: `ws://127.0.0.1:${instance.port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: token ? { authorization: `Bearer ${token}` } : {},
        retryAttempts: 0,
        lazy: false,
      });
      clients.push(client);
      return client;
    },
    async sql(text, params) {
      return (await pool.query(text, params as unknown[])).rows;
    },
    async stop() {
      for (const c of clients) await c.dispose();
      await instance.stop();
      await pool.end();
    },
  };
}

/** What an instance joining a deployment is started with: all but the database and the admin token, which it shares. */
export type ReplicaOptions = Omit<InstanceOptions, 'databaseUrl' | 'adminToken'>;

/**
 * Instances of one deployment, one per options: started together on one new database with one
 * admin token, as replicas start (migrations, bootstrap, workers and listeners at once).
 */
export async function startReplicas(...options: ReplicaOptions[]): Promise<TestInstance[]> {
  const databaseUrl = await createTestDatabase();
  const adminToken = `tb_admin_${randomUUID()}`;
  return Promise.all(options.map((o) => startTestInstance({ ...o, databaseUrl, adminToken })));
}

/** Another instance of `of`'s deployment (its database and admin token), started with these options. */
export function startReplicaOf(of: TestInstance, options: ReplicaOptions = {}): Promise<TestInstance> {
  return startTestInstance({ ...options, databaseUrl: of.databaseUrl, adminToken: of.adminToken });
}

/** Collects the events of one subscription; `next()` waits for the next one. */
export function subscribe<T = any>(client: Client, query: string, variables?: Record<string, unknown>) {
  const queue: GqlResult<T>[] = [];
  const waiters: ((v: GqlResult<T>) => void)[] = [];
  let ready!: () => void;
  const dispose = client.subscribe<T>(
    { query, variables },
    {
      next: (v) => {
        const w = waiters.shift();
        if (w) w(v as GqlResult<T>);
        else queue.push(v as GqlResult<T>);
      },
      error: (e) => {
        const err = { errors: [{ message: String((e as Error)?.message ?? JSON.stringify(e)) }] };
        const w = waiters.shift();
        if (w) w(err);
        else queue.push(err);
      },
      complete: () => {},
    },
  );
  void ready;
  return {
    received: queue,
    next(timeoutMs = 10_000): Promise<GqlResult<T>> {
      const v = queue.shift();
      if (v) return Promise.resolve(v);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no subscription event within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((x) => {
          clearTimeout(t);
          resolve(x);
        });
      });
    },
    dispose,
  };
}

/** Polls until fn returns a truthy value (for effects of the job worker). */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 15_000, stepMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

/** Common operations. */
export const OPS = {
  register: `mutation($url: String!) { registerAgent(input: { cardUrl: $url }) { id name extensions } }`,
  startTask: `mutation($agentId: ID!, $text: String, $data: JSON, $skillId: String) {
    startTask(input: { agentId: $agentId, text: $text, data: $data, skillId: $skillId }) { id state remoteTaskId } }`,
  approvalFields: `id key source status title summary risk revision digest action stepSeq sourceMessageId expiresAt
    requester { id } assignee { id } agent { id } task { id state }
    execution { status attempts messageId lastError observedTaskState observedAt }
    decisions { id outcome revision digest comment reviewer { id } delegatedTo { id } }
    revisions { number digest action createdBy { type id } }`,
  approve: `mutation($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
    approve(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) { id outcome revision digest } }`,
  reject: `mutation($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
    reject(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) { id outcome } }`,
  requestChanges: `mutation($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
    requestChanges(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) { id outcome } }`,
  editAndApprove: `mutation($id: ID!, $revision: Int!, $digest: String!, $action: JSON!) {
    editAndApprove(input: { approvalId: $id, revision: $revision, digest: $digest, action: $action }) { id outcome revision digest } }`,
  delegate: `mutation($id: ID!, $revision: Int!, $digest: String!, $to: ID!) {
    delegate(input: { approvalId: $id, revision: $revision, digest: $digest, toUserId: $to }) { id outcome delegatedTo { id } } }`,
  createUser: `mutation($email: String!, $name: String!, $role: Role!, $password: String) {
    createUser(input: { email: $email, name: $name, role: $role, password: $password }) { id email role } }`,
  createToken: `mutation($userId: ID, $label: String!) { createApiToken(input: { userId: $userId, label: $label }) { token user { id } } }`,
  grant: `mutation($userId: ID!, $agentId: ID!, $permission: Permission!, $skillId: String) {
    grantAgentAccess(input: { userId: $userId, agentId: $agentId, permission: $permission, skillId: $skillId }) { id permission skillId } }`,
  auditChain: `{ auditChain { ok events firstBrokenSeq reason } }`,
};

export interface HttpAnswer {
  status: number;
  body: GqlResult;
}

/** GraphQL over an instance's real HTTP port (t.gql goes through yoga.fetch in process). */
export async function gqlOverHttp(inst: TestInstance, query: string, variables: Record<string, unknown>, token = inst.adminToken): Promise<HttpAnswer> {
  const res = await fetch(`${inst.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  let body: GqlResult;
  try {
    body = JSON.parse(text) as GqlResult;
  } catch {
    body = { errors: [{ message: `not JSON (HTTP ${res.status}): ${text.slice(0, 200)}` }] };
  }
  return { status: res.status, body };
}

export function codeOf(r: GqlResult): string | undefined {
  return r.errors?.[0]?.extensions?.code;
}

/** The data of an answer that must have no errors (a test fails on them, showing them). */
export function ok<T = any>(r: GqlResult<T>): T {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data as T;
}

/** The raw id (a uuid, as the database and the audit streams hold it) behind an opaque (Relay) global id. */
export function rawId(globalId: string): string {
  const s = Buffer.from(globalId, 'base64').toString('utf8');
  return s.slice(s.indexOf(':') + 1);
}

/** Creates a user of the admin's tenant with an API token. */
export async function createMember(t: TestInstance, opts: { role?: 'ADMIN' | 'MEMBER'; email?: string } = {}) {
  const email = opts.email ?? `m-${randomBytes(4).toString('hex')}@example.test`;
  const u = await t.gql(OPS.createUser, { email, name: email, role: opts.role ?? 'MEMBER' });
  if (u.errors) throw new Error(JSON.stringify(u.errors));
  const tok = await t.gql(OPS.createToken, { userId: u.data.createUser.id, label: 'test' });
  if (tok.errors) throw new Error(JSON.stringify(tok.errors));
  return { id: u.data.createUser.id as string, email, token: tok.data.createApiToken.token as string };
}

/**
 * Registers each card URL once per test instance and returns the agent's id. Takes a getter
 * because test files start their instance in beforeAll.
 */
export function agentRegistry(instance: () => TestInstance): (cardUrl: string) => Promise<string> {
  const ids = new Map<string, string>();
  return async (cardUrl) => {
    const known = ids.get(cardUrl);
    if (known) return known;
    const r = await instance().gql(OPS.register, { url: cardUrl });
    if (r.errors) throw new Error(`registerAgent ${cardUrl}: ${JSON.stringify(r.errors)}`);
    ids.set(cardUrl, r.data.registerAgent.id);
    return r.data.registerAgent.id as string;
  };
}

// ---------------------------------------------------------------------------------------------
// Probes. graphql-ws acknowledges no subscription, so a test cannot know when the server has
// registered one, and a fixed sleep only guesses. A probe is an event the subscription must see,
// committed by the test: once one arrives, the subscription is live. Events are published in
// commit order per instance, and each subscription filters and resolves them one after another,
// so a probe that arrives also proves that everything committed before it has been delivered or
// dropped: a check that something did NOT arrive comes after a probe committed after it.

/** Commits one probe and returns a check that it has arrived. */
export type Probe = () => Promise<() => boolean>;

/**
 * Commits probes until one arrives (a probe committed before the server registered the
 * subscription never does): each gets `waitMs`, at most `rounds` of them.
 */
export async function untilProbeArrives(probe: Probe, opts: { rounds?: number; waitMs?: number } = {}): Promise<void> {
  const rounds = opts.rounds ?? 10;
  const waitMs = opts.waitMs ?? 1000;
  for (let round = 0; round < rounds; round++) {
    const arrived = await probe();
    if (
      await eventually(async () => arrived(), waitMs, 20).then(
        () => true,
        () => false,
      )
    )
      return;
  }
  throw new Error(`no probe arrived in ${rounds} rounds of ${waitMs} ms`);
}

/**
 * Probe requests: a person's request (createApproval) through an instance, seen by its requester
 * and the tenant's admins, and (naming an agent or task) by whoever may view that agent. `ids`
 * holds every probe opened, to tell probe events from the events under test.
 */
export function probeRequests(t: () => TestInstance) {
  const ids = new Set<string>();
  const CREATE = `mutation($agentId: ID, $taskId: ID, $title: String!) {
    createApproval(input: { agentId: $agentId, taskId: $taskId, title: $title, action: { kind: "send_message", text: "probe" } }) { id } }`;
  return {
    ids,
    /** Opens one probe request and returns its global id. */
    async open(opts: { inst?: TestInstance; token?: string; agentId?: string; taskId?: string } = {}): Promise<string> {
      const inst = opts.inst ?? t();
      const r = await inst.gql(CREATE, { agentId: opts.agentId, taskId: opts.taskId, title: `probe ${ids.size + 1}` }, opts.token);
      if (r.errors) throw new Error(`probe request: ${JSON.stringify(r.errors)}`);
      const id = r.data.createApproval.id as string;
      ids.add(id);
      return id;
    },
  };
}

/**
 * A probe for a subscription to one approval (approvalChanged(approvalId)), which no probe
 * request reaches: an event in that approval's stream, appended through the product's writer
 * (chained, signed, notified and published like any other event). The writer takes only events
 * the catalogue declares: an `approval.revised` that restates the approval's current revision
 * (its number, digest and action), which no webhook, metric or other subscription reacts to and
 * no test of a delivery's events counts; it changes nothing else.
 */
export async function appendProbeEvent(t: TestInstance, approvalGlobalId: string): Promise<void> {
  const approvalId = rawId(approvalGlobalId);
  const [a] = await t.sql<{ tenant_id: string; agent_id: string | null; task_id: string | null; revision: number; digest: string; action: object }>(
    'select tenant_id, agent_id, task_id, revision, digest, action from approval where id = $1',
    [approvalId],
  );
  if (!a) throw new Error(`no approval ${approvalId}`);
  await t.instance.orm.em.fork().transactional((tem) =>
    appendEvents(tem, [
      {
        tenantId: a.tenant_id,
        stream: stream.approval(approvalId),
        type: 'approval.revised',
        actor: SYSTEM,
        data: { approvalId, agentId: a.agent_id, taskId: a.task_id, decisionId: randomUUID(), revision: a.revision, digest: a.digest, action: a.action },
      },
    ]),
  );
}

/**
 * Waits for an approval's expiry time to pass, by the clock decisions are judged by (this
 * process's; the server runs in it), instead of sleeping for a guessed duration.
 */
export async function untilExpiryPassed(t: TestInstance, approvalId: string): Promise<void> {
  const raw = /^[0-9a-f-]{36}$/i.test(approvalId) ? approvalId : rawId(approvalId);
  const [a] = await t.sql<{ expires_at: Date | null }>('select expires_at from approval where id = $1', [raw]);
  if (!a?.expires_at) throw new Error(`approval ${raw} has no expiry`);
  const at = a.expires_at.getTime();
  await eventually(async () => Date.now() > at, at - Date.now() + 15_000, 20);
}

/** What subscribe() returns, as the helpers below read it. */
type Subscription = { received: GqlResult[]; next(timeoutMs?: number): Promise<GqlResult> };

/** Whether `sub` received an event whose `field` (an approval, or { approval }) has this id. */
export function hasEvent(sub: Subscription, field: string, id: string): boolean {
  return sub.received.some((e) => idOf(e, field) === id);
}

/** The id an event of `field` is about: the object's id, or the id of its `approval`. */
export function idOf(e: GqlResult, field: string): string | undefined {
  const v = e.data?.[field];
  return v?.approval?.id ?? v?.id;
}

/** The next event of `sub` that `skip` does not match (skipped ones, e.g. probes, are dropped). */
export async function nextBesides(sub: Subscription, skip: (e: GqlResult) => boolean, timeoutMs = 10_000): Promise<GqlResult> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const e = await sub.next(Math.max(1, end - Date.now()));
    if (!skip(e)) return e;
  }
}

/**
 * After a test put tampered audit rows back: a full verification (it finds the log sound again),
 * then the admin acknowledges each failure that stays until then (audit/failures.ts; more than one
 * when the test's restore also removed earlier acknowledgements). Returns auditChain's answer
 * after the last acknowledgement.
 */
export async function acknowledgeAuditFailure(t: TestInstance, tenantId: string): Promise<{ ok: boolean; reason: string | null }> {
  await runVerification(t.instance.orm.em.fork(), tenantId, { full: true });
  let standing = (await t.gql(`{ auditChain { ok reason failure { id } } }`)).data.auditChain;
  if (standing.ok || !standing.failure) throw new Error(`no standing audit failure to acknowledge: ${JSON.stringify(standing)}`);
  for (let i = 0; standing.failure; i++) {
    if (i === 10) throw new Error('more than 10 standing audit failures');
    if (!/stays failed until an admin acknowledges it/.test(standing.reason)) throw new Error(`the log does not verify yet: ${standing.reason}`);
    const ack = await t.gql(`mutation($id: ID!) { acknowledgeAuditFailure(failureId: $id, note: "the test put the rows back") { ok reason failure { id } } }`, {
      id: standing.failure.id,
    });
    if (ack.errors) throw new Error(`acknowledgement refused: ${JSON.stringify(ack.errors)}`);
    standing = ack.data.acknowledgeAuditFailure;
  }
  return { ok: standing.ok, reason: standing.reason };
}
