import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendProbeEvent,
  codeOf,
  createMember,
  eventually,
  hasEvent,
  idOf,
  nextBesides,
  OPS,
  probeRequests,
  startTestInstance,
  subscribe,
  untilExpiryPassed,
  untilProbeArrives,
  type TestInstance,
  ok,
} from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// Command approvals for coding-agent hooks (seed 002, "agent-approval-protocol"), end to end
// through the REST surface the hook uses and the GraphQL API reviewers use, with the database
// checked directly. Each test quotes the seed sentence it proves.

let t: TestInstance;
let hook: { id: string; email: string; token: string };

const api = (method: string, path: string, body?: unknown, token: string | null = hook.token) => rest(t, token, method, path, body);

const AGENT = 'a1b2c3d4';
let n = 0;
/** The hook asks (REST); a unique command each time unless given. */
async function ask(command = `rm -rf build-${++n}-${randomBytes(3).toString('hex')}`, extra: Record<string, unknown> = {}) {
  const r = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload(command), ...extra });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

const approve = (a: any, token?: string) => t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }, token);
const reject = (a: any, token?: string) => t.gql(OPS.reject, { id: a.id, revision: a.revision, digest: a.digest }, token);

async function events(a: any): Promise<{ seq: number; type: string; data: any }[]> {
  return t.sql(`select seq::int as seq, type, data from audit_event where stream = $1 order by seq`, [`approval:${a.approval_uuid}`]);
}
const types = async (a: any) => (await events(a)).map((e) => e.type);
const grants = (a: any) => t.sql(`select status from approval_grant where command_approval_id = $1`, [a.approval_uuid]);
const commandStatus = async (a: any) => (await t.sql(`select status from command_approval where id = $1`, [a.approval_uuid]))[0]?.status;

beforeAll(async () => {
  t = await startTestInstance();
  hook = await createMember(t);
});

afterAll(async () => {
  await t?.stop();
});

