import type { CodegenConfig } from '@graphql-codegen/cli';

// Generates web/src/gql from schema.graphql and the console's colocated graphql() documents
// (client preset, fragment masking). The console imports types only from there. The unmask
// function is getFragmentData, not useFragment: it is no hook, and the inbox also calls it in
// subscription handlers and effects.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**/*'],
  ignoreNoDocuments: true,
  generates: {
    'web/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: { unmaskFunctionName: 'getFragmentData' } },
      config: { scalars: { DateTime: 'string', JSON: 'unknown' }, enumsAsTypes: true, useTypeImports: true },
    },
  },
};
export default config;
