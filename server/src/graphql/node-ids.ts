import { encodeGlobalID } from '@pothos/plugin-relay';
import { type GraphQLSchema, isObjectType } from 'graphql';

// Every Node's `id` is its row's id as a global id. Pothos's relay plugin resolves that field
// through two async functions, so every object of every list became a promise to wait for (the
// executor's promiseForObject on each item, its person and its agent): a large part of the
// inbox's CPU (docs/PERFORMANCE.md). The same encoding, answered at once; node-ids.test.ts checks it equals
// Pothos's for every Node type.

export function answerNodeIdsAtOnce(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !type.getInterfaces().some((i) => i.name === 'Node')) continue;
    const field = type.getFields().id;
    if (!field) continue;
    const typename = type.name;
    field.resolve = (parent: { id: string }) => encodeGlobalID(typename, String(parent.id));
  }
  return schema;
}
