import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, print, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { generatedDocuments, inlineDocuments } from '../../../web/gql-documents.js';
import { firstLoadFiles } from '../../scripts/console-bytes.js';

// The console's build (docs/PERFORMANCE.md, "Console bytes"): each graphql() document is
// written into the module that uses it (web/gql-documents.ts), so lazily loaded pages carry
// their own; the bench counts the first load from the build manifest's static imports.

const WEB_SRC = resolve(fileURLToPath(import.meta.url), '../../../../web/src');
const GQL = join(WEB_SRC, 'gql');
// The run-time map (src/gql/gql.ts), as the dev server and the console's tests use it; imported
// by a computed path because the console's sources are typechecked by web/tsconfig.json.
const { graphql } = (await import(join(GQL, 'gql.ts'))) as { graphql: (source: string) => DocumentNode };
const documents = generatedDocuments(readFileSync(join(GQL, 'gql.ts'), 'utf8'), readFileSync(join(GQL, 'graphql.ts'), 'utf8'));

function consoleModules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === GQL ? [] : consoleModules(path);
    return /\.tsx?$/.test(e.name) && !/\.test(-support)?\.tsx?$/.test(e.name) ? [path] : [];
  });
}

describe('graphql() documents resolved at build time', () => {
  const sources = consoleModules(WEB_SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\bgraphql\(\s*`([^`]*)`\s*\)/g)].map((m) => ({ file, source: m[1]! })),
  );

  it('every document of the console becomes the text of the document the run-time map returns', () => {
    expect(sources.length).toBeGreaterThan(50);
    for (const { file, source } of sources) {
      const built = inlineDocuments(`graphql(\`${source}\`)`, file, documents);
      const text = JSON.parse(built!.trim()) as string;
      expect(print(parse(text)), file).toBe(print(graphql(source)));
    }
  });

  it('keeps every line where it was, and leaves modules without documents alone', () => {
    const { file } = sources.find((s) => s.file.endsWith('Inbox.tsx'))!;
    const code = readFileSync(file, 'utf8');
    const built = inlineDocuments(code, file, documents)!;
    expect(built.split('\n').length).toBe(code.split('\n').length);
    expect(built).not.toMatch(/\bgraphql\(`/);
    expect(inlineDocuments("export const x = 'graphql';", 'x.ts', documents)).toBeNull();
  });

  it('fails the build when a document is not generated (codegen not run)', () => {
    expect(() => inlineDocuments('graphql(`\n  query NotGenerated {\n    viewer {\n      id\n    }\n  }\n`)', 'Stale.tsx', documents)).toThrow(
      /npm run codegen/,
    );
  });
});

describe('first load of the console (bench)', () => {
  it('follows static imports from the entry, not the pages fetched on first visit', () => {
    const manifest = {
      'index.html': { file: 'assets/index.js', isEntry: true, imports: ['_shared.js'], dynamicImports: ['src/pages/Policies.tsx'] },
      '_shared.js': { file: 'assets/shared.js', imports: ['_runtime.js'] },
      '_runtime.js': { file: 'assets/runtime.js' },
      'src/pages/Policies.tsx': { file: 'assets/Policies.js', isDynamicEntry: true, imports: ['_shared.js', '_policy-only.js'] },
      '_policy-only.js': { file: 'assets/policy-only.js' },
    };
    expect(firstLoadFiles(manifest).sort()).toEqual(['assets/index.js', 'assets/runtime.js', 'assets/shared.js']);
  });
});
