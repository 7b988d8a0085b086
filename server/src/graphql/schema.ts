import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import { answerNodeIdsAtOnce } from './node-ids.js';

// The schema of what the modules registered on the builder; modules.ts calls this once all are imported.
export function buildSchema(): GraphQLSchema {
  return answerNodeIdsAtOnce(builder.toSchema({ sortSchema: false }));
}
