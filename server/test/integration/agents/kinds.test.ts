import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgentKind } from '../../../src/agents/module.js';
import { createMember, OPS, rawId, startTestInstance, type TestInstance } from '../../support/harness.js';
import { connect } from '../../support/mcp.js';

// Agent kinds a later module registers from its own module.ts (agents/kinds.ts): the MCP module's
// MCP_CLIENT is stored, served in the AgentKind enum, named in refusals and refused a skill grant
// by what it registered, with no line for it in agents/ or auth/.

let t: TestInstance;
let member: { id: string; email: string; token: string };
let agentId: string;

beforeAll(async () => {
  t = await startTestInstance();
  member = await createMember(t);
  const client = await connect(t, member.token, 'kinds-host');
  const opened = await client.callTool({
    name: 'request_approval',
    arguments: { title: 'Open one', action: { kind: 'send_message', text: 'hi' }, wait_seconds: 0 },
  });
  await client.close();
  const a = await t.gql(`{ node(id: "${(opened.structuredContent as any).request_id}") { ... on Approval { agent { id kind } } } }`);
  expect(a.data.node.agent.kind).toBe('MCP_CLIENT');
  agentId = a.data.node.agent.id;
});
afterAll(async () => {
  await t?.stop();
});

describe('agent kinds registered by a module', () => {
  it('AgentKind lists every registered kind, the module-registered ones in modules.ts order', async () => {
    const r = await t.gql(`{ __type(name: "AgentKind") { enumValues { name } } }`);
    expect(r.data.__type.enumValues.map((v: { name: string }) => v.name)).toEqual(['A2A', 'COMMAND_HOOK', 'AG_UI', 'MCP_CLIENT']);
  });

  it("a grant held to a skill of an MCP client is refused with its kind's own reason, and nothing is stored", async () => {
    const r = await t.gql(OPS.grant, { userId: member.id, agentId, permission: 'VIEW', skillId: 'deploy' });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toBe('an MCP client has no skills: grant on the whole agent');
    const grants = await t.sql(`select count(*)::int as n from agent_grant where agent_id = $1`, [rawId(agentId)]);
    expect(grants[0].n).toBe(0);
  });

  it('a task for an MCP client is refused, naming its kind', async () => {
    const r = await t.gql(OPS.startTask, { agentId, text: 'do it' });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toMatch(/^"kinds-host \(MCP\) of .*" is an MCP client and /);
  });

  it('a kind registered after the kinds were read is refused (it would be missing from the table or the schema)', () => {
    expect(() => registerAgentKind({ kind: 'A2A', noun: 'late', description: 'late', shape: 'true', noSkills: null })).toThrow(
      /registered after the kinds were read/,
    );
  });
});
