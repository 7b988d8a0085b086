import pg from 'pg';
import { isEventListenerConnection } from '../../src/events/listener.js';
import { requestScope } from '../../src/log.js';

// Counts the SQL statements the instances of this test process send, by wrapping pg's
// Client#query, which every connection goes through (MikroORM's pool, graphile-worker's, the
// test's own). The LISTEN loop's connections (LISTEN and its reader) are recorded apart (`listener`): its work is per
// event, not per request. Nothing outside `during` is recorded.

export interface RecordedStatement {
  text: string;
  values: unknown[];
  /** application_name of the connection (graphile-worker's differ from the ORM's). */
  application: string | undefined;
  /** Which connection sent it: a number per pg client, in the order they were first seen. */
  connection: number;
  /** The request it was sent for (log.ts request scope), if any: none for jobs, sweepers, the LISTEN loop's own reads. */
  reqId: string | undefined;
}

export interface Recorded {
  statements: RecordedStatement[];
  listener: RecordedStatement[];
}

export interface StatementRecorder {
  /**
   * Runs fn and returns what it resolved with and the statements sent meanwhile; fn is handed
   * the lists as they grow (to see what had been sent at a given moment).
   */
  during<T>(fn: (live: Recorded) => Promise<T>): Promise<{ result: T } & Recorded>;
  restore(): void;
}

export function recordStatements(): StatementRecorder {
  const originalQuery = pg.Client.prototype.query;
  let recording: Recorded | null = null;
  const connections = new WeakMap<object, number>();
  let connectionsSeen = 0;
  pg.Client.prototype.query = function (this: pg.Client & { connectionParameters?: { application_name?: string } }, ...args: any[]) {
    const application = this.connectionParameters?.application_name;
    if (recording) {
      const q = args[0];
      let connection = connections.get(this);
      if (connection === undefined) {
        connection = connectionsSeen++;
        connections.set(this, connection);
      }
      const reqId = requestScope()?.reqId;
      recording[isEventListenerConnection(application) ? 'listener' : 'statements'].push(
        typeof q === 'string'
          ? { text: q, values: Array.isArray(args[1]) ? args[1] : [], application, connection, reqId }
          : { text: String(q?.text ?? q), values: q?.values ?? [], application, connection, reqId },
      );
    }
    return (originalQuery as any).apply(this, args);
  } as typeof pg.Client.prototype.query;
  return {
    async during(fn) {
      if (recording) throw new Error('already recording');
      const statements: RecordedStatement[] = [];
      const listener: RecordedStatement[] = [];
      recording = { statements, listener };
      try {
        return { result: await fn(recording), statements, listener };
      } finally {
        recording = null;
      }
    },
    restore() {
      pg.Client.prototype.query = originalQuery;
    },
  };
}
