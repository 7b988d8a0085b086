import type { CodegenConfig } from '@graphql-codegen/cli';

// Generates web/src/gql from schema.graphql and the console's colocated graphql() documents
// (client preset, fragment masking). The console imports types only from there.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**/*'],
  ignoreNoDocuments: true,
  generates: {
    'web/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: { unmaskFunctionName: 'useFragment' } },
      config: { scalars: { DateTime: 'string', JSON: 'unknown' }, enumsAsTypes: true, useTypeImports: true },
    },
  },
};
export default config;
