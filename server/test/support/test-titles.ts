import { existsSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { REPO_ROOT } from './repo-root.js';

// What the checks of the docs' test citations share (unit/conformance-citations.test.ts for
// docs/CONFORMANCE.md, unit/security-citations.test.ts for docs/SECURITY.md): the titles a test
// file declares, read with the TypeScript parser, and how a cited title start matches one.

/** Splits a Markdown table row on the pipes that are not escaped (`\|` stays in its cell). */
export function cells(line: string): string[] {
  return line
    .replace(/^\|/, '')
    .replace(/\|\s*$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

const TEST_FUNCTIONS = new Set(['describe', 'it', 'test', 'suite']);

/** The function a call names, through `.each(...)`, `.skip`, `.only`, `.concurrent`, `.skipIf(...)` and tagged templates. */
function calledFunction(callee: ts.Expression): string | null {
  let e: ts.Expression = callee;
  for (;;) {
    if (ts.isIdentifier(e)) return e.text;
    if (ts.isPropertyAccessExpression(e)) e = e.expression;
    else if (ts.isCallExpression(e)) e = e.expression;
    else if (ts.isTaggedTemplateExpression(e)) e = e.tag;
    else return null;
  }
}

/** A title as written: a string, or a template with its `${…}` kept as source text. */
function titleText(arg: ts.Expression, source: ts.SourceFile): string | null {
  if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) return arg.text;
  if (ts.isTemplateExpression(arg)) {
    return arg.head.text + arg.templateSpans.map((s) => `\${${s.expression.getText(source)}}${s.literal.text}`).join('');
  }
  return null;
}

/** Every describe/it/test title of a test file (also .each, .skip, .only and the like), read with the TypeScript parser. */
export function testTitles(fileName: string, text: string): string[] {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const titles: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const fn = calledFunction(node.expression);
      if (fn && TEST_FUNCTIONS.has(fn)) {
        const title = titleText(node.arguments[0]!, source);
        if (title !== null) titles.push(title);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return titles;
}

/**
 * Whether a cited title start matches a test title: the title starts with the text before the
 * first …, and every later piece (between …) follows in order; a trailing … marks a cut.
 */
export function titleMatches(cited: string, title: string): boolean {
  const [first, ...rest] = cited.split('…');
  if (!title.startsWith(first!)) return false;
  let at = first!.length;
  for (const piece of rest) {
    const found = title.indexOf(piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return true;
}

/** A file of the repository by its path from the root, or null when there is none. */
export const readFromTree = (path: string): string | null => {
  const full = `${REPO_ROOT}${path}`;
  return existsSync(full) ? readFileSync(full, 'utf8') : null;
};
