import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PROXY_EXIT } from '../../../src/mcp/cli.js';
import { createMember, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { connectWith, decide, REQUEST_ID, repositoryCli, stdioServer } from '../../support/mcp.js';

// The configurations of docs/MCP.md (docs/samples/mcp-*), used as each host uses them: the JSON
// is read, its variables are expanded by the host's documented rule, and the SDK client connects
// exactly as the entry says: an `http` entry (Claude Code) or a `url` entry (Cursor) with
// StreamableHTTPClientTransport and the entry's url and headers, a `command` entry (Claude
// Desktop) with StdioClientTransport and its command, args and env. The one substitution: the
// packaged CLI `npx -y agent-taskbay` is run as the repository's CLI (`npx tsx
// server/src/cli.ts`, support/mcp.ts), the same entry point (packages/agent-taskbay.test.ts runs the entry
// from the installed package). mcp-sdk-client.mjs runs as a script against this Taskbay.

const ROOT = new URL('../../../../', import.meta.url).pathname;
const sample = (name: string) => JSON.parse(readFileSync(`${ROOT}docs/samples/${name}`, 'utf8'));

let t: TestInstance;
let member: { id: string; email: string; token: string };
let env: Record<string, string>;

/** The fields both hosts expand variables in (Claude Code: command, args, env, url, headers; Cursor the same). */
function expandEntry(entry: Record<string, any>, expand: (s: string) => string): Record<string, any> {
  const out = { ...entry };
  for (const k of ['command', 'url'] as const) if (typeof out[k] === 'string') out[k] = expand(out[k]);
  if (Array.isArray(out.args)) out.args = out.args.map(expand);
  for (const k of ['env', 'headers'] as const) {
    if (out[k]) out[k] = Object.fromEntries(Object.entries(out[k] as Record<string, string>).map(([n, v]) => [n, expand(v)]));
  }
  return out;
}

/** Claude Code's `.mcp.json`: `${VAR}`, and `${VAR:-default}` when VAR is unset; an unset VAR without a default fails the config. */
function claudeCodeExpand(from: Record<string, string>) {
  return (s: string) =>
    s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
      const v = from[name] ?? fallback;
      if (v === undefined) throw new Error(`Claude Code would not load the config: ${name} is not set`);
      return v;
    });
}

/** Cursor's `mcp.json`: `${env:NAME}` (its other variables, `${userHome}` and `${workspaceFolder}`, are not used here). */
function cursorExpand(from: Record<string, string>) {
  return (s: string) =>
    s.replace(/\$\{([^}]*)\}/g, (_, name: string) => {
      const m = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(name);
      if (!m || from[m[1]!] === undefined) throw new Error(`the sample uses \${${name}}, which is not set here`);
      return from[m[1]!]!;
    });
}

/** What each sample must allow: Taskbay's two tools, and a request that is the token's person's, from an agent named after the host. */
async function asksThrough(client: Client, host: string) {
  const { tools } = await client.listTools();
  expect(tools.map((x) => x.name)).toEqual(['request_approval', 'get_approval']);
  const r = await client.callTool({
    name: 'request_approval',
    arguments: { title: `Asked from ${host}`, action: { kind: 'send_message', text: 'hello' }, wait_seconds: 0 },
  });
  const s = r.structuredContent as any;
  expect(s.status).toBe('PENDING');
  const a = await t.gql(`{ node(id: "${s.request_id}") { ... on Approval { requester { id } agent { kind name } } } }`);
  expect(a.data.node.requester.id).toBe(member.id);
  expect(a.data.node.agent).toEqual({ kind: 'MCP_CLIENT', name: `${host} (MCP) of ${member.email}` });
}

/** The entry's server over Streamable HTTP with the entry's url and headers, as the host connects to a remote server; then asksThrough. */
async function asksOverHttp(entry: { url: string; headers: Record<string, string> }, host: string) {
  const client = await connectWith(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }), host);
  await asksThrough(client, host);
  await client.close();
}

beforeAll(async () => {
  t = await startTestInstance();
  member = await createMember(t);
  env = { TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: member.token };
});
afterAll(async () => {
  await t?.stop();
});

