import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTENER_APPLICATION_NAME } from '../../src/events/listener.js';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/agent.js';
import { eventually, OPS, startTestInstance, type TestInstance } from '../support/harness.js';

// DESIGN.md "Cross-instance events": every instance LISTENs and feeds its local pub/sub. When the
// LISTEN connection is cut (a Postgres restart, a failover), the instance must listen again.
let t: TestInstance;
let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
});
afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

const listeners = () =>
  t.sql<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and application_name = $1`, [
    LISTENER_APPLICATION_NAME,
  ]);

describe('the LISTEN loop', () => {
  it('listens again after its connection is terminated, and committed events reach subscribers', async () => {
    const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
    const agentId = reg.data.registerAgent.id;
    const [before] = await eventually(async () => ((await listeners()).length ? listeners() : null));
    await t.sql('select pg_terminate_backend($1)', [before!.pid]);
    const [after] = await eventually(async () => {
      const l = await listeners();
      return l.length && l[0]!.pid !== before!.pid ? l : null;
    });
    expect(after!.pid).not.toBe(before!.pid);

    const received: string[] = [];
    const sub = t.instance.pubsub.subscribe('approval');
    const reading = (async () => {
      for await (const e of sub) {
        received.push(e.type);
        if (e.type === 'approval.requested') break;
      }
    })();
    const r = await t.gql(OPS.startTask, { agentId, text: 'approve' });
    expect(r.errors).toBeUndefined();
    await eventually(async () => received.includes('approval.requested'));
    await reading;
  });
});
