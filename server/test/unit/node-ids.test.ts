import { isObjectType, type GraphQLFieldResolver } from 'graphql';
import { describe, expect, it } from 'vitest';
import { builder } from '../../src/graphql/builder.js';
import { schema } from '../../src/modules.js';

// graphql/node-ids.ts answers every Node's `id` at once instead of through Pothos's async
// resolver: same value for every Node type, and no promise.

describe('Node ids', () => {
  it('equal what Pothos resolves, for every Node type, without a promise', async () => {
    const pothos = builder.toSchema({ sortSchema: false });
    const nodeTypes = Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'));
    expect(nodeTypes.map((t) => t.name).sort()).toEqual(['Agent', 'ApiToken', 'Approval', 'Policy', 'ReviewerGroup', 'Task', 'User', 'WebhookEndpoint']);
    const row = { id: '2b1d5a38-5c1e-4d1a-9d0e-0d7b2f3c4a11' };
    for (const type of nodeTypes) {
      if (!isObjectType(type)) continue;
      const ours = type.getFields().id!.resolve as GraphQLFieldResolver<unknown, unknown>;
      const theirs = (pothos.getType(type.name) as typeof type).getFields().id!.resolve as GraphQLFieldResolver<unknown, unknown>;
      const answer = ours(row, {}, {}, {} as never);
      expect(typeof answer, type.name).toBe('string');
      expect(answer, type.name).toBe(await theirs(row, {}, {}, { parentType: type } as never));
    }
  });
});
