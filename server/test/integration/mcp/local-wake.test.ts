import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, stream } from '../../../src/audit/module.js';
import { localWakesOf } from '../../../src/mcp/local-wake.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';

// A held call waiting on the deciding instance is woken by the commit itself (local-wake.ts), not
// by the LISTEN loop's round trips: the wake has happened by the time the committing code goes on,
// and never for a transaction that rolled back.

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(async () => {
  await t?.stop();
});

const forwarded = (approvalId: string) => ({
  tenantId: randomUUID(),
  stream: stream.approval(approvalId),
  type: 'mcp.call_forwarded' as const,
  actor: { type: 'system' as const, id: null },
  data: { approvalId, agentId: null, taskId: null, server: 's', tool: 't' },
});

describe('MCP gateway: a waiting call woken by a commit on its instance', () => {
  it('woken once the appending transaction has committed, not before; not for another request', async () => {
    const wakes = localWakesOf(t.instance.orm)!;
    const [mine, other] = [randomUUID(), randomUUID()];
    let woken = 0;
    const unwatch = wakes.watch(mine, () => woken++);
    const em = t.instance.orm.em.fork() as unknown as EntityManager;
    await em.transactional(async (tem) => {
      await appendEvents(tem as unknown as EntityManager, [forwarded(mine)]);
      expect(woken).toBe(0);
    });
    expect(woken).toBe(1);
    await em.transactional((tem) => appendEvents(tem as unknown as EntityManager, [forwarded(other)]));
    expect(woken).toBe(1);
    unwatch();
    await em.transactional((tem) => appendEvents(tem as unknown as EntityManager, [forwarded(mine)]));
    expect(woken).toBe(1);
  });

  it('not woken by a transaction that rolled back', async () => {
    const wakes = localWakesOf(t.instance.orm)!;
    const id = randomUUID();
    let woken = 0;
    const unwatch = wakes.watch(id, () => woken++);
    const em = t.instance.orm.em.fork() as unknown as EntityManager;
    await expect(
      em.transactional(async (tem) => {
        await appendEvents(tem as unknown as EntityManager, [forwarded(id)]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(woken).toBe(0);
    unwatch();
  });
});