describe('asking: approval_id, sealed payload, the one inbox', () => {
  it('"`P-{uuid4().hex}` ... a random, unique id" for one command; the request shows in the inbox as source COMMAND with the verbatim command', async () => {
    const command = `git push --force origin main # ${randomBytes(2).toString('hex')}`;
    const a = await ask(command);
    const b = await ask(command);
    for (const x of [a, b]) expect(x.approval_id).toMatch(/^P-[0-9a-f]{32}$/);
    expect(a.approval_id).not.toBe(b.approval_id);
    expect(a.approval_id[14]).toBe('4'); // uuid4 version nibble
    expect(a).toMatchObject({ kind: 'COMMAND', status: 'pending', approval_status: 'PENDING', commands: [command], grant: null });
    expect(a.fingerprint).toBe(sha256(canon(sealedPayload(command))));

    const inbox = ok(
      await t.gql(`{ approvals(status: [PENDING]) { edges { node { id source title risk agent { kind name } task { id } action
        command { approvalId kind agentId commands status payload grant { status } } } } } }`),
    ).approvals.edges.map((e: any) => e.node);
    const row = inbox.find((x: any) => x.id === a.id);
    // The request belongs to the hook's agent record (its grants decide who reviews it), not to a task.
    expect(row).toMatchObject({
      source: 'COMMAND',
      risk: 'HIGH',
      agent: { kind: 'COMMAND_HOOK', name: `Command hook of ${hook.email}` },
      task: null,
      title: `Run: ${command}`,
    });
    expect(row.action).toEqual({ kind: 'run_command', agent_id: AGENT, commands: [command], payload: sealedPayload(command) });
    expect(row.command).toEqual({
      approvalId: a.approval_id,
      kind: 'COMMAND',
      agentId: AGENT,
      commands: [command],
      status: 'pending',
      payload: sealedPayload(command),
      grant: null,
    });
  });

  it('"COMMAND_SET ... P-<first 32 hex of sha256(canonical(command strings))>"; asking again is the same approval with one REQUESTED ("the hook never reuses one")', async () => {
    const commands = ['make clean', `make deploy ENV=${randomBytes(3).toString('hex')}`];
    const first = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload(commands.join(' && ')), commands });
    expect(first.status).toBe(201);
    expect(first.json.approval_id).toBe(`P-${sha256(JSON.stringify(commands)).slice(0, 32)}`);
    expect(first.json).toMatchObject({ kind: 'COMMAND_SET', commands, created: true });
    const again = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload(commands.join(' && ')), commands });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ approval_id: first.json.approval_id, approval_uuid: first.json.approval_uuid, created: false });
    expect((await types(first.json)).filter((x) => x === 'REQUESTED')).toHaveLength(1);

    // Once decided, the id is never reused for a second request.
    ok(await reject(first.json));
    const third = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload(commands.join(' && ')), commands });
    expect(third.status).toBe(400);
    expect(third.json).toMatchObject({ error: 'BAD_USER_INPUT', reason: 'APPROVAL_ID_USED' });
    const [{ n: requested }] = await t.sql(`select count(*)::int as n from audit_event where type = 'REQUESTED' and data->>'approval_id' = $1`, [
      first.json.approval_id,
    ]);
    expect(requested).toBe(1);
  });

  it('"One REQUESTED event per approval_id": the database refuses a second REQUESTED in a stream', async () => {
    const a = await ask();
    const evs = await events(a);
    expect(evs.map((e) => e.type)).toEqual(['REQUESTED']);
    expect(evs[0]!.data).toMatchObject({ approval_id: a.approval_id, agent_id: AGENT, fingerprint: a.fingerprint, commands: a.commands });
    const [head] = await t.sql(`select hash from audit_event where seq = $1`, [evs[0]!.seq]);
    await expect(
      t.sql(
        `insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash)
         select gen_random_uuid(), tenant_id, stream, 'REQUESTED', 'system', null, now(), '{}'::jsonb, $2, $3 from audit_event where seq = $1`,
        [evs[0]!.seq, head.hash, sha256('second')],
      ),
    ).rejects.toThrow(/audit_event_one_requested/);
  });

  it('validates the sealed payload and agent_id ("a + 5+ hex chars"; risk_level "\'high\' ... or \'medium\' -- never low/critical"; rollback "null -- hook hardcodes this")', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['agent id of 4 hex', { agent_id: 'a1234', payload: sealedPayload('ls') }],
      ['agent id without a', { agent_id: 'b12345', payload: sealedPayload('ls') }],
      ['agent id upper case', { agent_id: 'A12345', payload: sealedPayload('ls') }],
      ['risk low', { agent_id: AGENT, payload: sealedPayload('ls', { risk_level: 'low' }) }],
      ['risk critical', { agent_id: AGENT, payload: sealedPayload('ls', { risk_level: 'critical' }) }],
      ['rollback set', { agent_id: AGENT, payload: sealedPayload('ls', { rollback: 'git revert' }) }],
      ['an extra field', { agent_id: AGENT, payload: { ...sealedPayload('ls'), batch_scope: 'verb' } }],
      ['a missing field', { agent_id: AGENT, payload: { ...sealedPayload('ls'), verification: undefined } }],
      ['one command not exact_content', { agent_id: AGENT, payload: sealedPayload('ls'), commands: ['rm -rf /'] }],
    ];
    for (const [name, body] of cases) {
      const r = await api('POST', '/api/command-approvals', body);
      expect(r.status, name).toBe(400);
      expect(r.json.error, name).toBe('BAD_USER_INPUT');
    }
    expect((await api('POST', '/api/command-approvals', { agent_id: 'a12345', payload: sealedPayload('ls', { risk_level: 'medium' }) })).status).toBe(201);
    const anon = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload('ls') }, null);
    expect(anon).toEqual({ status: 401, json: expect.objectContaining({ error: 'UNAUTHENTICATED' }) });
    // The GraphQL mutation is the same service.
    const g = await t.gql(
      `mutation($p: JSON!) { requestCommandApproval(input: { agentId: "a0ff00ff", payload: $p }) { approvalId kind status approval { source status } } }`,
      { p: sealedPayload('terraform destroy') },
      hook.token,
    );
    expect(ok(g).requestCommandApproval).toMatchObject({ kind: 'COMMAND', status: 'pending', approval: { source: 'COMMAND', status: 'PENDING' } });
    expect(
      codeOf(
        await t.gql(
          `mutation($p: JSON!) { requestCommandApproval(input: { agentId: "x", payload: $p }) { approvalId } }`,
          { p: sealedPayload('ls') },
          hook.token,
        ),
      ),
    ).toBe('BAD_USER_INPUT');
  });
});

