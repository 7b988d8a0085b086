import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerProxy } from '../../support/bearer-proxy.js';
import { createMember, startTestInstance, type TestInstance } from '../../support/harness.js';

// The MCP conformance suite (@modelcontextprotocol/conformance, the protocol's own server
// scenarios) against /mcp. The suite needs Node 22 (fs.globSync): it runs with this Node when it
// is 22 or later (the Node 22 and 24 runs of .ci/run), else with TASKBAY_TEST_NODE22 when set,
// and is skipped otherwise. The runner sends no Authorization header, so a loopback relay adds
// the member's token (support/bearer-proxy.ts) and passes Host and Origin through unchanged.

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

const major = Number(process.versions.node.split('.')[0]);
const node22 = major >= 22 ? process.execPath : (process.env.TASKBAY_TEST_NODE22 ?? null);
const runner = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** One scenario's checks, as the runner saves them (-o). */
async function runScenario(url: string, scenario: string): Promise<{ code: number; checks: Check[]; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'taskbay-conformance-'));
  try {
    const child = spawn(node22!, [runner, 'server', '--url', url, '--scenario', scenario, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (f === 'checks.json') files.push(p);
      }
    };
    walk(out);
    const checks = files.flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as Check[]);
    return { code, checks, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

let t: TestInstance;
let proxy: Awaited<ReturnType<typeof bearerProxy>>;

beforeAll(async () => {
  if (!node22) return;
  t = await startTestInstance();
  const member = await createMember(t);
  proxy = await bearerProxy(t.instance.url, member.token);
});
afterAll(async () => {
  await proxy?.close();
  await t?.stop();
});

describe.skipIf(!node22)('MCP conformance: the server scenarios against /mcp', () => {
  for (const scenario of SCENARIOS) {
    it(scenario, async () => {
      const r = await runScenario(`${proxy.url}/mcp`, scenario);
      expect(r.checks.length, r.output).toBeGreaterThan(0);
      expect(
        r.checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO'),
        r.output,
      ).toEqual([]);
      expect(r.code, r.output).toBe(0);
    }, 120_000);
  }
});
