import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/repo-root.js';
import { cells, readFromTree, testTitles, titleMatches } from '../support/test-titles.js';

// docs/CONFORMANCE.md names, for every seed clause, the code that implements it and the test that
// checks it. Its citations are checked here against the tree, in the format the top of that page
// describes:
//
// - Test column: a path under server/test/ (or under the repository root when it starts with
//   web/), then the start of one or more test titles, each between “ and ”. A title is read from
//   the test file with the TypeScript parser: the first argument of every describe/it/test call
//   (also .each, .skip, .only, .concurrent and the like). A cited title matches a title when the
//   title starts with the text before its first … and every later piece (between …) follows in
//   order; a trailing … marks a cut. Each describe and each test is matched on its own title, not
//   joined with the titles of the describes around it: the column names one test (or one group)
//   by the words its author gave it.
// - Code column: a path under server/src/ (or the repository root when it starts with web/,
//   scripts/, packages/ or is package.json), then names; every name that is an identifier must
//   occur as a word in the file it follows.
// - "as <row>": the row exists.

const MATRIX = 'docs/CONFORMANCE.md';

interface MatrixRow {
  id: string;
  line: number;
  status: string;
  code: string;
  test: string;
}

const ROW_ID = /^\d{3}-[a-z0-9-]+$/;

/** The rows of the matrix: every table row whose first cell is a row id (000-…, 001-…). */
function matrixRows(markdown: string): MatrixRow[] {
  const rows: MatrixRow[] = [];
  markdown.split('\n').forEach((text, i) => {
    if (!text.startsWith('|')) return;
    const c = cells(text);
    if (c.length !== 5 || !ROW_ID.test(c[0]!)) return;
    rows.push({ id: c[0]!, line: i + 1, status: c[2]!, code: c[3]!, test: c[4]! });
  });
  return rows;
}

/** The rows of "Limits the seeds do not state": their Where column is written like the Code column. */
function limitRows(markdown: string): MatrixRow[] {
  const rows: MatrixRow[] = [];
  let inSection = false;
  markdown.split('\n').forEach((text, i) => {
    if (text.startsWith('## ')) inSection = text === '## Limits the seeds do not state';
    if (!inSection || !text.startsWith('|')) return;
    const c = cells(text);
    if (c.length === 3 && c[2]!.includes('`')) rows.push({ id: `limit "${c[0]}"`, line: i + 1, status: '', code: c[2]!, test: '' });
  });
  return rows;
}

/** The paragraphs outside the tables (the gaps, the rows without a test) as rows of their own: they cite tests too. */
function proseRows(markdown: string): MatrixRow[] {
  const rows: MatrixRow[] = [];
  let paragraph: { line: number; text: string[] } | null = null;
  const end = () => {
    if (paragraph) rows.push({ id: 'prose', line: paragraph.line, status: '', code: '', test: paragraph.text.join(' ') });
    paragraph = null;
  };
  let started = false;
  markdown.split('\n').forEach((text, i) => {
    // Before the first section, the page describes the format (its “ and ” are not a citation).
    started ||= text.startsWith('## ');
    if (!started || text.trim() === '' || text.startsWith('|') || text.startsWith('#')) {
      end();
      return;
    }
    paragraph ??= { line: i + 1, text: [] };
    paragraph.text.push(text);
  });
  end();
  return rows;
}

/** A test file as the Test column writes it (…test.ts, …test.tsx, …e2e.ts). */
const TEST_FILE = /^[\w./-]+\.(?:test|e2e)(?:\.test)?\.tsx?$/;

interface Citation {
  file: string;
  titles: string[];
}

/** The files and title starts a Test cell cites, in order; a title before any file is an error. */
function testCitations(cell: string): { citations: Citation[]; problems: string[] } {
  const citations: Citation[] = [];
  const problems: string[] = [];
  for (const m of cell.matchAll(/`([^`]+)`|“([^”]*)”/g)) {
    if (m[1] !== undefined) {
      if (TEST_FILE.test(m[1])) citations.push({ file: m[1], titles: [] });
    } else if (citations.length === 0) {
      problems.push(`the title “${m[2]}” follows no test file`);
    } else {
      citations.at(-1)!.titles.push(m[2]!);
    }
  }
  return { citations, problems };
}

/** Where a cited test file is: under server/test/ unless it starts with web/. */
const testFilePath = (file: string) => (file.startsWith('web/') ? file : `server/test/${file}`);

/** Where a cited code file is: under server/src/ unless it starts with web/, scripts/, packages/ or is package.json. */
const codeFilePath = (file: string) => (/^(web|scripts|packages)\/|^package\.json$/.test(file) ? file : `server/src/${file}`);

/** Why each citation of these rows does not hold (empty: they all do). */
function testCitationProblems(rows: MatrixRow[], read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  const titlesOf = new Map<string, string[] | null>();
  for (const row of rows) {
    const { citations, problems: cellProblems } = testCitations(row.test);
    for (const p of cellProblems) problems.push(`${row.id} (line ${row.line}): ${p}`);
    for (const { file, titles } of citations) {
      const path = testFilePath(file);
      if (!titlesOf.has(path)) {
        const text = read(path);
        titlesOf.set(path, text === null ? null : testTitles(path, text));
      }
      const known = titlesOf.get(path);
      if (!known) {
        problems.push(`${row.id} (line ${row.line}): ${file} does not exist (${path})`);
        continue;
      }
      for (const cited of titles) {
        if (!known.some((title) => titleMatches(cited, title))) problems.push(`${row.id} (line ${row.line}): no title of ${file} starts “${cited}”`);
      }
    }
  }
  return problems;
}

const CODE_FILE = /^[\w./-]+\.(?:ts|tsx|mjs|cjs|js|json)$/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** Why each file and name of the Code column does not hold (empty: they all do). */
function codeCitationProblems(rows: MatrixRow[], read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  for (const row of rows) {
    let current: { file: string; text: string | null } | null = null;
    for (const m of row.code.matchAll(/`([^`]+)`/g)) {
      const token = m[1]!;
      if (CODE_FILE.test(token) && (token.includes('/') || token.includes('.'))) {
        const text = read(codeFilePath(token));
        if (text === null) problems.push(`${row.id} (line ${row.line}): ${token} does not exist (${codeFilePath(token)})`);
        current = { file: token, text };
      } else if (current?.text && IDENTIFIER.test(token) && !new RegExp(`(?<![\\w$])${token.replace(/\$/g, '\\$')}(?!\\w)`).test(current.text)) {
        problems.push(`${row.id} (line ${row.line}): \`${token}\` is not in ${current.file}`);
      }
    }
  }
  return problems;
}

