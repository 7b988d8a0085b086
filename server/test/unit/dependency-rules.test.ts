import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The dependency check of `npm run lint` and .ci/run (.dependency-cruiser.cjs, explained in
// docs/ARCHITECTURE.md "Modules and what each may import"), run as CI runs it: the
// dependency-cruiser CLI with the committed configuration.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPCRUISE = 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs';
const CYCLE = 'server/test/fixtures/cycle';

interface Violation {
  rule: { name: string; severity: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

/**
 * Cruises `paths` with the project's rules. `err` is the report `npm run lint` prints, whose exit
 * code fails CI; `json` (which always exits 0) names each violation.
 */
function depcruise(paths: string[], outputType: 'err' | 'json'): Promise<{ exitCode: number; output: string }> {
  const args = [DEPCRUISE, ...paths, '--config', '.dependency-cruiser.cjs', '--output-type', outputType];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      const exitCode = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ exitCode, output: stdout + stderr });
    });
  });
}

describe('dependency rules', () => {
  it('fail the check on an import cycle (fixtures/cycle: a.ts <-> b.ts)', async () => {
    const check = await depcruise([CYCLE], 'err');
    expect(check.exitCode, check.output).not.toBe(0);

    const { output } = await depcruise([CYCLE], 'json');
    const violations = (JSON.parse(output) as { summary: { violations: Violation[] } }).summary.violations;
    expect(violations.map((v) => [v.rule.name, v.rule.severity])).toEqual([['no-circular', 'error']]);
    const [cycle] = violations;
    const modules = [cycle!.from, ...(cycle!.cycle ?? []).map((step) => step.name)];
    expect(new Set(modules)).toEqual(new Set([`${CYCLE}/a.ts`, `${CYCLE}/b.ts`]));
  });

  it('hold for the server and the console as they are', { timeout: 180_000 }, async () => {
    const check = await depcruise(['server/src', 'web/src'], 'err');
    expect(check.exitCode, check.output).toBe(0);
    expect(check.output).toContain('no dependency violations found');
  });
});
