import { afterAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_JOB } from '../../../src/audit/checkpoints.js';
import { createTestDatabase, eventually, startTestInstance, type TestInstance, startReplicaOf } from '../../support/harness.js';

// Issue 14, "Honest settings": TASKBAY_CHECKPOINT_INTERVAL is seconds, as documented. Values under
// 60 and over 3,600 work (a per-minute crontab rounded them). Checkpoints are compared by the
// times they record, not by how long the test slept.

const CREATE = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "go" } }) { id } }`;
const instances: TestInstance[] = [];
afterAll(async () => {
  for (const t of instances.reverse()) await t.stop();
});

const queuedCheckpoints = (t: TestInstance) =>
  t.sql<{ run_at: Date }>(`select run_at from graphile_worker.jobs where task_identifier = $1 and key = $1 and locked_at is null`, [CHECKPOINT_JOB]);

describe('TASKBAY_CHECKPOINT_INTERVAL', () => {
  it('2 seconds: consecutive checkpoints are recorded about 2 s apart', async () => {
    const t = await startTestInstance({ env: { TASKBAY_CHECKPOINT_INTERVAL: '2' } });
    instances.push(t);
    // A checkpoint is written only when a stream changed: keep opening requests meanwhile.
    let writing = true;
    const opening = (async () => {
      for (let i = 0; writing; i++) {
        const r = await t.gql(CREATE, { title: `change ${i}` });
        expect(r.errors).toBeUndefined();
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    let times: number[] = [];
    try {
      await eventually(async () => {
        times = (await t.sql<{ at: Date }>('select at from audit_checkpoint order by seq')).map((c) => new Date(c.at).getTime());
        return times.length >= 4;
      }, 25_000);
    } finally {
      writing = false;
      await opening;
    }
    const gaps = times.slice(1).map((at, i) => at - times[i]!);
    // The worker polls every second: each checkpoint runs up to about a second after its time.
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(900);
      expect(gap).toBeLessThan(3500);
    }
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(1500);
    expect(mean).toBeLessThan(3000);
    // One checkpoint queued at a time (job key).
    expect(await queuedCheckpoints(t)).toHaveLength(1);
  }, 60_000);

  it('over 3,600 seconds (7,200) is accepted: the next checkpoint is queued 2 h ahead; a restart keeps it, a shorter interval brings it forward', async () => {
    const databaseUrl = await createTestDatabase();
    const first = await startTestInstance({ databaseUrl, env: { TASKBAY_CHECKPOINT_INTERVAL: '7200' } });
    instances.push(first);
    expect(first.config.checkpointIntervalSeconds).toBe(7200);
    const [queued] = await queuedCheckpoints(first);
    const [{ now }] = await first.sql<{ now: Date }>('select now()');
    // Two hours ahead of the database's clock, within the minute since it was queued (a schedule, not a speed).
    const ahead = new Date(queued!.run_at).getTime() - new Date(now).getTime();
    expect(ahead).toBeGreaterThan(7200_000 - 60_000);
    expect(ahead).toBeLessThanOrEqual(7200_000);

    // A second instance (or a restart) with the same interval does not postpone it.
    const second = await startReplicaOf(first, { env: { TASKBAY_CHECKPOINT_INTERVAL: '7200' } });
    instances.push(second);
    expect(await queuedCheckpoints(second)).toEqual([queued]);

    // An instance with a shorter interval brings it forward.
    const third = await startReplicaOf(first, { env: { TASKBAY_CHECKPOINT_INTERVAL: '90' } });
    instances.push(third);
    const [forward] = await queuedCheckpoints(third);
    const [{ now: later }] = await third.sql<{ now: Date }>('select now()');
    const soon = new Date(forward!.run_at).getTime() - new Date(later).getTime();
    expect(soon).toBeGreaterThan(0);
    expect(soon).toBeLessThanOrEqual(90_000);
  }, 60_000);
});
