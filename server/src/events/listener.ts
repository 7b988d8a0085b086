import pg from 'pg';
import { log as logger } from '../log.js';
import { EVENTS_CHANNEL, rowToEvent, type AuditEventRow } from '../audit/module.js';
import type { TaskbayPubSub } from './pubsub.js';

// Every instance LISTENs on the events channel. A NOTIFY arrives only when the transaction that
// appended the events committed; the listener loads those events by seq and feeds the local
// pub/sub. When the LISTEN connection drops, the events committed meanwhile are replayed after
// it listens again, exactly once and in order.
//
// Why not "seq greater than the last seen": seqs are taken at insert, not at commit, so a
// transaction holding a lower seq can commit after one holding a higher seq. Instead each event
// records its transaction (audit_event.xid, pg_current_xact_id()) and the listener keeps
// `covered`, a snapshot (pg_current_snapshot()) taken on its connection after LISTEN, with this
// invariant: every event whose transaction is visible in `covered` has been published (or
// committed before the listener started, when nobody was subscribed here).
//
// On (re)connect, and every COVER_REFRESH_MS while connected: LISTEN (if not yet), take a new
// snapshot S, then publish the events whose transaction is not visible in `covered` but is
// visible in S, ordered by seq, skipping seqs a notification already published; then
// covered := S. This is exact:
// - a transaction not visible in S commits after S was taken, so after LISTEN took effect: its
//   NOTIFY reaches this connection, and is not replayed;
// - a transaction visible in `covered` was published before (the invariant), and is neither
//   replayed nor published again when a late NOTIFY for it arrives (it is skipped as covered);
// - a transaction between the two is published by the replay or by its NOTIFY, never both (the
//   set of seqs published since `covered` was taken). That set is emptied when `covered`
//   advances: a NOTIFY is only sent once its transaction is visible, so every seq in the set is
//   visible in the new snapshot and a later NOTIFY for it is skipped as covered.
// Everything runs on one promise chain, so subscribers see the events before a reconnect, then
// the replay, then what later notifications bring. Within a stream seq order is commit order
// (writers of a stream hold its lock until commit), so each approval's events stay in seq order.
// A load that fails on a live connection is published by the next refresh (late, but once).
//
// The loads run on a second connection (the reader), not on the LISTEN connection: sync() is a
// round trip on the LISTEN connection, and every request's cache freshness waits for it, so it
// must not queue behind a refresh that reads the seqs of 100,000 events committed in one
// interval (over 500 ms in the bench's audit fill). What a load needs is only that the
// events be committed: a NOTIFY arrives after its commit, and a refresh reads events visible in a
// snapshot taken before the read, so a statement on any connection sees them.

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
  /** Listening now (readiness); false between a lost connection and the next LISTEN. */
  readonly connected: boolean;
  /**
   * Counts the connections that have listened (null while not listening): whatever was
   * notified while one generation listened reached this process; between two, some may not have.
   */
  readonly generation: number | null;
  /**
   * Resolves after a round trip on the LISTEN connection that began after the call: Postgres
   * sends the notifications it has for a connection before it answers a query, so every
   * notification committed before the call has been handled by then. Resolves with the
   * generation it ran on, or null (not listening, or the connection failed meanwhile). Calls
   * that arrive while one round trip waits to be sent share it.
   */
  sync(): Promise<number | null>;
  close(): Promise<void>;
}

export interface ListenerHooks {
  log?: (line: string) => void;
  /** Each time it listens again after a lost connection (metrics). */
  onReconnect?: () => void;
  /** Each event as it is published (after the local pub/sub has it). */
  onEvent?: (e: AuditEventRow) => void;
  /** Other channels to LISTEN on, each with what to do with a payload (called at once, in order). */
  channels?: Record<string, (payload: string) => void>;
}

