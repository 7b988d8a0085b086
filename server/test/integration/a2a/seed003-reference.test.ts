import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/repo-root.js';

// Seed 003 "Walkthrough: the fixture agent": "node scripts/fixture-form-agent.mjs 4010 ... It
// prints these Agent Card URLs: .../form/card.json, .../plain/card.json, .../invalid/card.json.
// The server also serves showcase, approver, a2ui, rogue and unknown variants." Run as written
// (plain node, a positional port; 0 picks a free one here).

let child: ChildProcess | null = null;
afterEach(() => {
  child?.kill('SIGTERM');
  child = null;
});

/** Starts the command and resolves with its stdout once `until` matches it. */
function run(args: string[], until: RegExp): Promise<{ out: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (until.test(out)) resolve({ out, code: null });
    });
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ out, code }));
    child.on('error', reject);
  });
}

describe('seed 003 reference command', () => {
  it('`node scripts/fixture-form-agent.mjs PORT` prints form, plain and invalid first and serves every variant', async () => {
    const { out } = await run(['scripts/fixture-form-agent.mjs', '0'], /scripted\/card\.json/);
    const urls = [...out.matchAll(/http:\/\/127\.0\.0\.1:(\d+)\/(\w+)\/card\.json/g)];
    expect(urls.slice(0, 3).map((m) => m[2])).toEqual(['form', 'plain', 'invalid']);
    expect(urls.map((m) => m[2])).toEqual(expect.arrayContaining(['showcase', 'approver', 'a2ui', 'rogue', 'unknown']));
    for (const m of urls.filter((u) => ['form', 'plain', 'invalid', 'showcase'].includes(u[2]!))) {
      const card = (await (await fetch(m[0])).json()) as { name: string; supportedInterfaces: { protocolBinding: string; protocolVersion: string }[] };
      expect(card.name).toBe(`Taskbay fixture: ${m[2]}`);
      // "The fixture's card sets protocolVersion 1.0 and protocolBinding JSONRPC."
      expect(card.supportedInterfaces).toContainEqual(expect.objectContaining({ protocolBinding: 'JSONRPC', protocolVersion: '1.0' }));
    }
  });

  it('refuses a port that is not a number with a usage line', async () => {
    const { out, code } = await run(['scripts/fixture-form-agent.mjs', 'forty'], /$^/);
    expect(code).toBe(64);
    expect(out).toMatch(/usage: demo-agent \[PORT\]/);
  });
});