describe('live: the request and its decision reach subscribers of the one inbox', () => {
  it('approvalRequested carries a COMMAND request; approvalChanged carries its approval (what `taskbay guard` waits on)', async () => {
    const requested = subscribe(t.ws(), `subscription { approvalRequested { id source command { approvalId commands } } }`);
    // Live once the admin's own probe request reaches it.
    const probes = probeRequests(() => t);
    await untilProbeArrives(async () => {
      const id = await probes.open();
      return () => hasEvent(requested, 'approvalRequested', id);
    });
    const a = await ask();
    const got = await nextBesides(requested, (e) => probes.ids.has(idOf(e, 'approvalRequested')!));
    expect(got.data?.approvalRequested).toEqual({ id: a.id, source: 'COMMAND', command: { approvalId: a.approval_id, commands: a.commands } });
    const changed = subscribe(
      t.ws(hook.token),
      `subscription($id: ID!) { approvalChanged(approvalId: $id) { id status command { status grant { status } } } }`,
      { id: a.id },
    );
    // Live once a probe event in the request's own stream reaches it (nothing else happens to it meanwhile).
    await untilProbeArrives(async () => {
      const before = changed.received.length;
      await appendProbeEvent(t, a.id);
      return () => changed.received.length > before;
    });
    ok(await approve(a));
    let last: any;
    // The probes' frames (PENDING) come first; then the decision's.
    while (last?.status !== 'APPROVED') last = (await changed.next()).data?.approvalChanged;
    expect(last).toEqual({ id: a.id, status: 'APPROVED', command: { status: 'approved', grant: { status: 'PENDING' } } });
    requested.dispose();
    changed.dispose();
  });
});