export const LISTENER_APPLICATION_NAME = 'taskbay-events';
/** The connection that loads the events the LISTEN connection learns of. */
export const LISTENER_READER_APPLICATION_NAME = 'taskbay-events-reader';
/** The LISTEN loop's connections (per event, not per request: statement counts leave them apart). */
export const isEventListenerConnection = (applicationName: string | undefined) =>
  applicationName === LISTENER_APPLICATION_NAME || applicationName === LISTENER_READER_APPLICATION_NAME;

/** How long sync() waits for the LISTEN connection's answer before giving up (null). */
export const SYNC_TIMEOUT_MS = 1000;

/** How often the covered snapshot advances while connected (bounds the set of published seqs). */
export const COVER_REFRESH_MS = 5000;

const SNAPSHOT = 'select pg_current_snapshot()::text as snapshot';
/** Events loaded (and published) per statement when a refresh finds events no NOTIFY brought. */
const REPLAY_PAGE = 1000;
// Only the seqs: a refresh finds every event of the last interval (thousands under load) and
// nearly all were published by their notification; reading whole rows to skip them would hold
// the event loop for 50 to 150 ms per refresh (the bench's 100,000-event fill). The
// events no notification published are then loaded by seq.
const BETWEEN_SNAPSHOTS = `select seq from audit_event
  where xid >= pg_snapshot_xmin($1::pg_snapshot)
    and not pg_visible_in_snapshot(xid, $1::pg_snapshot)
    and pg_visible_in_snapshot(xid, $2::pg_snapshot)
  order by seq`;
const BY_SEQ = `select *, coalesce(pg_visible_in_snapshot(xid, $2::pg_snapshot), false) as covered
  from audit_event where seq = any($1::bigint[]) order by seq`;

