import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { AuditEventRow } from './audit/entities.js';
import type { Config } from './config.js';
import type { NotificationBarrier } from './lib/fresh-cache.js';
import type { Route } from './http/route.js';
import type { JobDefinition } from './jobs/job.js';

// What a domain module brings to one Taskbay instance, declared in its folder's module.ts and
// listed once in modules.ts; app.ts, the ORM's entity list, the per-request loaders and the
// GraphQL schema are assembled from that list (docs/ARCHITECTURE.md "Adding a domain").
//
// Its GraphQL types and fields are registered on the one Pothos builder when module.ts imports
// its graphql files; what it adds to an earlier module's path (a decision hook, an observation
// hook, a task transport) it registers in module.ts too, through that module's face.

export interface TaskbayModule {
  /** The folder's name. */
  readonly name: string;
  /** Its MikroORM entities (from its entities.ts). */
  readonly entities?: readonly unknown[];
  /** Its per-request loaders; their types join graphql/loaders.ts `Loaders` by declaration merging. */
  readonly loaders?: (em: EntityManager) => object;
  /** Its plain HTTP endpoints next to /graphql; the first match serves. */
  readonly routes?: readonly Route[];
  /** Its background jobs; every instance's worker runs all of them. */
  readonly jobs?: readonly JobDefinition[];
  /**
   * Its part of one running instance, started before anything is served (app.ts): per-instance
   * caches, LISTEN channels, work in the transaction of appended audit events, and background
   * work beside the job worker.
   */
  readonly start?: (instance: ModuleInstance) => ModuleRunning;
}

export interface ModuleInstance {
  readonly config: Config;
  readonly orm: MikroORM;
  /** The LISTEN loop's barrier once it runs (lib/fresh-cache.ts); null before, when a cache remembers nothing. */
  readonly barrier: () => NotificationBarrier | null;
}

export interface ModuleRunning {
  /** Channels to LISTEN on, each with what to do with a payload. */
  readonly channels?: Readonly<Record<string, (payload: string) => void>>;
  /** Every committed audit event this instance hears of. */
  readonly onEvent?: (event: AuditEventRow) => void;
  /** Work that commits or rolls back with appended audit events (audit/appended.ts). */
  readonly appendedEvents?: (tem: EntityManager, rows: readonly AuditEventRow[]) => Promise<void>;
  /** On an instance with the job worker, once it started: background work (a sweeper). */
  readonly startBackground?: () => void;
  /** Before the worker and the database close. */
  readonly stop?: () => Promise<void>;
}

/** A module as declared: the type checks the declaration without widening it. */
export const defineModule = <M extends TaskbayModule>(module: M): M => module;
