import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, OPS, roleUrls } from '../../support/harness.js';
import { type RunningUpstream, startServerEverything } from '../../support/mcp-upstream.js';
import { gqlAt, startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { REQUEST_ID } from '../../support/mcp.js';

// Taskbay killed (SIGKILL) while the gateway holds a call: the waiting client gets an error, the
// request survives in the database, and after the restart the same call asked again gets the one
// decision: forwarded once, none lost, none twice.

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('MCP gateway: Taskbay killed while a call is held', () => {
  it('the client gets an error; after the restart the same call gets the decision, forwarded once', async () => {
    const upstream: RunningUpstream = await startServerEverything();
    cleanups.push(() => upstream.stop());
    const databaseUrl = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'taskbay-mcp-crash-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const adminToken = `tb_admin_${randomUUID()}`;
    const { appUrl, ownerUrl } = roleUrls(databaseUrl);
    const env = { DATABASE_URL: appUrl, TASKBAY_MIGRATION_DATABASE_URL: ownerUrl, TASKBAY_ADMIN_TOKEN: adminToken, TASKBAY_DATA_DIR: dataDir };
    let server: ServerProcess = await startServerProcess(env);
    cleanups.push(() => server.stop());
    const ok = async (p: ReturnType<typeof gqlAt>) => {
      const r = await p;
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r.data as any;
    };
    await ok(gqlAt(server.url, adminToken, `mutation($url: String!) { registerMcpServer(name: "everything", url: $url) { id } }`, { url: upstream.url }));
    const user = (await ok(gqlAt(server.url, adminToken, OPS.createUser, { email: 'host@example.test', name: 'Host', role: 'MEMBER' }))).createUser;
    const token = (await ok(gqlAt(server.url, adminToken, OPS.createToken, { userId: user.id, label: 'mcp' }))).createApiToken.token as string;
    const connect = async () => {
      const client = new Client({ name: 'crash-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/servers/everything`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      return client;
    };

    const first = await connect();
    // The SDK client hears of the broken stream at once (onerror); its request then fails when it closes.
    const broken = new Promise<Error>((resolve) => {
      first.onerror = resolve;
    });
    let heard: (id: string) => void = () => {};
    const held = new Promise<string>((resolve) => (heard = resolve));
    const call = first.callTool({ name: 'get-sum', arguments: { a: 20, b: 22 } }, undefined, {
      timeout: 90_000,
      onprogress: (p) => {
        const id = p.message?.match(REQUEST_ID)?.[1];
        if (id) heard(id);
      },
    });
    const id = await held;
    await server.kill();
    expect((await broken).message).toMatch(/SSE stream disconnected|fetch failed|ECONNREFUSED|terminated/);
    await first.close();
    await expect(call).rejects.toThrow(/Connection closed/);

    server = await startServerProcess(env);
    const node = (
      await ok(gqlAt(server.url, adminToken, `{ node(id: "${id}") { ... on Approval { status revision digest mcpCall { waiting forwardedAt } } } }`))
    ).node;
    expect(node.status).toBe('PENDING');
    expect(node.mcpCall.forwardedAt).toBeNull();
    await ok(gqlAt(server.url, adminToken, OPS.approve, { id, revision: node.revision, digest: node.digest }));

    const again = await connect();
    const result = await again.callTool({ name: 'get-sum', arguments: { a: 20, b: 22 } });
    expect(JSON.stringify(result.content)).toContain('42');
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const uuid = Buffer.from(id, 'base64').toString('utf8').split(':')[1];
    const forwarded = await db.query(`select count(*)::int as n from audit_event where stream = $1 and type = 'mcp.call_forwarded'`, [`approval:${uuid}`]);
    await db.end();
    expect(forwarded.rows[0].n).toBe(1);
    await again.close();
  }, 120_000);
});
