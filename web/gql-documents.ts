import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { print, stripIgnoredCharacters, type DocumentNode } from 'graphql';

// Build step for the client preset's documents (what its Babel plugin does, without Babel).
// At run time `graphql(source)` looks the source up in the map in src/gql/gql.ts, which holds
// every document of the console as a syntax tree: any module that calls graphql() pulls all of
// them into its chunk, so a lazily loaded page's documents would still load with the inbox.
// Here each `graphql(`...`)` call is replaced, in the calling module, by the document the map
// would return (operation and the fragments it spreads) as compact GraphQL text: urql accepts
// text and parses it once per document (as it prints a tree once to key it), and the text is a
// seventh of the tree's size (half, compressed). (Importing the trees from src/gql/graphql.ts instead would not
// split them: that file is one module, and a module goes to one chunk.) The map drops out of
// the bundle. The types do not change: TypeScript still sees graphql()'s typed documents.

const GQL_DIR = join(import.meta.dirname, 'src/gql');
/** graphql(`...`) with a plain template: the only form codegen reads in this project. */
const CALL = /\bgraphql\(\s*`([^`]*)`\s*\)/g;
/** One entry of the map in gql.ts: `"<source as a JSON string>": types.NameDocument,`. */
const ENTRY = /^\s*("(?:[^"\\]|\\.)*"): types\.(\w+),$/gm;
/** One document in graphql.ts: `export const NameDocument = {<syntax tree as JSON>} as unknown as DocumentNode<...>;`. */
const DOCUMENT = /^export const (\w+) = (\{.*\}) as unknown as DocumentNode<.*>;$/gm;

/** Source text -> its generated document as a JS string literal, as the map in gql.ts pairs them. */
export function generatedDocuments(gqlTs: string, graphqlTs: string): Map<string, string> {
  const start = gqlTs.indexOf('const documents');
  const end = gqlTs.indexOf('\n};', start);
  if (start < 0 || end < 0) throw new Error('src/gql/gql.ts: no documents map (run `npm run codegen`)');
  const bodies = new Map<string, string>();
  for (const m of graphqlTs.matchAll(DOCUMENT)) bodies.set(m[1]!, JSON.stringify(stripIgnoredCharacters(print(JSON.parse(m[2]!) as DocumentNode))));
  const documents = new Map<string, string>();
  for (const m of gqlTs.slice(start, end).matchAll(ENTRY)) {
    const body = bodies.get(m[2]!);
    if (!body) throw new Error(`src/gql/graphql.ts: no document ${m[2]} (run \`npm run codegen\`)`);
    documents.set(JSON.parse(m[1]!) as string, body);
  }
  return documents;
}

/** The module with every graphql(`...`) call replaced by its document; null when it has none. */
export function inlineDocuments(code: string, id: string, documents: Map<string, string>): string | null {
  let found = false;
  const out = code.replace(CALL, (call, source: string) => {
    if (source.includes('${') || source.includes('\\')) throw new Error(`${id}: graphql() with an interpolation or escape is not supported`);
    const document = documents.get(source);
    if (!document) throw new Error(`${id}: a graphql() document is not in src/gql (run \`npm run codegen\`)`);
    found = true;
    // The same number of lines, so positions after the call do not move.
    return `${document}${'\n'.repeat(call.split('\n').length - 1)}`;
  });
  return found ? out : null;
}

/** Vite plugin (builds only: the dev server keeps the run-time map, which urql reads alike). */
export function gqlDocumentsPlugin() {
  let documents: Map<string, string> | undefined;
  return {
    name: 'taskbay-gql-documents',
    apply: 'build' as const,
    enforce: 'pre' as const,
    buildStart() {
      const read = (name: string) => readFileSync(join(GQL_DIR, name), 'utf8');
      documents = generatedDocuments(read('gql.ts'), read('graphql.ts'));
    },
    transform(code: string, id: string) {
      if (!/\.tsx?$/.test(id) || id.startsWith(GQL_DIR) || !code.includes('graphql(`')) return null;
      const out = inlineDocuments(code, id, documents!);
      return out === null ? null : { code: out, map: null };
    },
  };
}