export function listenForEvents(databaseUrl: string, pubsub: TaskbayPubSub, hooks: ListenerHooks = {}): EventListener {
  const log = hooks.log ?? ((line: string) => logger.warn(line));
  let client: pg.Client | null = null;
  let listenedBefore = false;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  // Notifications, catch-ups and refreshes run one after another.
  let chain = Promise.resolve();
  const serially = (what: string, fn: () => Promise<void>) => {
    chain = chain.then(fn).catch((e) => log(`event listener: ${what}: ${(e as Error).message}`));
    return chain;
  };
  /** See the comment at the top. Null until the first LISTEN. */
  let covered: string | null = null;
  const publishedSinceCovered = new Set<number>();
  // One connection, used by the chain one load at a time, kept open (a notification must not wait
  // for a new connection); the pool replaces it when it fails.
  const reader = new pg.Pool({ connectionString: databaseUrl, application_name: LISTENER_READER_APPLICATION_NAME, max: 1, idleTimeoutMillis: 0 });
  reader.on('error', (e) => log(`event listener (reader): ${e.message}`));

  const publish = (rows: Record<string, any>[]) => {
    for (const r of rows) {
      const seq = Number(r.seq);
      if (r.covered === true || publishedSinceCovered.has(seq)) continue;
      publishedSinceCovered.add(seq);
      const event = rowToEvent(r);
      publishEvent(pubsub, event);
      hooks.onEvent?.(event);
    }
  };

  /** Takes a new snapshot on c and publishes what committed since `covered`; then advances it. */
  const advance = async (c: pg.Client) => {
    const { rows } = await c.query<{ snapshot: string }>(SNAPSHOT);
    const next = rows[0]!.snapshot;
    if (covered !== null) {
      const unpublished = (await reader.query<{ seq: string }>(BETWEEN_SNAPSHOTS, [covered, next])).rows
        .map((r) => Number(r.seq))
        .filter((seq) => !publishedSinceCovered.has(seq));
      // Not visible in `covered` (the query's own condition), so none is skipped as covered. In
      // pages: a replay after an outage (or events written without a NOTIFY) can be 100,000
      // events, whose rows at once held the event loop for about 70 ms in the bench's fill.
      for (let i = 0; i < unpublished.length; i += REPLAY_PAGE) {
        publish((await reader.query(BY_SEQ, [unpublished.slice(i, i + REPLAY_PAGE), covered])).rows);
      }
    }
    covered = next;
    publishedSinceCovered.clear();
  };

  const refresh = setInterval(() => {
    const c = client;
    if (c) void serially('could not advance the covered snapshot', () => advance(c));
  }, COVER_REFRESH_MS);
  refresh.unref();

  let generation = 0;
  let listening: { client: pg.Client; generation: number } | null = null;
  // The next round trip (not yet sent), shared by the calls that arrive before it is sent.
  let nextSync: Promise<number | null> | null = null;
  let lastSync: Promise<unknown> = Promise.resolve();
  const sync = (): Promise<number | null> => {
    if (nextSync) return nextSync;
    const round = lastSync.then(async () => {
      // From here on, later calls need a round trip of their own.
      if (nextSync === round) nextSync = null;
      const on = listening;
      if (!on || closed) return null;
      // A connection that does not answer (a network cut not yet noticed) must not hold requests:
      // after SYNC_TIMEOUT_MS they read the database instead.
      let timer: NodeJS.Timeout | undefined;
      const answered = await Promise.race([
        on.client.query('').then(
          () => true,
          () => false,
        ),
        new Promise<false>((r) => {
          timer = setTimeout(() => r(false), SYNC_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
      return answered && listening === on ? on.generation : null;
    });
    nextSync = round;
    lastSync = round;
    return round;
  };

  const connect = async (delayMs: number) => {
    if (closed) return;
    // Named, so operators (and tests) can find this connection in pg_stat_activity.
    const c = new pg.Client({ connectionString: databaseUrl, application_name: LISTENER_APPLICATION_NAME });
    // One reconnect per client, whether it ended after working or never connected; the delay
    // grows while connecting fails and starts again small once a connection worked.
    let retried = false;
    let worked = false;
    const reconnect = () => {
      if (closed || retried) return;
      retried = true;
      if (client === c) client = null;
      if (listening?.client === c) listening = null;
      const wait = worked ? 100 : delayMs;
      retry = setTimeout(() => void connect(Math.min(wait * 2, 5000)), wait);
    };
    let ended = false;
    c.on('error', (e) => log(`event listener: ${e.message}`));
    c.on('end', () => {
      ended = true;
      reconnect();
    });
    c.on('notification', (n) => {
      const other = hooks.channels?.[n.channel];
      if (other) return other(n.payload ?? '');
      if (n.channel !== EVENTS_CHANNEL || !n.payload) return;
      const seqs = n.payload.split(',').map(Number).filter(Number.isSafeInteger);
      void serially(`could not load events ${n.payload}`, async () => {
        // After the LISTEN connection ended, the catch-up after the reconnect publishes them.
        // Once closing, nothing is loaded (the reader is about to end under the query).
        if (!ended && !closed) publish((await reader.query(BY_SEQ, [seqs, covered])).rows);
      });
    });
    try {
      await c.connect();
      // On the chain: notifications that arrive meanwhile are handled after the catch-up.
      let failure: unknown = null;
      await serially('could not listen', async () => {
        try {
          await c.query(`LISTEN ${EVENTS_CHANNEL}`);
          for (const channel of Object.keys(hooks.channels ?? {})) await c.query(`LISTEN ${channel}`);
          await advance(c);
        } catch (e) {
          failure = e;
        }
      });
      if (failure) throw failure;
      worked = true;
      client = c;
      listening = { client: c, generation: ++generation };
      if (listenedBefore) hooks.onReconnect?.();
      listenedBefore = true;
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
    get connected() {
      return client !== null;
    },
    get generation() {
      return listening?.generation ?? null;
    },
    sync,
    async close() {
      closed = true;
      listening = null;
      clearInterval(refresh);
      if (retry) clearTimeout(retry);
      await chain;
      await Promise.all([client?.end().catch(() => {}), reader.end().catch(() => {})]);
    },
  };
}
