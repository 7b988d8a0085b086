import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { callAndDecide } from '../../support/mcp.js';

// The gateway in front of an MCP server Taskbay runs as a command (stdio, TASKBAY_MCP_STDIO=1):
// @modelcontextprotocol/server-filesystem from the registry, over a fresh directory. Reading
// passes; writing a file waits for a person and writes exactly the approved content, once.

const require = createRequire(import.meta.url);

let t: TestInstance;
let member: { id: string; email: string; token: string };
let dir: string;

async function gateway(): Promise<Client> {
  const client = new Client({ name: 'stdio-gateway-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.instance.url}/mcp/servers/files`), {
      requestInit: { headers: { authorization: `Bearer ${member.token}` } },
    }),
  );
  return client;
}

async function decide(op: string, id: string, vars: Record<string, unknown> = {}) {
  const a = await t.gql(`{ node(id: "${id}") { ... on Approval { revision digest action } } }`);
  const r = await t.gql(op, { id, revision: a.data.node.revision, digest: a.data.node.digest, ...vars });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return a.data.node.action;
}

const callHeld = async (client: Client, name: string, args: Record<string, unknown>, reviewerActs: (id: string) => Promise<unknown>) =>
  (await callAndDecide(client, name, args, reviewerActs)).result;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'taskbay-mcp-files-')));
  writeFileSync(join(dir, 'notes.txt'), 'hello');
  t = await startTestInstance({ env: { TASKBAY_MCP_STDIO: '1' } });
  member = await createMember(t);
  const r = await t.gql(
    `mutation($command: String!, $args: [String!]) { registerMcpServer(name: "files", command: $command, args: $args, rules: [{ condition: "mcp.readOnlyHint == \\"true\\"", outcome: PASS }]) { id transport } }`,
    { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), dir] },
  );
  expect(r.errors).toBeUndefined();
  expect(r.data.registerMcpServer.transport).toBe('STDIO');
});
afterAll(async () => {
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('MCP gateway to a stdio server (server-filesystem)', () => {
  it('a read passes at once; a write waits, and writes exactly the approved (edited) content once', async () => {
    const g = await gateway();
    const read = await g.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'notes.txt') } });
    expect(JSON.stringify(read.content)).toContain('hello');
    const target = join(dir, 'plan.txt');
    const result = await callHeld(g, 'write_file', { path: target, content: 'drop the table' }, async (id) => {
      expect(existsSync(target)).toBe(false);
      await decide(OPS.editAndApprove, id, {
        action: {
          kind: 'send_message',
          text: 'Call the tool "write_file" of the MCP server "files"',
          data: { server: 'files', tool: 'write_file', arguments: { path: target, content: 'archive the table' } },
        },
      });
    });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('archive the table');
    await g.close();
  });

  it('a rejected write writes nothing', async () => {
    const g = await gateway();
    const target = join(dir, 'never.txt');
    const result = await callHeld(g, 'write_file', { path: target, content: 'x' }, (id) => decide(OPS.reject, id, { comment: 'no' }));
    expect(result.isError).toBe(true);
    expect(existsSync(target)).toBe(false);
    await g.close();
  });
});
