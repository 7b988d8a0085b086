import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, OPS, type TestInstance, rawId, startReplicas, startReplicaOf } from '../../support/harness.js';
import { createPolicy } from '../../support/policies.js';

// Issue 12, escalation across instances (escalation/sweeper.ts): requests due together, swept by
// two instances, escalate once each; an escalation that came due while no instance ran a worker
// happens as soon as one starts. The requests get their rule from a policy an admin created
// (its condition matches their titles), chosen when they open.

let a: TestInstance | null;
let b: TestInstance | null;
let c: TestInstance;
let d: TestInstance | null = null;

const CREATE = `mutation($title: String!) {
  createApproval(input: { title: $title, expiresInSeconds: 600, action: { kind: "send_message", text: "x" } }) { id } }`;

/** Opens a request titled `title`: the "escalates" policy (afterSeconds 1, raise to HIGH) matches it. */
async function open(title: string): Promise<string> {
  const r = await c.gql(CREATE, { title: `escalates: ${title}` });
  expect(r.errors).toBeUndefined();
  return rawId(r.data.createApproval.id);
}

const escalatedCounts = async (ids: string[]) =>
  (
    await c.sql<{ n: number }>(
      `select (select count(*)::int from audit_event e where e.type = 'approval.escalated' and e.stream = 'approval:' || a.id::text) as n
         from approval a where a.id = any($1::uuid[]) order by a.id`,
      [ids],
    )
  ).map((r) => r.n);

beforeAll(async () => {
  [a, b, c] = await startReplicas({}, {}, { worker: false });
  await createPolicy(c, { name: 'escalates', condition: 'title.startsWith("escalates: ")', escalation: { afterSeconds: 1, raiseRiskTo: 'HIGH' } });
}, 60_000);

afterAll(async () => {
  await d?.stop();
  await c?.stop();
  await b?.stop();
  await a?.stop();
});

describe('escalation sweepers', () => {
  it('requests due together, swept by two instances, escalate once each, within 2 s, and the audit chain verifies', async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => open(`batch ${i}`)));
    await eventually(
      async () => {
        const [{ n }] = await c.sql(`select count(*)::int as n from approval where id = any($1::uuid[]) and escalated_at is not null`, [ids]);
        return n === ids.length;
      },
      20_000,
      50,
    );
    expect(await escalatedCounts(ids)).toEqual(ids.map(() => 1));
    const rows = await c.sql(`select escalate_at, escalated_at, risk, status from approval where id = any($1::uuid[])`, [ids]);
    for (const r of rows) {
      expect(r).toMatchObject({ risk: 'HIGH', status: 'PENDING' });
      // Product times, and the behaviour: the timer is armed for escalate_at, so each escalates then
      // (2 s covers the sweep's transactions), not at the 30 s safety sweep.
      expect(r.escalated_at.getTime() - r.escalate_at.getTime()).toBeLessThanOrEqual(2000);
    }
    const chain = await c.gql(OPS.auditChain);
    expect(chain.errors).toBeUndefined();
    expect(chain.data.auditChain.ok).toBe(true);
  }, 60_000);

  it('an escalation that came due while no instance ran a worker happens when one starts', async () => {
    await a!.stop();
    await b!.stop();
    a = b = null;
    const id = await open('due while nothing sweeps');
    const [{ escalate_at }] = await c.sql('select escalate_at from approval where id = $1', [id]);
    // Waiting for a time to pass (the due time), by the clock escalation is judged by.
    await eventually(async () => Date.now() > escalate_at.getTime() + 500, 15_000, 20);
    expect((await c.sql('select escalated_at from approval where id = $1', [id]))[0].escalated_at).toBeNull();

    d = await startReplicaOf(c);
    const started = Date.now();
    const row = await eventually(
      async () => (await c.sql('select escalated_at, risk from approval where id = $1', [id])).find((r) => r.escalated_at),
      20_000,
      50,
    );
    expect(row.risk).toBe('HIGH');
    // A starting worker sweeps what is already due at once (2 s covers its first sweep), rather than
    // at its first safety sweep 30 s later: the behaviour, not a speed target.
    expect(row.escalated_at.getTime() - started).toBeLessThanOrEqual(2000);
    expect(await escalatedCounts([id])).toEqual([1]);
  }, 60_000);
});
