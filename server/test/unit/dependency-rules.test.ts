import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The dependency check of `npm run lint` and .ci/run (.dependency-cruiser.cjs, explained in
// docs/ARCHITECTURE.md "Modules and what each may import"), run as CI runs it: the
// dependency-cruiser CLI with the committed configuration.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPCRUISE = 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs';
const CYCLE = 'server/test/fixtures/cycle';
/** A tree shaped like server/src (two domains), cruised from its own folder so the rules' paths apply to it. */
const FACES = fileURLToPath(new URL('../fixtures/faces/', import.meta.url));
const CONFIG = fileURLToPath(new URL('../../../.dependency-cruiser.cjs', import.meta.url));

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
function depcruise(paths: string[], outputType: 'err' | 'json', cwd = ROOT): Promise<{ exitCode: number; output: string }> {
  const args = [`${ROOT}${DEPCRUISE}`, ...paths, '--config', CONFIG, '--output-type', outputType];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
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

  it("fail the check on an import past another domain's face (fixtures/faces: decisions/past-face.ts -> approvals/service.ts)", async () => {
    const check = await depcruise(['server/src'], 'err', FACES);
    expect(check.exitCode, check.output).not.toBe(0);

    const { output } = await depcruise(['server/src'], 'json', FACES);
    const violations = (JSON.parse(output) as { summary: { violations: Violation[] } }).summary.violations;
    // The import through the face (decisions/through-face.ts -> approvals/module.ts) is not one of them.
    expect(violations.map((v) => [v.rule.name, v.from, v.to])).toEqual([
      ['another-domain-only-through-its-face', 'server/src/decisions/past-face.ts', 'server/src/approvals/service.ts'],
    ]);
  });

  it('leave modules.ts the only file that imports every domain', { timeout: 180_000 }, async () => {
    const { output } = await depcruise(['server/src'], 'json');
    const cruised = JSON.parse(output) as { modules: { source: string; dependencies: { resolved: string }[] }[] };
    const domainOf = (path: string) => /^server\/src\/([^/]+)\/(?:.*\/)?module\.ts$/.exec(path)?.[1] ?? null;
    const faces = new Set(cruised.modules.map((m) => domainOf(m.source)).filter((d): d is string => d !== null));
    expect(faces.size).toBeGreaterThan(10);
    const importingEvery = cruised.modules
      .filter((m) => {
        const reached = new Set(m.dependencies.map((d) => /^server\/src\/([^/]+)\//.exec(d.resolved)?.[1]).filter((d) => d && faces.has(d)));
        return reached.size === faces.size;
      })
      .map((m) => m.source);
    expect(importingEvery).toEqual(['server/src/modules.ts']);
  });

  it('hold for the server and the console as they are', { timeout: 180_000 }, async () => {
    const check = await depcruise(['server/src', 'web/src'], 'err');
    expect(check.exitCode, check.output).toBe(0);
    expect(check.output).toContain('no dependency violations found');
  });
});
