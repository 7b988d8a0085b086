import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint } from '../../../src/audit/chain.js';
import { AuditEventRefused, appendEvents, eventHash, rowToEvent, stream, SYSTEM, type AuditEventInput } from '../../../src/audit/log.js';
import { runVerification } from '../../../src/audit/verification.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { taskEventIn } from '../../support/audit-events.js';
import { acknowledgeAuditFailure, createMember, eventually, OPS, startTestInstance, type TestInstance, rawId } from '../../support/harness.js';

// docs/ARCHITECTURE.md, "Rules that must hold":
//   "The audit log is one append-only table (database triggers refuse UPDATE and DELETE),
//    hash-chained per stream: every event belongs to a stream (`approval:<id>`, `task:<id>`,
//    `tenant:<id>` for admin events) and stores the previous hash of that stream [...]
//    Periodic checkpoints hash the stream heads that changed since the last one, so a removed
//    stream is found too. `auditChain` verifies streams and checkpoints and names the first
//    broken event."
// docs/ARCHITECTURE.md, "Stack": "No event is published that was not committed."

let t: TestInstance;
let agent: FixtureAgent;
let tenantId: string;
let adminId: string;

/** The loop of the first test, reused by the tampering tests. */
const loop = { agentId: '', taskId: '', approvalId: '' };

async function streamRows(name: string) {
  return t.sql(`select * from audit_event where stream = $1 order by seq`, [name]);
}

async function chain() {
  const r = await t.gql(OPS.auditChain);
  expect(r.errors).toBeUndefined();
  return r.data.auditChain as { ok: boolean; events: number; firstBrokenSeq: number | null; reason: string | null };
}

/**
 * What finds a rewrite of events verified before (the checkpoint verifies what it signs, and
 * auditChain continues from there): a full verification, then auditChain.
 */
async function verifiedNow() {
  await runVerification(t.instance.orm.em.fork(), tenantId, { full: true });
  return chain();
}

/** Runs statements as the database owner with the append-only triggers off, in one transaction. */
async function tamper(statements: { text: string; params?: unknown[] }[]) {
  const c = new pg.Client({ connectionString: t.databaseUrl });
  await c.connect();
  try {
    await c.query('begin');
    await c.query('alter table audit_event disable trigger audit_event_no_update');
    for (const s of statements) await c.query(s.text, s.params as unknown[]);
    await c.query('alter table audit_event enable trigger audit_event_no_update');
    await c.query('commit');
  } catch (e) {
    await c.query('rollback').catch(() => {});
    throw e;
  } finally {
    await c.end();
  }
}

/** Puts deleted rows back exactly as they were (seq, hash, signature and all). */
function reinsert(rows: Record<string, any>[]) {
  return rows.map((r) => ({
    text: `insert into audit_event (seq, id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash, sig, key_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13)`,
    params: [r.seq, r.id, r.tenant_id, r.stream, r.type, r.actor_type, r.actor_id, r.at, JSON.stringify(r.data), r.prev_hash, r.hash, r.sig, r.key_id],
  }));
}

function expectLinked(rows: Record<string, any>[]) {
  expect(rows.length).toBeGreaterThan(0);
  expect(rows[0]!.prev_hash).toBeNull();
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
    expect(eventHash(rowToEvent(rows[i]!))).toBe(rows[i]!.hash);
  }
}

