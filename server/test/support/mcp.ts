import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { TestInstance } from './harness.js';

// MCP hosts for the tests of Taskbay's MCP server (integration/mcp/): the official SDK client over
// Streamable HTTP to /mcp, or over stdio to `taskbay mcp-proxy` (server/src/mcp/cli.ts) as a host
// with a stdio server entry starts it.

const ROOT = new URL('../../../', import.meta.url).pathname;

/** The request id, as the first progress notification of request_approval names it. */
export const REQUEST_ID = /(QXBwcm92YWw6[A-Za-z0-9+/=]+)/;

/** An SDK client connected over `transport`, as an MCP host named `name`. */
export async function connectWith(transport: Transport, name = 'test-host'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** An SDK client on the instance's /mcp with `token`. */
export function connect(t: TestInstance, token: string, name = 'test-host'): Promise<Client> {
  return connectWith(
    new StreamableHTTPClientTransport(new URL(`${t.instance.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    name,
  );
}

/**
 * The repository's `taskbay` CLI, run as the tests of the other commands run it
 * (support/guard-process.ts): `npx tsx server/src/cli.ts ARGS` from the repository root. It
 * stands for `npx agent-taskbay`, the packaged CLI with the same entry.
 */
export function repositoryCli(args: string[]): Pick<StdioServerParameters, 'command' | 'args' | 'cwd'> {
  return { command: 'npx', args: ['tsx', 'server/src/cli.ts', ...args], cwd: ROOT };
}

export interface StdioHost {
  transport: StdioClientTransport;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  /** Its exit code (null: killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * A stdio server as the SDK's StdioClientTransport starts it (the SDK's default environment plus
 * `params.env`), with its stderr collected and its exit code kept. The transport forgets its child
 * once it closes, so the child is taken when it has just spawned, before it can exit.
 */
export function stdioServer(params: StdioServerParameters): StdioHost {
  const transport = new StdioClientTransport({ ...params, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  let exited!: (code: number | null) => void;
  const exit = new Promise<number | null>((resolve) => (exited = resolve));
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const child = (transport as unknown as { _process: ChildProcess })._process;
    child.once('exit', (code) => exited(code));
  };
  return { transport, stderr: () => stderr, exited: exit };
}

/** tools/call of `name`, handing the request id to `reviewerActs` as soon as a progress notification names it (a request_approval, or a call the gateway holds). */
export async function callAndDecide(client: Client, name: string, args: Record<string, unknown>, reviewerActs: (id: string) => Promise<unknown>) {
  let acted: Promise<unknown> | null = null;
  const messages: string[] = [];
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: 90_000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => {
      messages.push(p.message ?? '');
      const id = p.message?.match(REQUEST_ID)?.[1];
      if (id && !acted) acted = reviewerActs(id);
    },
  });
  await acted;
  return { result, messages };
}

/** request_approval, handing the request id to `reviewerActs` as soon as the first progress notification names it. */
export function askAndDecide(client: Client, args: Record<string, unknown>, reviewerActs: (id: string) => Promise<void>) {
  return callAndDecide(client, 'request_approval', { wait_seconds: 60, ...args }, reviewerActs);
}

/** An SDK client on the gateway of the MCP server `name` with `token`. */
export function connectGateway(t: TestInstance, name: string, token: string, client = 'gateway-test'): Promise<Client> {
  return connectWith(
    new StreamableHTTPClientTransport(new URL(`${t.instance.url}/mcp/servers/${name}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    client,
  );
}

/** A JSON-RPC body POSTed as is in the client's session at `path`: what the SDK client itself cannot send (10,000 levels deep). */
export async function rawInSession(t: TestInstance, client: Client, path: string, token: string, body: string): Promise<string> {
  const transport = (client as unknown as { _transport: StreamableHTTPClientTransport })._transport;
  const r = await fetch(`${t.instance.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': '2025-11-25',
    },
    body,
  });
  return r.text();
}

/** 10,000 levels of `{"d": ...}`, as JSON text. */
export const DEEP_JSON = `${'{"d":'.repeat(10_000)}{}${'}'.repeat(10_000)}`;

/** A reviewer's decision over GraphQL (`op` from OPS) on the request's current revision. */
export async function decide(t: TestInstance, op: string, id: string, vars: Record<string, unknown>, token: string) {
  const a = await t.gql(`{ node(id: "${id}") { ... on Approval { revision digest } } }`, {}, token);
  const r = await t.gql(op, { id, revision: a.data.node.revision, digest: a.data.node.digest, ...vars }, token);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
}