describe('docs/samples/mcp-claude-code.json (Claude Code .mcp.json)', () => {
  it('an http server whose url and Authorization header come from the environment', async () => {
    const entry = sample('mcp-claude-code.json').mcpServers.taskbay;
    expect(entry.type).toBe('http');
    const expanded = expandEntry(entry, claudeCodeExpand(env));
    expect(expanded.url).toBe(`${t.instance.url}/mcp`);
    // Without TASKBAY_URL, the default in the sample; without TASKBAY_TOKEN, no config at all.
    expect(expandEntry(entry, claudeCodeExpand({ TASKBAY_TOKEN: 'x' })).url).toBe('http://localhost:4000/mcp');
    expect(() => expandEntry(entry, claudeCodeExpand({}))).toThrow(/TASKBAY_TOKEN is not set/);
    await asksOverHttp(expanded as any, 'claude-code');
  });
});

describe('docs/samples/mcp-cursor.json (Cursor mcp.json)', () => {
  it('a url server with ${env:…} in its url and Authorization header', async () => {
    const entry = sample('mcp-cursor.json').mcpServers.taskbay;
    expect(entry.command).toBeUndefined();
    const expanded = expandEntry(entry, cursorExpand(env));
    expect(expanded.headers).toEqual({ Authorization: `Bearer ${member.token}` });
    await asksOverHttp(expanded as any, 'cursor');
  });
});

describe('docs/samples/mcp-claude-desktop.json (claude_desktop_config.json)', () => {
  it('a stdio server: agent-taskbay mcp-proxy, with the URL and token the user fills into env', async () => {
    const entry = sample('mcp-claude-desktop.json').mcpServers.taskbay;
    // Claude Desktop expands no variables: the user replaces the two values.
    expect(JSON.stringify(entry)).not.toContain('${');
    expect(Object.keys(entry.env).sort()).toEqual(['TASKBAY_TOKEN', 'TASKBAY_URL']);
    expect([entry.command, ...entry.args.slice(0, 2)]).toEqual(['npx', '-y', 'agent-taskbay']);
    const filledIn = Object.fromEntries(Object.keys(entry.env).map((k) => [k, env[k]!]));
    const proxy = stdioServer({ ...repositoryCli(entry.args.slice(2)), env: filledIn });
    const client = await connectWith(proxy.transport, 'claude-desktop');
    await asksThrough(client, 'claude-desktop');
    await client.close();
    expect(await proxy.exited).toBe(MCP_PROXY_EXIT.OK);
  });
});

/** docs/samples/mcp-sdk-client.mjs against this Taskbay; `reviewer` acts once its output names the request. */
function runClientSample(
  reviewer: (id: string) => Promise<void>,
): Promise<{ code: number | null; stdout: string; stderr: string; acted: Promise<void> | null }> {
  const child = spawn(process.execPath, [`${ROOT}docs/samples/mcp-sdk-client.mjs`], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let acted: Promise<void> | null = null;
  child.stdout.on('data', (d) => {
    stdout += d;
    const id = REQUEST_ID.exec(stdout)?.[1];
    if (id && !acted) acted = reviewer(id);
  });
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, acted })));
}

describe('docs/samples/mcp-sdk-client.mjs', () => {
  it('edited and approved: prints the waiting line, then runs the call as the reviewer edited it', async () => {
    const edited = { server: 'deploy', tool: 'deploy_service', arguments: { service: 'web', version: '2.4.0' } };
    const run = await runClientSample((id) =>
      decide(t, OPS.editAndApprove, id, { action: { kind: 'send_message', text: 'Deploy web 2.4.0 instead', data: edited } }, t.adminToken),
    );
    await run.acted;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Waiting for a person's decision on QXBwcm92YWw6[A-Za-z0-9+/=]+: http:\/\/\S+\/approvals\//);
    expect(lines.at(-1)).toBe('Approved: calling deploy_service with {"service":"web","version":"2.4.0"}');
  });

  it('rejected: says so and exits 1', async () => {
    const run = await runClientSample((id) => decide(t, OPS.reject, id, { comment: 'not today' }, t.adminToken));
    await run.acted;
    expect(run.code).toBe(1);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('Not deploying: the request is REJECTED');
  });
});
