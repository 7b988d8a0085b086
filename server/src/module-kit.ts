import type { EntityManager } from '@mikro-orm/postgresql';
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
}

/** A module as declared: the type checks the declaration without widening it. */
export const defineModule = <M extends TaskbayModule>(module: M): M => module;
