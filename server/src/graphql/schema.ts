import type { GraphQLSchema } from 'graphql';
import { builder, runBuildDefinitions } from './builder.js';
import { answerNodeIdsAtOnce } from './node-ids.js';

// The schema of what the modules registered on the builder; modules.ts calls this once all are imported.
export function buildSchema(): GraphQLSchema {
  runBuildDefinitions();
  return answerNodeIdsAtOnce(builder.toSchema({ sortSchema: false }));
}
