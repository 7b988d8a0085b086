import pg from 'pg';
import { EVENTS_CHANNEL, rowToEvent, type AuditEventRow } from '../audit/log.js';
import type { TaskbayPubSub } from './pubsub.js';

// Every instance LISTENs on the events channel. A NOTIFY arrives only when the transaction that
// appended the events committed; the listener loads those events by seq and feeds the local
// pub/sub. (Seqs are not commit order, so nothing ever "catches up by seq greater than".)

export function publishEvent(pubsub: TaskbayPubSub, e: AuditEventRow) {
  const d = e.data as Record<string, any>;
  if (e.stream.startsWith('approval:') && typeof d.approvalId === 'string') {
    pubsub.publish('approval', {
      seq: e.seq,
      type: e.type,
      tenantId: e.tenantId,
      approvalId: d.approvalId,
      agentId: d.agentId ?? null,
      supersededById: d.supersededById ?? null,
    });
  }
  if (e.stream.startsWith('task:') && typeof d.taskId === 'string') {
    pubsub.publish('task', { seq: e.seq, type: e.type, tenantId: e.tenantId, taskId: d.taskId, agentId: d.agentId ?? null });
  }
}

export interface EventListener {
  ready: Promise<void>;
  close(): Promise<void>;
}

export const LISTENER_APPLICATION_NAME = 'taskbay-events';

export function listenForEvents(databaseUrl: string, pubsub: TaskbayPubSub, log = console.error): EventListener {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  // Loads run one after another so subscribers see events in notification (commit) order.
  let chain = Promise.resolve();

  const connect = async (delayMs: number) => {
    if (closed) return;
    // Named, so operators (and tests) can find this connection in pg_stat_activity.
    const c = new pg.Client({ connectionString: databaseUrl, application_name: LISTENER_APPLICATION_NAME });
    // One reconnect per client, whether it ended after working or never connected.
    let retried = false;
    const reconnect = () => {
      if (closed || retried) return;
      retried = true;
      if (client === c) client = null;
      retry = setTimeout(() => void connect(Math.min(delayMs * 2, 5000)), delayMs);
    };
    c.on('error', (e) => log(`event listener: ${e.message}`));
    c.on('end', reconnect);
    c.on('notification', (n) => {
      if (n.channel !== EVENTS_CHANNEL || !n.payload) return;
      const seqs = n.payload.split(',').map(Number).filter(Number.isSafeInteger);
      chain = chain.then(async () => {
        try {
          const { rows } = await c.query('select * from audit_event where seq = any($1::bigint[]) order by seq', [seqs]);
          for (const r of rows) publishEvent(pubsub, rowToEvent(r));
        } catch (e) {
          log(`event listener: could not load events ${n.payload}: ${(e as Error).message}`);
        }
      });
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${EVENTS_CHANNEL}`);
      client = c;
      resolveReady();
    } catch (e) {
      log(`event listener: ${(e as Error).message}; retrying`);
      c.end().catch(() => {});
      reconnect();
    }
  };
  void connect(100);
  return {
    ready,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await chain;
      await client?.end().catch(() => {});
    },
  };
}