/** Rows that say "as <row id>" name a row of the matrix. */
function pointerProblems(rows: MatrixRow[]): string[] {
  const ids = new Set(rows.map((r) => r.id));
  const problems: string[] = [];
  for (const row of rows) {
    for (const cell of [row.code, row.test]) {
      for (const m of cell.matchAll(/\bas (\d{3}-[a-z0-9-]+)/g)) {
        if (!ids.has(m[1]!)) problems.push(`${row.id} (line ${row.line}): "as ${m[1]}" names no row`);
      }
    }
  }
  return problems;
}

describe('docs/CONFORMANCE.md citations', () => {
  const rows = matrixRows(readFileSync(`${REPO_ROOT}${MATRIX}`, 'utf8'));

  it('reads every row of the matrix, and the summary counts them and their status as they are', () => {
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    const summary = new Map<string, string[]>();
    for (const line of readFileSync(`${REPO_ROOT}${MATRIX}`, 'utf8').split('\n')) {
      const c = line.startsWith('|') ? cells(line) : [];
      if (c.length === 6 && ['rows', 'conforms', 'adapted', 'gap'].includes(c[0]!)) summary.set(c[0]!, c.slice(1));
    }
    const count = (status: string | null) => {
      const of = (seed: string) => rows.filter((r) => r.id.startsWith(`${seed}-`) && (status === null || r.status.startsWith(status))).length;
      const perSeed = ['000', '001', '002', '003'].map(of);
      return [...perSeed, perSeed.reduce((a, b) => a + b, 0)].map(String);
    };
    expect(Object.fromEntries(summary)).toEqual({ rows: count(null), conforms: count('conforms'), adapted: count('adapted'), gap: count('gap') });
  });

  it('every cited test file exists and every cited title start matches a test title in that file', () => {
    expect(testCitationProblems(rows, readFromTree)).toEqual([]);
  });

  it('every file of the Code column (and of the Where column of the limits) exists and every name after it occurs in it', () => {
    const limits = limitRows(readFileSync(`${REPO_ROOT}${MATRIX}`, 'utf8'));
    expect(limits.length).toBeGreaterThan(10);
    expect(codeCitationProblems([...rows, ...limits], readFromTree)).toEqual([]);
  });

  it('the tests the paragraphs outside the matrix cite (gaps, rows without a test) exist too', () => {
    expect(testCitationProblems(proseRows(readFileSync(`${REPO_ROOT}${MATRIX}`, 'utf8')), readFromTree)).toEqual([]);
  });

  it('every "as <row>" names a row of the matrix', () => {
    expect(pointerProblems(rows)).toEqual([]);
  });
});

describe('the citation checker', () => {
  const file = `import { describe, it, test } from 'vitest';
describe('outer group', () => {
  describe.each([1, 2])('inner %s', () => {
    it('first test title, long', () => {});
    it.each(['a'])('each %s title', () => {});
  });
  test.skip(\`template \${1 + 1} title\`, () => {});
});`;
  const read = (path: string) => (path === 'server/test/unit/sample.test.ts' ? file : null);
  const row = (test: string): MatrixRow => ({ id: '000-sample', line: 1, status: 'conforms', code: '', test });

  it('reads titles of nested describe, it.each, test.skip and template titles', () => {
    expect(testTitles('sample.test.ts', file)).toEqual(['outer group', 'inner %s', 'first test title, long', 'each %s title', 'template ${1 + 1} title']);
  });

  it('accepts a title start, a cut in the middle and a describe title', () => {
    expect(testCitationProblems([row('`unit/sample.test.ts` “first test…”, “first … long”, “outer group”, “each %s title”')], read)).toEqual([]);
  });

  it('reports a cited title that matches no test, a missing file and a title without a file', () => {
    expect(testCitationProblems([row('`unit/sample.test.ts` “first test title, short…”; `unit/gone.test.ts` “x”')], read)).toEqual([
      '000-sample (line 1): no title of unit/sample.test.ts starts “first test title, short…”',
      '000-sample (line 1): unit/gone.test.ts does not exist (server/test/unit/gone.test.ts)',
    ]);
    expect(testCitationProblems([row('“orphan”')], read)).toEqual(['000-sample (line 1): the title “orphan” follows no test file']);
  });

  it('reports a title whose pieces after a cut are out of order', () => {
    expect(titleMatches('first … title', 'first test title, long')).toBe(true);
    expect(titleMatches('first … long … title', 'first test title, long')).toBe(false);
  });
});