beforeAll(async () => {
  agent = await startFixtureAgent();
  // Checkpoints are written by the tests themselves: the scheduled one (and the worker's
  // verification after it, which auditChain would then answer from) never comes during the file.
  t = await startTestInstance({ env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } });
  const [admin] = await t.sql(`select id, tenant_id from app_user where email = 'admin@localhost'`);
  tenantId = admin.tenant_id;
  adminId = admin.id;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('audit log: hash-chained per stream', () => {
  it('every state change of a full loop (register, startTask, approve, delivery) writes events in its stream, each linked to the previous event of that stream', async () => {
    const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
    expect(reg.errors).toBeUndefined();
    loop.agentId = rawId(reg.data.registerAgent.id);

    const st = await t.gql(OPS.startTask, { agentId: reg.data.registerAgent.id, text: 'approve' });
    expect(st.errors).toBeUndefined();
    loop.taskId = rawId(st.data.startTask.id);

    const list = await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest status } } } }`, {
      t: st.data.startTask.id,
    });
    const a = list.data.approvals.edges[0].node;
    expect(a.status).toBe('PENDING');
    loop.approvalId = rawId(a.id);

    const d = await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest });
    expect(d.errors).toBeUndefined();
    await eventually(async () => {
      const r = await t.gql(`query($id: ID!) { approval(id: $id) { execution { status } } }`, { id: a.id });
      return r.data?.approval?.execution?.status === 'DELIVERED';
    });

    const tenantRows = await streamRows(stream.tenant(tenantId));
    const taskRows = await streamRows(stream.task(loop.taskId));
    const approvalRows = await streamRows(stream.approval(loop.approvalId));

    // Admin events in the tenant stream: the bootstrap admin, then the registration.
    expect(tenantRows.map((r) => r.type)).toEqual(['user.created', 'agent.registered']);
    expect(tenantRows[1]).toMatchObject({ actor_type: 'user', actor_id: adminId, tenant_id: tenantId });
    expect(tenantRows[1]!.data).toMatchObject({ agentId: loop.agentId, snapshot: 1 });
    // The task stream: the observation of startTask, then the observation of the delivery.
    expect(taskRows.map((r) => r.type)).toEqual(['task.observed', 'task.observed']);
    expect(taskRows.map((r) => r.data.state)).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);
    // The approval stream: opened by the agent, decided by the admin, queued and delivered by the system.
    expect(approvalRows.map((r) => [r.type, r.actor_type])).toEqual([
      ['approval.requested', 'agent'],
      ['approval.decided', 'user'],
      ['delivery.queued', 'user'],
      ['delivery.delivered', 'system'],
    ]);
    expect(approvalRows[1]!.actor_id).toBe(adminId);
    expect(approvalRows[1]!.data).toMatchObject({ outcome: 'APPROVE', revision: 1, digest: a.digest });

    // Each stream starts at null and links to its own predecessor; every hash recomputes.
    for (const rows of [tenantRows, taskRows, approvalRows]) expectLinked(rows);
    // Streams are independent chains: interleaved writes do not link across streams.
    expect(taskRows[0]!.prev_hash).toBeNull();
    expect(approvalRows[0]!.prev_hash).toBeNull();

    const [{ n }] = await t.sql(`select count(*)::int as n from audit_event where tenant_id = $1`, [tenantId]);
    expect(n).toBe(8);
    expect(await chain()).toEqual({ ok: true, events: 8, firstBrokenSeq: null, reason: null });

    // The approval exposes its own stream (same events, same hashes).
    const ev = await t.gql(`query($id: ID!) { approval(id: $id) { events { seq type hash prevHash } } }`, { id: a.id });
    expect(ev.data.approval.events).toEqual(approvalRows.map((r) => ({ seq: Number(r.seq), type: r.type, hash: r.hash, prevHash: r.prev_hash })));
  });

  it('the database refuses UPDATE, DELETE and TRUNCATE on audit_event and audit_checkpoint (append-only triggers)', async () => {
    await writeCheckpoint(t.instance.orm.em.fork());
    const [{ events }] = await t.sql(`select count(*)::int as events from audit_event`);
    const [{ checkpoints }] = await t.sql(`select count(*)::int as checkpoints from audit_checkpoint`);
    expect(events).toBeGreaterThan(0);
    expect(checkpoints).toBeGreaterThan(0);

    await expect(t.sql(`update audit_event set type = 'forged'`)).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(t.sql(`update audit_event set data = '{}'::jsonb where seq = (select max(seq) from audit_event)`)).rejects.toThrow(/append-only/);
    await expect(t.sql(`delete from audit_event where seq = (select min(seq) from audit_event)`)).rejects.toThrow(/append-only: DELETE refused/);
    await expect(t.sql(`truncate audit_event`)).rejects.toThrow(/append-only: TRUNCATE refused/);

    await expect(t.sql(`update audit_checkpoint set heads = '{}'::jsonb`)).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(t.sql(`delete from audit_checkpoint`)).rejects.toThrow(/append-only: DELETE refused/);
    await expect(t.sql(`truncate audit_checkpoint`)).rejects.toThrow(/append-only: TRUNCATE refused/);

    const [after] = await t.sql(`select (select count(*)::int from audit_event) as events, (select count(*)::int from audit_checkpoint) as checkpoints`);
    expect(after).toEqual({ events, checkpoints });
    expect((await chain()).ok).toBe(true);
  });

  it('a checkpoint records the heads of the streams that changed since the last one, and only those', async () => {
    // Checkpoints are per tenant and signed (audit/rewrite.test.ts): a head is { seq, hash } under
    // the stream's name, and writeCheckpoint returns the checkpoints it wrote (none: []).
    const em = () => t.instance.orm.em.fork();
    await writeCheckpoint(em()); // settles whatever changed before
    expect(await writeCheckpoint(em())).toEqual([]); // nothing new: no checkpoint

    await createMember(t); // user.created + token.created in the tenant stream
    const written = await writeCheckpoint(em());
    expect(written).toEqual([{ seq: expect.any(Number), tenantId, streams: 1 }]);
    const [cp] = await t.sql(`select * from audit_checkpoint where seq = $1`, [written[0]!.seq]);
    const tenantRows = await streamRows(stream.tenant(tenantId));
    expect(cp.tenant_id).toBe(tenantId);
    expect(cp.heads).toEqual({ [stream.tenant(tenantId)]: { seq: Number(tenantRows.at(-1)!.seq), hash: tenantRows.at(-1)!.hash } });
    // Checkpoints chain too (within the tenant).
    const [prev] = await t.sql(`select hash from audit_checkpoint where seq < $1 and tenant_id = $2 order by seq desc limit 1`, [written[0]!.seq, tenantId]);
    expect(cp.prev_hash).toBe(prev.hash);

    expect(await writeCheckpoint(em())).toEqual([]);
    expect((await chain()).ok).toBe(true);
  });
});

describe('audit log: tampering is found', () => {
  it('a changed event breaks the chain, and firstBrokenSeq names exactly that event', async () => {
    const rows = await streamRows(stream.approval(loop.approvalId));
    const decided = rows.find((r) => r.type === 'approval.decided')!;
    await tamper([{ text: `update audit_event set data = data || '{"comment":"approved by someone else"}'::jsonb where seq = $1`, params: [decided.seq] }]);
    const broken = await verifiedNow();
    expect(broken.ok).toBe(false);
    expect(broken.firstBrokenSeq).toBe(Number(decided.seq));
    expect(broken.reason).toMatch(/does not match its hash/);

    // Put the original back: the chain verifies again (the check is exact, not a heuristic), and
    // the failure stands until an admin acknowledges it.
    await tamper([{ text: `update audit_event set data = $2::jsonb where seq = $1`, params: [decided.seq, JSON.stringify(decided.data)] }]);
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);

    // A changed actor is found as well (everything describing the event is hashed).
    await tamper([{ text: `update audit_event set actor_id = $2 where seq = $1`, params: [decided.seq, randomUUID()] }]);
    expect(await verifiedNow()).toMatchObject({ ok: false, firstBrokenSeq: Number(decided.seq) });
    await tamper([{ text: `update audit_event set actor_id = $2 where seq = $1`, params: [decided.seq, decided.actor_id] }]);
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });

  it('a broken link (changed prev_hash, or a removed event in the middle) names the event that no longer links', async () => {
    const rows = await streamRows(stream.approval(loop.approvalId));
    const [, decided, queued] = rows;

    await tamper([{ text: `update audit_event set prev_hash = $2 where seq = $1`, params: [queued!.seq, 'ab'.repeat(32)] }]);
    let broken = await verifiedNow();
    expect(broken).toMatchObject({ ok: false, firstBrokenSeq: Number(queued!.seq) });
    expect(broken.reason).toMatch(/does not link/);
    await tamper([{ text: `update audit_event set prev_hash = $2 where seq = $1`, params: [queued!.seq, queued!.prev_hash] }]);
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);

    // Removing the decision: the remaining events verify on their own, but the next one no longer links.
    await tamper([{ text: `delete from audit_event where seq = $1`, params: [decided!.seq] }]);
    await verifiedNow();
    const gap = (await t.gql(`{ auditChain { ok events signedEvents legacyUnsignedEvents firstBrokenSeq firstBrokenStream reason } }`)).data.auditChain;
    expect(gap).toMatchObject({ ok: false, firstBrokenSeq: Number(queued!.seq), firstBrokenStream: stream.approval(loop.approvalId) });
    expect(gap.reason).toMatch(/does not link/);
    // Only that event is reported: the request before the gap, the delivery after it and every
    // other event still verify (all signed here, none legacy).
    expect(gap.legacyUnsignedEvents).toBe(0);
    expect(gap.signedEvents).toBe(gap.events - 1);
    expect(rows.map((r) => r.type)).toEqual(['approval.requested', 'approval.decided', 'delivery.queued', 'delivery.delivered']);
    await tamper(reinsert([decided!]));
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });

  it('a whole stream removed (or its tail cut) is found through the checkpoints, naming the stream', async () => {
    // A second request: its own task and approval streams.
    const st = await t.gql(OPS.startTask, { agentId: Buffer.from(`Agent:${loop.agentId}`).toString('base64'), text: 'approve' });
    expect(st.errors).toBeUndefined();
    const [ap] = await t.sql(`select id from approval where task_id = $1`, [rawId(st.data.startTask.id)]);
    const name = stream.approval(ap.id);
    const victim = await streamRows(name);
    expect(victim.map((r) => r.type)).toEqual(['approval.requested']);

    // Without a checkpoint naming it, a deleted stream would leave no trace in the other streams:
    // the checkpoint is what makes it visible.
    const cp = await writeCheckpoint(t.instance.orm.em.fork());
    expect(cp).toHaveLength(1);

    await tamper([{ text: `delete from audit_event where stream = $1`, params: [name] }]);
    const broken = await verifiedNow();
    expect(broken.ok).toBe(false);
    // Every remaining event verifies, but the checkpoint names the missing stream and (its heads
    // now carry the seq) the missing head event.
    expect(broken.firstBrokenSeq).toBe(Number(victim[0]!.seq));
    expect(broken.reason).toContain(name);
    expect(broken.reason).toMatch(/lost events recorded by checkpoint/);
    await tamper(reinsert(victim));
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);

    // Cutting the tail of a checkpointed stream: the rest still links, the checkpoint head is gone.
    const first = await streamRows(stream.approval(loop.approvalId));
    const tail = first.at(-1)!;
    expect(tail.type).toBe('delivery.delivered');
    await tamper([{ text: `delete from audit_event where seq = $1`, params: [tail.seq] }]);
    const cut = await verifiedNow();
    expect(cut.ok).toBe(false);
    expect(cut.reason).toContain(stream.approval(loop.approvalId));
    await tamper(reinsert([tail]));
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });
});

describe('audit log: only what the catalogue declares is written', () => {
  const refused = async (events: AuditEventInput[], reason: RegExp) => {
    const streams = [...new Set(events.map((e) => e.stream))];
    // The transaction commits: what was refused must not have been written, not merely rolled back.
    await t.instance.orm.em.fork().transactional(async (tem) => {
      const error = await appendEvents(tem, events).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AuditEventRefused);
      expect((error as Error).message).toMatch(reason);
    });
    for (const s of streams) expect(await streamRows(s)).toEqual([]);
  };
  const undeclared = (e: Record<string, unknown>) => e as unknown as AuditEventInput;

  it('an undeclared type is refused before anything is written, the declared events before it too', async () => {
    const task = stream.task(randomUUID());
    const tenant = stream.tenant(randomUUID());
    await refused(
      [taskEventIn(tenantId, task), undeclared({ tenantId, stream: tenant, type: 'user.renamed', actor: SYSTEM, data: {} })],
      /"user\.renamed" is not declared/,
    );
    // Seed 002 admits NOOP and REVERTED (the database's CHECK) but nothing writes them.
    await refused([undeclared({ tenantId, stream: stream.approval(randomUUID()), type: 'NOOP', actor: SYSTEM, data: {} })], /"NOOP" is not declared/);
  });

  it('a declared type is refused with a payload its declaration does not admit, or in a stream of another kind', async () => {
    const good = taskEventIn(tenantId, stream.task(randomUUID()));
    await refused([undeclared({ ...good, data: { ...good.data, extra: 1 } })], /task\.observed: data has an undeclared field "extra"/);
    const { state: _, ...stateless } = good.data;
    await refused([undeclared({ ...good, data: stateless })], /task\.observed: data lacks state/);
    await refused(
      [undeclared({ ...good, data: { ...good.data, messages: [{ messageId: 'm', stepSeq: '1' }] } })],
      /data\.messages\[0\]\.stepSeq is not an integer/,
    );
    await refused([{ ...good, stream: stream.approval(randomUUID()) }], /task\.observed belongs to a task stream/);
    // What is checked is what would be stored: an undefined field is absent.
    await refused([undeclared({ ...good, data: { ...good.data, state: undefined } })], /lacks state/);
  });
});

describe('audit log: concurrent writers and commit-only publication', () => {
  it('20 parallel appends to 4 streams keep every stream a single valid chain (the database forbids a fork)', async () => {
    const before = (await chain()).events;
    const streams = Array.from({ length: 4 }, () => stream.task(randomUUID()));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.instance.orm.em.fork().transactional((tem) => appendEvents(tem, [taskEventIn(tenantId, streams[i % 4]!)]))),
    );
    for (const s of streams) {
      const rows = await streamRows(s);
      expect(rows).toHaveLength(5);
      expectLinked(rows);
    }
    const after = await chain();
    expect(after).toMatchObject({ ok: true, events: before + 20 });

    // The unique (stream, prev_hash) index refuses a second successor of an event, and a second first event.
    const rows = await streamRows(streams[0]!);
    const insert = `insert into audit_event (id, tenant_id, stream, type, actor_type, at, data, prev_hash, hash)
                    values ($1, $2, $3, 'test.fork', 'system', now(), '{}'::jsonb, $4, $5)`;
    await expect(t.sql(insert, [randomUUID(), tenantId, streams[0], rows[0]!.hash, 'f0'.repeat(32)])).rejects.toThrow(/audit_event_chain/);
    await expect(t.sql(insert, [randomUUID(), tenantId, streams[0], null, 'f1'.repeat(32)])).rejects.toThrow(/audit_event_chain/);
  });

  it('events are published only after commit: a rolled-back append reaches no subscriber, a committed one does', async () => {
    const feed = t.instance.pubsub.subscribe('approval');
    const got: { approvalId: string; type: string }[] = [];
    const consuming = (async () => {
      for await (const e of feed) got.push(e);
    })();
    try {
      const ghost = randomUUID();
      const event = (id: string): AuditEventInput => ({
        tenantId,
        stream: stream.approval(id),
        type: 'approval.requested',
        actor: SYSTEM,
        data: {
          approvalId: id,
          agentId: null,
          taskId: null,
          source: 'USER',
          key: null,
          title: 'a request no row backs',
          risk: 'LOW',
          revision: 1,
          digest: '0'.repeat(64),
          action: { kind: 'send_message', text: 'x' },
          expiresAt: new Date().toISOString(),
          policy: {},
        },
      });
      let appendedSeq = 0;
      await expect(
        t.instance.orm.em.fork().transactional(async (tem) => {
          const [row] = await appendEvents(tem, [event(ghost)]);
          appendedSeq = row!.seq; // written and NOTIFY sent inside the transaction...
          throw new Error('rolled back on purpose');
        }),
      ).rejects.toThrow('rolled back on purpose');
      expect(appendedSeq).toBeGreaterThan(0);

      const real = randomUUID();
      await t.instance.orm.em.fork().transactional((tem) => appendEvents(tem, [event(real)]));
      // Events are published in commit order: once the later, committed event is out, the
      // rolled-back one would have been published before it...
      await eventually(async () => got.some((e) => e.approvalId === real), 5000, 20);
      // ...but nothing of it is stored or published.
      expect(got.filter((e) => e.approvalId === ghost)).toEqual([]);
      expect(got.filter((e) => e.approvalId === real)).toHaveLength(1);
      expect(await streamRows(stream.approval(ghost))).toEqual([]);
      expect((await chain()).ok).toBe(true);
    } finally {
      await feed.return?.(undefined);
      await consuming;
    }
  });
});
