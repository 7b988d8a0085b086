import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents from schema.graphql (client preset), one output per client:
// - web/src/gql: the console's colocated graphql() documents, with fragment masking. The
//   console imports types only from there. Its unmask function is getFragmentData, not
//   useFragment: it is no hook, and the inbox also calls it in subscription handlers and effects.
// - server/src/commands/cli/gql: the taskbay CLI's (guard, approvals), as typed strings
//   (documentMode string: no graphql-js at run time, so `guard` stays small and fast).
const scalars = { DateTime: 'string', JSON: 'unknown' };
const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: true,
  generates: {
    'web/src/gql/': {
      documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**/*'],
      preset: 'client',
      presetConfig: { fragmentMasking: { unmaskFunctionName: 'getFragmentData' } },
      config: { scalars, enumsAsTypes: true, useTypeImports: true },
    },
    'server/src/commands/cli/gql/': {
      documents: ['server/src/commands/cli/*.ts'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { scalars, enumsAsTypes: true, useTypeImports: true, documentMode: 'string', onlyOperationTypes: true, emitLegacyCommonJSImports: false },
    },
  },
};
export default config;
