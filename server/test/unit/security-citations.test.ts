import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/repo-root.js';
import { cells, readFromTree, testTitles, titleMatches } from '../support/test-titles.js';

// docs/SECURITY.md names the test behind every defence and every finding (issue 22: "every claim
// there names its test"). Its citations are checked here against the tree, as the page writes
// them (the top of "Findings of the second review" says where paths are):
//
// - A test file is a code span ending in .test.ts, .test.tsx or .e2e.ts. It is under the
//   repository root when it starts with server/, web/ or packages/; under server/test/ when it
//   starts with unit/, integration/, e2e/ or fuzz/; a bare file name is in the directory of the
//   test file named before it in the same cell or paragraph; any other path is under
//   server/test/integration/.
// - A test title is quoted ("…" or “…”) after its file. In the test column of a table (a table
//   whose last header is "test") every quoted text is a title of the file before it. Elsewhere a
//   quoted text is a title when only spaces, commas, semicolons or an opening parenthesis stand
//   between it and the file or title before it (so `sending.test.ts`, "admins only", "tenants"
//   names two titles, and "Audit log" below names none).
// - A title is matched as in unit/conformance-citations.test.ts (support/test-titles.ts): the
//   start of a describe or test title as written in the file, … marking a cut; the spaces around
//   a … are part of the cut.
// - Every row of a test table cites at least one test file.

const PAGE = 'docs/SECURITY.md';

/** A piece of the page that cites tests: a table's test cell, or a paragraph (or another cell). */
interface Part {
  line: number;
  text: string;
  /** A test column: every quoted text is a title. */
  testCell: boolean;
}

/** The table rows of test tables with their test cells, and every other stretch of text, as parts. */
function pageParts(markdown: string): { parts: Part[]; testRows: Part[] } {
  const parts: Part[] = [];
  const testRows: Part[] = [];
  let paragraph: { line: number; text: string[] } | null = null;
  let testTable = false;
  let header = true;
  const end = () => {
    if (paragraph) parts.push({ line: paragraph.line, text: paragraph.text.join(' '), testCell: false });
    paragraph = null;
  };
  markdown.split('\n').forEach((text, i) => {
    if (text.startsWith('|')) {
      end();
      const c = cells(text);
      if (header) {
        testTable = c.at(-1) === 'test';
        header = false;
        return;
      }
      if (/^[\s|:-]+$/.test(text)) return;
      const last = testTable ? c.pop()! : null;
      for (const cell of c) parts.push({ line: i + 1, text: cell, testCell: false });
      if (last !== null) {
        const row = { line: i + 1, text: last, testCell: true };
        parts.push(row);
        testRows.push(row);
      }
      return;
    }
    header = true;
    if (text.trim() === '' || text.startsWith('#')) {
      end();
      return;
    }
    paragraph ??= { line: i + 1, text: [] };
    paragraph.text.push(text);
  });
  end();
  return { parts, testRows };
}

const TEST_FILE = /^[\w./-]+\.(?:test\.tsx?|e2e\.ts)$/;

interface Citation {
  /** As the page writes it. */
  file: string;
  /** From the repository root; null when it cannot be told (a bare name with no file before it). */
  path: string | null;
  titles: string[];
}

