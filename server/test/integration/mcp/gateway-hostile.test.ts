import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_DEPTH_MAX, MCP_GATEWAY_LIMITS } from '../../../src/limits.js';
import { createMember, startTestInstance, type TestInstance } from '../../support/harness.js';
import { hostileMcpUpstream } from '../../support/hostile-mcp-upstream.js';
import { connectGateway, DEEP_JSON, rawInSession } from '../../support/mcp.js';
import { type RunningUpstream, startServerEverything } from '../../support/mcp-upstream.js';

// Hostile upstreams and clients of the gateway: a huge answer, an answer that never ends, a list
// of 10,000 tools, arguments nested 10,000 deep, an upstream at the database's port. Each gets a
// clear error, the limit is limits.ts's, nothing crashes, and a well-behaved server behind the
// same Taskbay answers meanwhile.

let t: TestInstance;
let member: { id: string; email: string; token: string };
let hostile: Awaited<ReturnType<typeof hostileMcpUpstream>>;
let many: Awaited<ReturnType<typeof hostileMcpUpstream>>;
let everything: RunningUpstream;

const REGISTER = `mutation($name: String!, $url: String!) { registerMcpServer(name: $name, url: $url, rules: [{ condition: "", outcome: PASS }]) { id } }`;

const gateway = (name: string) => connectGateway(t, name, member.token);

/** A call through the well-behaved server: what must keep working while the hostile ones misbehave. */
async function stillServes() {
  const g = await gateway('everything');
  const r = await g.callTool({ name: 'echo', arguments: { message: 'still here' } });
  expect(JSON.stringify(r.content)).toContain('still here');
  await g.close();
}

beforeAll(async () => {
  hostile = await hostileMcpUpstream();
  many = await hostileMcpUpstream({ manyTools: true });
  everything = await startServerEverything();
  t = await startTestInstance();
  member = await createMember(t);
  const pg = new URL(t.databaseUrl);
  for (const [name, url] of [
    ['hostile', hostile.url],
    ['many', many.url],
    ['everything', everything.url],
    ['database', `http://${pg.hostname}:${pg.port}/mcp`],
  ]) {
    const r = await t.gql(REGISTER, { name, url });
    expect(r.errors).toBeUndefined();
  }
});
afterAll(async () => {
  await t?.stop();
  await hostile?.close();
  await many?.close();
  await everything?.stop();
});

describe('MCP gateway: hostile upstreams and clients', () => {
  it('a 10 MB answer: the call fails naming the limit; Taskbay keeps serving', async () => {
    const g = await gateway('hostile');
    // Twice: the first call reads the tool list and goes the SDK's way, the second is relayed (pass-through.ts).
    for (let i = 0; i < 2; i++) {
      await expect(g.callTool({ name: 'huge', arguments: {} })).rejects.toThrow(new RegExp(`larger than ${MCP_GATEWAY_LIMITS.upstreamAnswerMaxBytes} bytes`));
    }
    await stillServes();
    await g.close();
  });

  it('an answer that never ends: cut at the limit, the call fails; the upstream stops being read', async () => {
    const g = await gateway('hostile');
    // Twice, as above: the SDK's way, then relayed.
    for (let i = 1; i <= 2; i++) {
      await expect(g.callTool({ name: 'endless', arguments: {} })).rejects.toThrow(
        new RegExp(`larger than ${MCP_GATEWAY_LIMITS.upstreamAnswerMaxBytes} bytes`),
      );
      // What was read is bounded by the limit (64 KiB chunks, plus what the socket buffers hold).
      expect(hostile.endlessWrites() * 64 * 1024).toBeLessThan(MCP_GATEWAY_LIMITS.upstreamAnswerMaxBytes * 4 * i);
    }
    await stillServes();
    await g.close();
  });

  it('a list of 10,000 tools is refused with the limit', async () => {
    const g = await gateway('many');
    await expect(g.listTools()).rejects.toThrow(new RegExp(`more than ${MCP_GATEWAY_LIMITS.toolsMax} tools`));
    await stillServes();
    await g.close();
  });

  it('arguments nested 10,000 deep: a tool error, nothing forwarded or held', async () => {
    const g = await gateway('everything');
    const before = (await t.sql(`select count(*)::int as n from approval`))[0].n;
    const text = await rawInSession(
      t,
      g,
      '/mcp/servers/everything',
      member.token,
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":${DEEP_JSON}}}}`,
    );
    expect(text).toContain('"isError":true');
    expect(text).toContain(`nested deeper than ${JSON_DEPTH_MAX} levels`);
    expect((await t.sql(`select count(*)::int as n from approval`))[0].n).toBe(before);
    await g.close();
  });

  it("an upstream at the database's address: refused by the agent network policy, nothing sent there", async () => {
    await expect(gateway('database')).rejects.toThrow(/could not be reached: .*database/);
    await stillServes();
  });
});
