import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint } from '../../../src/audit/chain.js';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { acknowledgeAuditFailure, agentRegistry, type TestInstance } from '../../support/harness.js';
import { startWithFixtureAgent, stopAll, askingForApproval } from '../../support/fixture-agent.js';

// Approval fields the console reads (issue 9, items 9 and 10): `supersedes`, the request a newer
// one replaced on the same task, and `chain`, the verification of this approval's own
// audit stream rather than the whole tenant's.

let t: TestInstance;
let fixture: FixtureAgent;
const agentId = agentRegistry(() => t);

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent({ worker: false }));
});
afterAll(() => stopAll(t, fixture));

const FIELDS = `id status supersedes { id } supersededBy { id } chain { ok events firstBrokenSeq reason } events { seq }`;
const request = (title: string, text: string) => askingForApproval({ title, risk: 'medium', action: { kind: 'send_message', text } });

async function approvalsOf(taskId: string) {
  const r = await t.gql(`query($t: ID!) { approvals(taskId: $t, first: 5) { edges { node { ${FIELDS} } } } }`, { t: taskId });
  expect(r.errors).toBeUndefined();
  return r.data.approvals.edges.map((e: { node: any }) => e.node);
}

async function tamper(text: string, params: unknown[]) {
  const c = new pg.Client({ connectionString: t.databaseUrl });
  await c.connect();
  try {
    await c.query('begin');
    await c.query('alter table audit_event disable trigger audit_event_no_update');
    await c.query(text, params);
    await c.query('alter table audit_event enable trigger audit_event_no_update');
    await c.query('commit');
  } finally {
    await c.end();
  }
}

describe('Approval.supersedes and Approval.chain', () => {
  it('links a request to the one it replaced, and verifies each approval stream on its own', async () => {
    const agent = await agentId(fixture.cardUrl('scripted'));
    const started = await t.gql(`mutation($a: ID!, $d: JSON) { startTask(input: { agentId: $a, data: $d }) { id } }`, {
      a: agent,
      d: request('Deploy v1', 'Deploy v1.'),
    });
    const taskId = started.data.startTask.id;
    const sent = await t.gql(`mutation($t: ID!, $d: JSON) { sendTaskMessage(input: { taskId: $t, data: $d }) { id } }`, {
      t: taskId,
      d: request('Deploy v2', 'Deploy v2.'),
    });
    expect(sent.errors).toBeUndefined();

    const [newer, older] = await approvalsOf(taskId);
    expect(older.status).toBe('SUPERSEDED');
    expect(newer.supersedes).toEqual({ id: older.id });
    expect(older.supersededBy).toEqual({ id: newer.id });
    expect(older.supersedes).toBeNull();

    for (const a of [newer, older]) expect(a.chain).toEqual({ ok: true, events: a.events.length, firstBrokenSeq: null, reason: null });

    // Tampering with one approval's stream shows on that approval only.
    const seq = older.events[0].seq;
    const [original] = await t.sql(`select data from audit_event where seq = $1`, [seq]);
    await tamper(`update audit_event set data = data || '{"title":"forged"}'::jsonb where seq = $1`, [seq]);
    const [newer2, older2] = await approvalsOf(taskId);
    expect(older2.chain).toMatchObject({
      ok: false,
      firstBrokenSeq: seq,
      reason: expect.stringMatching(new RegExp(`^event ${seq} of approval:[0-9a-f-]{36} does not match its hash$`)),
    });
    expect(newer2.chain.ok).toBe(true);

    // Put back: no checkpoint is signed over a log that does not verify, and the failure stands until acknowledged.
    await tamper(`update audit_event set data = $2::jsonb where seq = $1`, [seq, JSON.stringify(original.data)]);
    const [{ tenant_id }] = await t.sql(`select tenant_id from audit_event where seq = $1`, [seq]);
    expect(await acknowledgeAuditFailure(t, tenant_id)).toEqual({ ok: true, reason: null });

    // A cut tail is found through the checkpoint that recorded the stream's head.
    expect(await writeCheckpoint(t.instance.orm.em.fork())).toHaveLength(1);
    const last = newer2.events.at(-1).seq;
    await tamper(`delete from audit_event where seq = $1`, [last]);
    const [newer3] = await approvalsOf(taskId);
    // The checkpoint names the head it recorded: the deleted event.
    expect(newer3.chain).toMatchObject({ ok: false, firstBrokenSeq: last, reason: expect.stringMatching(/lost events recorded by checkpoint/) });
  });
});