describe('status vocabularies: "distinct columns, opposite casing, never collapse"', () => {
  it('the database admits only lowercase approval statuses, UPPERCASE grant statuses and the nine event types', async () => {
    const a = await ask();
    ok(await approve(a));
    await t.sql(`alter table command_approval disable trigger command_approval_sealed`);
    try {
      await expect(t.sql(`update command_approval set status = 'APPROVED' where id = $1`, [a.approval_uuid])).rejects.toThrow(/check/);
    } finally {
      await t.sql(`alter table command_approval enable trigger command_approval_sealed`);
    }
    await expect(t.sql(`update approval_grant set status = 'consumed' where command_approval_id = $1`, [a.approval_uuid])).rejects.toThrow(/check/);

    // "The approval_events.event_type CHECK admits nine values" -- tried in a transaction that is rolled back.
    const c = new pg.Client({ connectionString: t.databaseUrl });
    await c.connect();
    try {
      const insert = (type: string) =>
        c.query(
          `insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash)
           values (gen_random_uuid(), gen_random_uuid(), 'approval:' || gen_random_uuid(), $1, 'system', null, now(), '{}', null, md5(random()::text))`,
          [type],
        );
      for (const type of ['REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'NOOP', 'REVOKED', 'REVERTED']) {
        await c.query('begin');
        await insert(type);
        await c.query('rollback');
      }
      for (const type of ['EXPIRED', 'CONSUMED', 'PENDING']) {
        await c.query('begin');
        await expect(insert(type), type).rejects.toThrow(/audit_event_command_types/);
        await c.query('rollback');
      }
    } finally {
      await c.end();
    }
  });
});

describe('activation: "SHOWN precedes APPROVED; the activation path writes them together"', () => {
  it('approve forms one PENDING grant and writes SHOWN then APPROVED, adjacent in the stream', async () => {
    const a = await ask();
    const d = ok(await approve(a)).approve;
    expect(d.outcome).toBe('APPROVE');
    const evs = await events(a);
    const shown = evs.findIndex((e) => e.type === 'SHOWN');
    expect(shown).toBeGreaterThan(0);
    expect(evs[shown + 1]!.type).toBe('APPROVED');
    expect(evs.filter((e) => e.type === 'SHOWN' || e.type === 'APPROVED')).toHaveLength(2);
    expect(evs[shown]!.data.label).toBe(`Approve [${a.approval_id.slice(0, 10)}]`);
    expect(await grants(a)).toEqual([{ status: 'PENDING' }]);
    expect(await commandStatus(a)).toBe('approved');
    const view = (await api('GET', `/api/command-approvals/${a.approval_id}`)).json;
    expect(view).toMatchObject({ status: 'approved', approval_status: 'APPROVED', grant: { status: 'PENDING', consumed_at: null } });
  });

  it("the requester (the hook's token) cannot approve its own command (separation of duties); a command is never edited or sent back (INVALID_ACTION)", async () => {
    const a = await ask();
    expect(codeOf(await approve(a, hook.token))).toBe('SEPARATION_OF_DUTIES');
    const edit = await t.gql(OPS.editAndApprove, { id: a.id, revision: 1, digest: a.digest, action: { text: 'rm -rf /' } });
    expect(codeOf(edit)).toBe('INVALID_ACTION');
    const rc = await t.gql(OPS.requestChanges, { id: a.id, revision: 1, digest: a.digest, comment: 'narrower please' });
    expect(codeOf(rc)).toBe('INVALID_ACTION');
    expect(await grants(a)).toEqual([]);
    expect(await types(a)).toEqual(['REQUESTED']);
    expect(await commandStatus(a)).toBe('pending');
  });

  it('"a tampered payload fails to form a grant": fingerprint verified at activation, refused with its own error, leaving an event', async () => {
    const a = await ask('rm -rf build');
    // First line: the sealed row refuses an UPDATE of its payload.
    await expect(
      t.sql(`update command_approval set payload = jsonb_set(payload, '{exact_content}', '"rm -rf /"') where id = $1`, [a.approval_uuid]),
    ).rejects.toThrow(/sealed/);
    // Someone with the table owner's rights goes around it: activation still refuses.
    await t.sql(`alter table command_approval disable trigger command_approval_sealed`);
    try {
      await t.sql(`update command_approval set payload = jsonb_set(payload, '{exact_content}', '"rm -rf /"'), commands = '["rm -rf /"]' where id = $1`, [
        a.approval_uuid,
      ]);
    } finally {
      await t.sql(`alter table command_approval enable trigger command_approval_sealed`);
    }
    const r = await approve(a);
    expect(codeOf(r)).toBe('INVALID_ACTION');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'FINGERPRINT_MISMATCH' });
    expect(await grants(a)).toEqual([]);
    expect(await t.sql(`select count(*)::int as n from decision where approval_id = $1`, [a.approval_uuid])).toEqual([{ n: 0 }]);
    expect(await commandStatus(a)).toBe('pending');
    const evs = await events(a);
    expect(evs.map((e) => e.type)).toEqual(['REQUESTED', 'command.activation_refused']);
    expect(evs[1]!.data).toMatchObject({ reason: 'FINGERPRINT_MISMATCH', expected: a.fingerprint, mismatched: expect.arrayContaining(['payload']) });
    expect(evs[1]!.data.actual).not.toBe(a.fingerprint);
    // Nothing was consumable, and the chain is intact.
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/consume`)).json).toMatchObject({ error: 'NOT_PENDING', reason: 'NO_GRANT' });
    expect(ok(await t.gql(OPS.auditChain)).auditChain.ok).toBe(true);
  });
});

describe('the hook after approval: consume, run, EXECUTED or FAILED', () => {
  it('"single-use" grant: PENDING -> CONSUMED once; a second (or concurrent) consume fails; only the requester consumes', async () => {
    const a = await ask();
    ok(await approve(a));
    const admin = await api('POST', `/api/command-approvals/${a.approval_id}/consume`, undefined, t.adminToken);
    expect(admin).toMatchObject({ status: 403, json: { error: 'FORBIDDEN' } });
    const both = await Promise.all([1, 2, 3].map(() => api('POST', `/api/command-approvals/${a.approval_id}/consume`)));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const won = both.find((r) => r.status === 200)!.json;
    expect(won).toMatchObject({ commands: a.commands, grant: { status: 'CONSUMED' } });
    for (const r of both.filter((x) => x.status === 409)) expect(r.json).toMatchObject({ error: 'NOT_PENDING', reason: 'GRANT_CONSUMED' });
    expect(await grants(a)).toEqual([{ status: 'CONSUMED' }]);
    await expect(t.sql(`update approval_grant set status = 'PENDING' where command_approval_id = $1`, [a.approval_uuid])).rejects.toThrow(/final/);
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/outcome`, { exit_code: 0 })).json.event).toBe('EXECUTED');
    const evs = await events(a);
    expect(evs.map((e) => e.type)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'approval.decided', 'command.grant_consumed', 'EXECUTED']);
    expect(evs.at(-1)!.data).toMatchObject({ exit_code: 0, commands: a.commands });
  });

  it('"mints a single COMMAND_SET grant": one grant for the whole chain, consumed once (a second consume is refused), one EXECUTED or FAILED', async () => {
    for (const [exit, outcome] of [
      [0, 'EXECUTED'],
      [2, 'FAILED'],
    ] as const) {
      const commands = ['make clean', `make build-${randomBytes(3).toString('hex')}`, 'make deploy'];
      const asked = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload(commands.join(' && ')), commands });
      expect(asked.status, JSON.stringify(asked.json)).toBe(201);
      const set = asked.json;
      expect(set).toMatchObject({ kind: 'COMMAND_SET', commands, grant: null });
      ok(await approve(set));
      // One grant for the three commands, not one per command.
      expect(await grants(set)).toEqual([{ status: 'PENDING' }]);
      const consume = () => api('POST', `/api/command-approvals/${set.approval_id}/consume`);
      expect(await consume()).toMatchObject({ status: 200, json: { kind: 'COMMAND_SET', commands, grant: { status: 'CONSUMED' } } });
      expect(await consume()).toMatchObject({ status: 409, json: { error: 'NOT_PENDING', reason: 'GRANT_CONSUMED' } });
      expect(await grants(set)).toEqual([{ status: 'CONSUMED' }]);
      const report = { exit_code: exit, ...(exit ? { detail: 'make: *** [deploy] Error 2' } : {}) };
      expect(await api('POST', `/api/command-approvals/${set.approval_id}/outcome`, report)).toMatchObject({ status: 200, json: { event: outcome } });
      expect(await api('POST', `/api/command-approvals/${set.approval_id}/outcome`, { exit_code: 0 })).toMatchObject({
        status: 409,
        json: { error: 'NOT_PENDING', reason: 'OUTCOME_RECORDED' },
      });
      const evs = await events(set);
      expect(evs.map((e) => e.type)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'approval.decided', 'command.grant_consumed', outcome]);
      expect(evs.at(-1)!.data).toMatchObject({ exit_code: exit, commands });
    }
  });

  it('"An approved T3 command exits non-zero" -> FAILED with the detail; never EXECUTED; the outcome is recorded once', async () => {
    const a = await ask();
    ok(await approve(a));
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/consume`)).status).toBe(200);
    const r = await api('POST', `/api/command-approvals/${a.approval_id}/outcome`, { exit_code: 3, detail: 'rm: cannot remove build: Permission denied' });
    expect(r).toMatchObject({ status: 200, json: { event: 'FAILED' } });
    const again = await api('POST', `/api/command-approvals/${a.approval_id}/outcome`, { exit_code: 0 });
    expect(again).toMatchObject({ status: 409, json: { error: 'NOT_PENDING', reason: 'OUTCOME_RECORDED' } });
    const evs = await events(a);
    expect(evs.filter((e) => e.type === 'FAILED').map((e) => e.data)).toEqual([
      expect.objectContaining({ exit_code: 3, detail: 'rm: cannot remove build: Permission denied' }),
    ]);
    expect(evs.some((e) => e.type === 'EXECUTED')).toBe(false);
  });

  it('"Do not assume an EXECUTED event exists for an approval whose command never ran": rejected, approved-but-unused and revoked grants record no outcome', async () => {
    // Rejected: REJECTED, no grant, nothing to consume, no outcome.
    const rejected = await ask();
    ok(await reject(rejected));
    expect(await grants(rejected)).toEqual([]);
    expect(await commandStatus(rejected)).toBe('rejected');
    expect((await api('POST', `/api/command-approvals/${rejected.approval_id}/consume`)).json).toMatchObject({ error: 'NOT_PENDING', reason: 'NO_GRANT' });
    // Approved but never consumed (the command never ran).
    const unused = await ask();
    ok(await approve(unused));
    // Revoked by an admin before use.
    const revoked = await ask();
    ok(await approve(revoked));
    const member = await api('POST', `/api/command-approvals/${revoked.approval_id}/revoke`);
    expect(member.status).toBe(403);
    const rv = await api('POST', `/api/command-approvals/${revoked.approval_id}/revoke`, undefined, t.adminToken);
    expect(rv).toMatchObject({ status: 200, json: { status: 'revoked', grant: { status: 'REVOKED' } } });
    expect((await api('POST', `/api/command-approvals/${revoked.approval_id}/consume`)).json).toMatchObject({ error: 'NOT_PENDING', reason: 'GRANT_REVOKED' });

    for (const a of [rejected, unused, revoked]) {
      const r = await api('POST', `/api/command-approvals/${a.approval_id}/outcome`, { exit_code: 0 });
      expect(r).toMatchObject({ status: 409, json: { error: 'INVALID_ACTION', reason: 'NOT_CONSUMED' } });
      const ts = await types(a);
      expect(ts).not.toContain('EXECUTED');
      expect(ts).not.toContain('FAILED');
    }
    expect(await types(rejected)).toEqual(['REQUESTED', 'REJECTED', 'approval.decided']);
    expect(await types(revoked)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'approval.decided', 'REVOKED']);
  });

  it('a request expires (lowercase expired); a grant not used in time expires (EXPIRED) and cannot be consumed', async () => {
    const r = await api('POST', '/api/command-approvals', { agent_id: AGENT, payload: sealedPayload(`rm -rf tmp-${++n}`), expires_in_seconds: 1 });
    const a = r.json;
    await untilExpiryPassed(t, a.approval_uuid);
    expect(codeOf(await approve(a))).toBe('EXPIRED');
    // The late decision expires the request itself unless the sweeper holds its row at that
    // moment (SKIP LOCKED): then the sweeper's commit does it, a moment later.
    await eventually(async () => (await commandStatus(a)) === 'expired');
    expect(await grants(a)).toEqual([]);

    const b = await ask();
    ok(await approve(b));
    await t.sql(`update approval_grant set expires_at = now() - interval '1 second' where command_approval_id = $1`, [b.approval_uuid]);
    expect((await api('GET', `/api/command-approvals/${b.approval_id}`)).json.grant.status).toBe('EXPIRED');
    expect((await api('POST', `/api/command-approvals/${b.approval_id}/consume`)).json).toMatchObject({ error: 'EXPIRED', reason: 'GRANT_EXPIRED' });
    expect(await grants(b)).toEqual([{ status: 'EXPIRED' }]);
    expect((await api('POST', `/api/command-approvals/${b.approval_id}/outcome`, { exit_code: 0 })).json.reason).toBe('NOT_CONSUMED');
  });
});

describe('"approval_events is append-only" and "NOOP and REVERTED ... no production code writes them"', () => {
  it('UPDATE and DELETE of command events are refused by the database; no NOOP or REVERTED was written; the chain verifies', async () => {
    const a = await ask();
    ok(await approve(a));
    for (const type of ['REQUESTED', 'SHOWN', 'APPROVED']) {
      await expect(t.sql(`update audit_event set data = '{}' where stream = $1 and type = $2`, [`approval:${a.approval_uuid}`, type])).rejects.toThrow(
        /append-only/,
      );
      await expect(t.sql(`delete from audit_event where stream = $1 and type = $2`, [`approval:${a.approval_uuid}`, type])).rejects.toThrow(/append-only/);
    }
    expect(await t.sql(`select count(*)::int as n from audit_event where type in ('NOOP', 'REVERTED')`)).toEqual([{ n: 0 }]);
    expect(ok(await t.gql(OPS.auditChain)).auditChain).toMatchObject({ ok: true });
  });
});
