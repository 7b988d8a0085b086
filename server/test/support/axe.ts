import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core (the devDependency, pinned) run inside the page under test: its source is evaluated in
// the page (no network, no extension; not a <script> tag, which the console's Content Security
// Policy, script-src 'self', rightly refuses, and the page's CSP is not bypassed for the test)
// and axe.run checks the whole document as shown.
// What a browser test asserts on is the serious and critical violations, each with the elements
// it names, so a failure says which rule and where.

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  rule: string;
  impact: string;
  help: string;
  /** The CSS selectors of the elements that fail, with axe's summary of why, one per element. */
  targets: string[];
}

/** The serious and critical axe violations of the page as it is now (axe injected once per document). */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${AXE_SOURCE}\n;true`);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: any[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        rule: v.id as string,
        impact: v.impact as string,
        help: v.help as string,
        targets: (v.nodes as { target: string[]; failureSummary?: string }[]).map(
          (n) => `${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ').trim()}`,
        ),
      }));
  });
}
