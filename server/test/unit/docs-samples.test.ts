import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The documentation samples convention (docs/*.md and README.md): a sample lives as a real file
// under docs/samples/ and is embedded right after a marker line `<!-- sample: docs/samples/X -->`
// as a fenced block whose content equals the file exactly, so the tests that run the file test
// what the page shows. In integrator pages every fenced block in a code language must be such a
// sample, unless its info string says `text` or `output` (printed output, placeholders).
// docs/samples-run.test.ts and the topic tests run the files.

const ROOT = new URL('../../../', import.meta.url).pathname;

/** Pages for agent authors and integrators; pages are found by glob, so one written later is checked too. */
const INTEGRATOR_PAGES = [
  'docs/AGENT-AUTHORS.md',
  'docs/COMMAND-APPROVALS.md',
  'docs/EXPORT.md',
  'docs/WEBHOOKS.md',
  'docs/AG-UI.md',
  'docs/CLIENT.md',
  'docs/POLICIES.md',
  'docs/VERIFYING-APPROVALS.md',
  'docs/MCP.md',
];

const CODE_LANGUAGES = new Set(
  'js mjs cjs javascript jsx ts mts cts typescript tsx json jsonc json5 sh bash shell zsh console graphql gql yaml yml toml ini env http python py sql dockerfile html xml css diff'.split(
    ' ',
  ),
);
const EXEMPT = new Set(['text', 'output']);

const MARKER = /^<!--\s*sample:\s*(\S+)\s*-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  info: string;
  content: string;
  /** The marker's path when the line before the fence (blank lines skipped) is a marker. */
  sample: string | null;
}

interface Problem {
  page: string;
  line: number;
  problem: string;
}

/** Fenced blocks of a Markdown page (CommonMark: closed by a fence of the same char, at least as long). */
function fencedBlocks(text: string): { blocks: Block[]; markers: { line: number; path: string; used: boolean }[] } {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  const markers: { line: number; path: string; used: boolean }[] = [];
  let pending: (typeof markers)[number] | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = MARKER.exec(line);
    if (marker) {
      pending = { line: i + 1, path: marker[1]!, used: false };
      markers.push(pending);
      continue;
    }
    const open = FENCE.exec(line);
    if (!open) {
      if (line.trim() !== '') pending = null;
      continue;
    }
    const [, , fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]!);
      if (close && close[2]![0] === fence![0] && close[2]!.length >= fence!.length && close[3]!.trim() === '') break;
      body.push(lines[j]!);
    }
    const content = body.length ? `${body.join('\n')}\n` : '';
    if (pending) pending.used = true;
    blocks.push({ line: i + 1, info: info!.trim(), content, sample: pending?.path ?? null });
    pending = null;
    i = j;
  }
  return { blocks, markers };
}

/** Every problem of one page. `integrator`: every code block must be a sample. */
function checkPage(page: string, text: string, opts: { integrator: boolean; root: string }): Problem[] {
  const problems: Problem[] = [];
  const { blocks, markers } = fencedBlocks(text);
  for (const m of markers) {
    if (!m.used) problems.push({ page, line: m.line, problem: `the marker for ${m.path} is not followed by a fenced block` });
    if (!/^docs\/samples\/[^/]+(\/[^/]+)*$/.test(m.path) || m.path.includes('..'))
      problems.push({ page, line: m.line, problem: `${m.path} is not a file under docs/samples/` });
  }
  for (const b of blocks) {
    if (b.sample) {
      const file = join(opts.root, b.sample);
      if (!existsSync(file)) {
        problems.push({ page, line: b.line, problem: `${b.sample} does not exist` });
      } else if (readFileSync(file, 'utf8') !== b.content) {
        problems.push({ page, line: b.line, problem: `the block differs from ${b.sample} (it must equal the file exactly, final newline included)` });
      }
      continue;
    }
    const language = b.info.split(/\s+/)[0]!.toLowerCase();
    if (opts.integrator && CODE_LANGUAGES.has(language) && !b.info.split(/\s+/).some((w) => EXEMPT.has(w.toLowerCase()))) {
      problems.push({
        page,
        line: b.line,
        problem: `a \`${language}\` block without a sample marker: put it in docs/samples/ with a test that runs it, or say \`text\`/\`output\` in its info string`,
      });
    }
  }
  return problems;
}

function pages(): { page: string; text: string; integrator: boolean }[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return [...docs, 'README.md'].map((page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    // README mixes quick-start shell lines with samples: its markers are checked, not every block.
    const integrator = page !== 'README.md' && (INTEGRATOR_PAGES.includes(page) || fencedBlocks(text).markers.length > 0);
    return { page, text, integrator };
  });
}

const report = (ps: Problem[]) => ps.map((p) => `${p.page}:${p.line}: ${p.problem}`).join('\n');

describe('documentation samples', () => {
  it('every sample marker is followed by a block equal to its file, and every code block of an integrator page is a sample', () => {
    const problems = pages().flatMap((p) => checkPage(p.page, p.text, { integrator: p.integrator, root: ROOT }));
    expect(report(problems)).toBe('');
  });

  it('every file under docs/samples/ is shown by some page', () => {
    const shown = new Set(pages().flatMap((p) => fencedBlocks(p.text).markers.map((m) => m.path)));
    const dir = join(ROOT, 'docs/samples');
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()) : [];
    const paths = files.map((d) => relative(ROOT, join(d.parentPath, d.name)));
    expect(paths.filter((f) => !shown.has(f))).toEqual([]);
  });

  it('the checker finds what it must: a changed block, a missing file, an unmarked code block, a dangling marker', () => {
    const root = ROOT;
    const sample = 'docs/samples/form-reply-part.json'; // one line
    const body = readFileSync(join(ROOT, sample), 'utf8');
    const page = [
      '# t',
      `<!-- sample: ${sample} -->`,
      '```json',
      body.replace('production', 'prod').trimEnd(),
      '```',
      '<!-- sample: docs/samples/nope.mjs -->',
      '```js',
      'x',
      '```',
      '```sh',
      'npm start',
      '```',
      '```text',
      'printed',
      '```',
      '```sh output',
      '$ echo',
      '```',
      `<!-- sample: ${sample} -->`,
      'prose',
      '',
    ].join('\n');
    expect(report(checkPage('docs/X.md', page, { integrator: true, root }))).toBe(
      [
        `docs/X.md:19: the marker for ${sample} is not followed by a fenced block`,
        `docs/X.md:3: the block differs from ${sample} (it must equal the file exactly, final newline included)`,
        'docs/X.md:7: docs/samples/nope.mjs does not exist',
        'docs/X.md:10: a `sh` block without a sample marker: put it in docs/samples/ with a test that runs it, or say `text`/`output` in its info string',
      ].join('\n'),
    );
    // The same page as a plain page: only the markers are held to their files.
    expect(checkPage('docs/X.md', page, { integrator: false, root }).map((p) => p.line)).toEqual([19, 3, 7]);
    // And a correct block passes.
    expect(checkPage('docs/X.md', `<!-- sample: ${sample} -->\n\`\`\`json\n${body}\`\`\`\n`, { integrator: true, root })).toEqual([]);
  });
});