/** Where a cited test file is, from the repository root. */
function testFilePath(file: string, previous: string | null): string | null {
  if (/^(server|web|packages)\//.test(file)) return file;
  if (/^(unit|integration|e2e|fuzz)\//.test(file)) return `server/test/${file}`;
  if (file.includes('/')) return `server/test/integration/${file}`;
  return previous === null ? null : `${previous.slice(0, previous.lastIndexOf('/') + 1)}${file}`;
}

/** The test files and titles a part cites, in order, and what is wrong with how it cites them. */
function partCitations(part: Part): { citations: Citation[]; problems: string[] } {
  const citations: Citation[] = [];
  const problems: string[] = [];
  // Where the last file or title ended, for a quoted text outside a test cell: a title only right after one.
  let chainEnd = -1;
  for (const m of part.text.matchAll(/`([^`]+)`|"([^"]*)"|“([^”]*)”/g)) {
    const at = m.index;
    if (m[1] !== undefined) {
      if (!TEST_FILE.test(m[1])) continue;
      const path = testFilePath(m[1], citations.at(-1)?.path ?? null);
      if (path === null) problems.push(`the bare file name ${m[1]} follows no test file to take its directory from`);
      citations.push({ file: m[1], path, titles: [] });
      chainEnd = at + m[0].length;
      continue;
    }
    const title = m[2] ?? m[3]!;
    if (part.testCell) {
      if (citations.length === 0) problems.push(`the title "${title}" follows no test file`);
      else citations.at(-1)!.titles.push(title);
    } else if (citations.length > 0 && chainEnd >= 0 && /^[\s,;(]*$/.test(part.text.slice(chainEnd, at))) {
      citations.at(-1)!.titles.push(title);
      chainEnd = at + m[0].length;
    }
  }
  return { citations, problems };
}

/** Why each citation of these parts does not hold (empty: they all do). */
function citationProblems(parts: Part[], read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  const titlesOf = new Map<string, string[] | null>();
  for (const part of parts) {
    const { citations, problems: own } = partCitations(part);
    for (const p of own) problems.push(`line ${part.line}: ${p}`);
    for (const { file, path, titles } of citations) {
      if (path === null) continue;
      if (!titlesOf.has(path)) {
        const text = read(path);
        titlesOf.set(path, text === null ? null : testTitles(path, text));
      }
      const known = titlesOf.get(path);
      if (!known) {
        problems.push(`line ${part.line}: ${file} does not exist (${path})`);
        continue;
      }
      for (const cited of titles) {
        const start = cited.replace(/\s*…\s*/g, '…');
        if (!known.some((title) => titleMatches(start, title))) problems.push(`line ${part.line}: no title of ${file} starts "${cited}"`);
      }
    }
  }
  return problems;
}

describe('docs/SECURITY.md citations', () => {
  const { parts, testRows } = pageParts(readFileSync(`${REPO_ROOT}${PAGE}`, 'utf8'));
  const cited = parts.flatMap((p) => partCitations(p).citations);

  it('reads the test tables and the citations of the whole page', () => {
    // The two findings tables and the two database tables, and the titles they quote.
    expect(testRows.length).toBeGreaterThan(40);
    expect(cited.length).toBeGreaterThan(80);
    expect(cited.flatMap((c) => c.titles).length).toBeGreaterThan(20);
  });

  it('every row of a test table names at least one test file', () => {
    expect(testRows.filter((row) => partCitations(row).citations.length === 0).map((row) => `line ${row.line}: ${row.text || '(empty)'}`)).toEqual([]);
  });

  it('every cited test file exists and every cited title is the start of a test title in that file', () => {
    expect(citationProblems(parts, readFromTree)).toEqual([]);
  });
});

describe('the SECURITY.md citation checker', () => {
  const file = `import { describe, it } from 'vitest';
describe('what the pin finds', () => {
  it('a cut tail (the newest checkpoint deleted) is found, online and in the export', () => {});
  it.each(['a'])('%s carrying 169.254.169.254 is refused', () => {});
});`;
  const read = (path: string) => (path === 'server/test/integration/audit/pin.test.ts' || path === 'server/test/unit/net.test.ts' ? file : null);
  const cell = (text: string): Part => ({ line: 1, text, testCell: true });
  const prose = (text: string): Part => ({ line: 1, text, testCell: false });

  it('resolves paths as the page writes them', () => {
    expect(
      partCitations(cell('`audit/pin.test.ts`, `server/test/unit/a.test.ts`, `b.test.ts`, `unit/c.test.ts`, `web/src/D.test.tsx`')).citations.map(
        (c) => c.path,
      ),
    ).toEqual([
      'server/test/integration/audit/pin.test.ts',
      'server/test/unit/a.test.ts',
      'server/test/unit/b.test.ts',
      'server/test/unit/c.test.ts',
      'web/src/D.test.tsx',
    ]);
  });

  it('accepts a title start, a cut with spaces around it, a describe title and an each title', () => {
    expect(
      citationProblems(
        [cell('`audit/pin.test.ts` "a cut tail …", "a cut tail … online …", "what the pin finds"; `unit/net.test.ts` "%s carrying 169.254.169.254 …"')],
        read,
      ),
    ).toEqual([]);
  });

  it('reports a title that is in no test of its file, a missing file, a title before any file and a bare name with no directory', () => {
    expect(citationProblems([cell('`audit/pin.test.ts` "a cut head …"; `audit/gone.test.ts` "x"')], read)).toEqual([
      'line 1: no title of audit/pin.test.ts starts "a cut head …"',
      'line 1: audit/gone.test.ts does not exist (server/test/integration/audit/gone.test.ts)',
    ]);
    expect(citationProblems([cell('"orphan" `audit/pin.test.ts`')], read)).toEqual(['line 1: the title "orphan" follows no test file']);
    expect(citationProblems([prose('see `pin.test.ts`')], read)).toEqual([
      'line 1: the bare file name pin.test.ts follows no test file to take its directory from',
    ]);
  });

  it('outside a test cell, takes a quoted text as a title only right after its file or another title', () => {
    const { citations } = partCitations(prose('(`audit/pin.test.ts`, "a cut tail …", "what the pin finds"); see "Audit log" below, and ("elsewhere")'));
    expect(citations).toEqual([
      { file: 'audit/pin.test.ts', path: 'server/test/integration/audit/pin.test.ts', titles: ['a cut tail …', 'what the pin finds'] },
    ]);
  });

  it('reports a row of a test table that cites no test', () => {
    const { testRows } = pageParts(
      '| it can | it cannot | test |\n|---|---|---|\n| a | b | `audit/pin.test.ts` |\n| c | d | |\n\n| x | y |\n|---|---|\n| e | f |\n',
    );
    expect(testRows.map((r) => [r.line, partCitations(r).citations.length])).toEqual([
      [3, 1],
      [4, 0],
    ]);
  });
});
