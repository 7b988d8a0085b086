import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerProxy } from '../../support/bearer-proxy.js';
import { createMember, startTestInstance, type TestInstance } from '../../support/harness.js';
import { type RunningUpstream, startServerEverything } from '../../support/mcp-upstream.js';

// The MCP conformance suite (@modelcontextprotocol/conformance, the protocol's own server
// scenarios) against /mcp. The suite needs Node 22 (fs.globSync): it runs with this Node when it
// is 22 or later (the Node 22 and 24 runs of .ci/run), else with TASKBAY_TEST_NODE22 when set,
// and is skipped otherwise. The runner sends no Authorization header, so a loopback relay adds
// the member's token (support/bearer-proxy.ts) and passes Host and Origin through unchanged.
// The same run compares the gateway with the server behind it: server-everything directly, and
// through /mcp/servers/everything with every call passed.

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

const major = Number(process.versions.node.split('.')[0]);
const node22 = major >= 22 ? process.execPath : (process.env.TASKBAY_TEST_NODE22 ?? null);
const runner = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** The checks of one scenario (or, without one, of every server scenario), by scenario, as the runner saves them (-o). */
async function runConformance(url: string, scenario?: string): Promise<{ code: number; checks: Check[]; byScenario: Map<string, Check[]>; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'taskbay-conformance-'));
  try {
    const child = spawn(node22!, [runner, 'server', '--url', url, ...(scenario ? ['--scenario', scenario] : []), '-o', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    const byScenario = new Map<string, Check[]>();
    for (const dir of readdirSync(out)) {
      const file = join(out, dir, 'checks.json');
      if (!statSync(join(out, dir)).isDirectory()) continue;
      // A scenario's folder is server-<scenario>-<timestamp>.
      const name = dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
      byScenario.set(name, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
    }
    return { code, checks: [...byScenario.values()].flat(), byScenario, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

let t: TestInstance;
let proxy: Awaited<ReturnType<typeof bearerProxy>>;
let upstream: RunningUpstream;

beforeAll(async () => {
  if (!node22) return;
  upstream = await startServerEverything();
  t = await startTestInstance();
  const member = await createMember(t);
  proxy = await bearerProxy(t.instance.url, member.token);
  // Every call passes: this compares the protocol through the gateway, not approvals.
  const r = await t.gql(`mutation($url: String!) { registerMcpServer(name: "everything", url: $url, rules: [{ condition: "", outcome: PASS }]) { id } }`, {
    url: upstream.url,
  });
  expect(r.errors).toBeUndefined();
});
afterAll(async () => {
  await proxy?.close();
  await t?.stop();
  await upstream?.stop();
});

const passed = (checks: Check[]) => checks.length > 0 && checks.every((c) => c.status === 'SUCCESS' || c.status === 'INFO');

describe.skipIf(!node22)('MCP conformance: the server scenarios against /mcp', () => {
  for (const scenario of SCENARIOS) {
    it(scenario, async () => {
      const r = await runConformance(`${proxy.url}/mcp`, scenario);
      expect(r.checks.length, r.output).toBeGreaterThan(0);
      expect(
        r.checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO'),
        r.output,
      ).toEqual([]);
      expect(r.code, r.output).toBe(0);
    }, 120_000);
  }

  it('every server scenario that passes against server-everything directly passes through the gateway, in the same run', async () => {
    const direct = await runConformance(upstream.url);
    const through = await runConformance(`${proxy.url}/mcp/servers/everything`);
    const passing = (r: typeof direct) =>
      [...r.byScenario]
        .filter(([, checks]) => passed(checks))
        .map(([name]) => name)
        .sort();
    expect(direct.byScenario.size, direct.output).toBeGreaterThan(20);
    expect(passing(direct).length, direct.output).toBeGreaterThan(0);
    const lost = passing(direct).filter((name) => !passing(through).includes(name));
    expect(lost, through.output).toEqual([]);
  }, 180_000);
});
