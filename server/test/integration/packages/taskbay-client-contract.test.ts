import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '@graphql-codegen/cli';
import { buildSchema, type DocumentNode, type FieldNode, Kind, type OperationDefinitionNode, parse, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../../../packages/taskbay-client/codegen.js';
import * as Documents from '../../../../packages/taskbay-client/src/gql/graphql.js';
import { CONTRACT_ERROR_CODES } from '../../../../packages/taskbay-client/src/errors.js';
import { ERROR_CODES } from '../../../src/errors.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';
import { REPO_ROOT } from '../../support/repo-root.js';

// What keeps @taskbay/client whole as the contract grows: an operation document for every root
// field of schema.graphql (a new field without one fails here), generated code that matches the
// documents and the schema (`npm run codegen` refreshes it), the contract's error codes, and
// documents the server accepts under its request limits.

const PKG = join(REPO_ROOT, 'packages/taskbay-client');
const OPERATIONS = join(PKG, 'src/operations');

function operationDocuments(): { file: string; document: DocumentNode }[] {
  return readdirSync(OPERATIONS)
    .filter((f) => f.endsWith('.graphql'))
    .map((file) => ({ file, document: parse(readFileSync(join(OPERATIONS, file), 'utf8')) }));
}

describe('@taskbay/client covers the contract', () => {
  it('has one operation per root field of schema.graphql (Query, Mutation, Subscription), named after it', () => {
    const schema = buildSchema(readFileSync(join(REPO_ROOT, 'schema.graphql'), 'utf8'));
    const roots = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() };
    const covered = new Map<string, string>();
    for (const { file, document } of operationDocuments()) {
      for (const def of document.definitions) {
        if (def.kind !== Kind.OPERATION_DEFINITION) continue;
        const op = def as OperationDefinitionNode;
        const field = (op.selectionSet.selections[0] as FieldNode).name.value;
        const key = `${op.operation} ${field}`;
        expect(covered.has(key), `${key} has two operations (${covered.get(key)} and ${file})`).toBe(false);
        covered.set(key, file);
      }
    }
    const missing: string[] = [];
    let fields = 0;
    for (const [operation, type] of Object.entries(roots)) {
      for (const name of Object.keys(type?.getFields() ?? {})) {
        fields++;
        if (!covered.has(`${operation} ${name}`)) missing.push(`${operation} ${name}`);
      }
    }
    expect(missing, 'root fields without an operation in packages/taskbay-client/src/operations').toEqual([]);
    expect(covered.size).toBe(fields);
  });

  it('the committed generated code is current (run `npm run codegen` after changing schema.graphql or an operation)', async () => {
    const outputs = await generate({ ...config, silent: true, errorsOnly: true } as never, false);
    expect(outputs.length).toBe(Object.keys(config.generates).length);
    for (const { filename, content } of outputs as { filename: string; content: string }[]) {
      expect(readFileSync(filename, 'utf8'), `${filename} is not what codegen writes`).toBe(content);
    }
  }, 60_000);

  it("its error codes are the server's contract codes", () => {
    expect([...CONTRACT_ERROR_CODES].sort()).toEqual([...ERROR_CODES].sort());
  });

  it('docs/CLIENT.md lists every code of the contract, each once, in its Errors table', () => {
    const doc = readFileSync(join(fileURLToPath(new URL('../../../../docs/CLIENT.md', import.meta.url))), 'utf8');
    const rows = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!);
    expect(rows.sort()).toEqual([...ERROR_CODES, 'INTERNAL_SERVER_ERROR', 'NETWORK_ERROR'].sort());
  });
});

describe('@taskbay/client operations and the server', () => {
  let t: TestInstance;
  beforeAll(async () => {
    t = await startTestInstance();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('every operation passes the server’s parsing and validation, request limits included', () => {
    const documents = Object.entries(Documents).filter(([name]) => name.endsWith('Document')) as [string, DocumentNode][];
    expect(documents.length).toBeGreaterThan(40);
    const refusals = (query: string): string[] => {
      const request = new Request('http://taskbay.test/graphql', { method: 'POST' });
      const { parse: parseLimited, validate, schema } = t.instance.yoga.getEnveloped({ request, params: { query } });
      try {
        return validate(schema, parseLimited(query)).map((e: { message: string }) => e.message);
      } catch (e) {
        return [(e as Error).message];
      }
    };
    for (const [name, document] of documents) expect(refusals(print(document)).map((m) => `${name}: ${m}`)).toEqual([]);
    // The same path refuses a document over the limits (so the check above checks them).
    expect(refusals(`{ viewer { ${'id name email '.repeat(200)} } }`)).toEqual([expect.stringMatching(/tokens; the limit is/)]);
  });
});
