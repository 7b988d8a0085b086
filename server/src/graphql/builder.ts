import SchemaBuilder from '@pothos/core';
import RelayPlugin, { decodeGlobalID } from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/untrusted.js';
import type { Context, SignedInContext } from './context.js';

// Every Node is keyed by a UUID; anything else is a malformed id, refused before it reaches SQL.
const NODE_TYPES = new Set(['Approval', 'Task', 'Agent', 'User', 'ApiToken', 'WebhookEndpoint', 'Policy', 'ReviewerGroup']);

// The builder only: typed context, scalars, auth scopes (scope-auth first), relay.
export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: { authenticated: boolean; admin: boolean };
  // t.withAuth({ authenticated: true }) resolves with a viewer and their access.
  AuthContexts: { authenticated: SignedInContext; admin: SignedInContext };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    ID: { Input: string; Output: string };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({ authenticated: !!ctx.viewer && !!ctx.access, admin: !!ctx.access?.isAdmin }),
    unauthorizedError: (_parent, ctx) =>
      ctx.viewer ? new DomainError('FORBIDDEN', 'you are not allowed to do this') : new DomainError('UNAUTHENTICATED', 'sign in or send an API token'),
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodesQueryOptions: false,
    // A malformed id is the caller's mistake: say so with the contract's code.
    decodeGlobalID: (globalID) => {
      let decoded: { typename: string; id: string };
      try {
        decoded = decodeGlobalID(globalID);
      } catch {
        decoded = { typename: '', id: '' };
      }
      if (!NODE_TYPES.has(decoded.typename) || !isUuid(decoded.id)) {
        throw new DomainError('BAD_USER_INPUT', `not a valid id: ${JSON.stringify(globalID.slice(0, 80))}`);
      }
      return decoded;
    },
  },
});

builder.addScalarType(
  'DateTime',
  new GraphQLScalarType<Date, string>({
    name: 'DateTime',
    description: 'An RFC 3339 timestamp in UTC',
    serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString()),
    parseValue: (v) => {
      const d = new Date(String(v));
      if (Number.isNaN(d.getTime())) throw new DomainError('BAD_USER_INPUT', 'invalid DateTime');
      return d;
    },
  }),
);

const atBuild: (() => void)[] = [];
/**
 * A type whose definition needs every module's registrations (the enum of agent kinds): defined
 * once every module was imported, just before the schema is built (graphql/schema.ts).
 */
export function defineAtBuild(define: () => void): void {
  atBuild.push(define);
}
export function runBuildDefinitions(): void {
  for (const define of atBuild.splice(0)) define();
}

function literal(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literal);
    case Kind.OBJECT: {
      const out: Record<string, unknown> = {};
      for (const f of ast.fields) Object.defineProperty(out, f.name.value, { value: literal(f.value), enumerable: true, writable: true, configurable: true });
      return out;
    }
    default:
      throw new DomainError('BAD_USER_INPUT', 'variables are not allowed inside JSON literals');
  }
}

builder.addScalarType(
  'JSON',
  new GraphQLScalarType({
    name: 'JSON',
    description: 'Any JSON value',
    serialize: (v) => v,
    parseValue: (v) => v,
    parseLiteral: (ast) => literal(ast),
  }),
);

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
