import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKILL_ROUTING_EXTENSION } from '../../../src/a2a/extensions.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { createMember, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';

// Seed 003 "Skill routing": "Without this extension administrators can only grant whole-agent
// access." A grant limited to a skill needs an agent whose latest card advertises the
// skill-routing extension and lists that skill; anything else is refused and stores nothing.

let t: TestInstance;
let plain: FixtureAgent;
let routed: FixtureAgent;
let plainId: string;
let routedId: string;

const grantRows = async (userId: string) => t.sql(`select agent_id, skill_id, permission from agent_grant where user_id = $1`, [rawId(userId)]);
const grantEvents = async () => (await t.sql(`select count(*)::int as n from audit_event where type = 'grant.set'`))[0].n as number;

beforeAll(async () => {
  plain = await startFixtureAgent();
  routed = await startFixtureAgent({ skillRouting: true });
  t = await startTestInstance();
  plainId = ok(await t.gql(OPS.register, { url: plain.cardUrl('showcase') })).registerAgent.id;
  const r = ok(await t.gql(OPS.register, { url: routed.cardUrl('showcase') })).registerAgent;
  routedId = r.id;
  expect(r.extensions).toContain(SKILL_ROUTING_EXTENSION);
});

afterAll(async () => {
  await t?.stop();
  await plain?.close();
  await routed?.close();
});

describe('grantAgentAccess with a skill', () => {
  it('is refused for an agent whose latest card does not advertise skill routing (BAD_USER_INPUT); nothing is stored', async () => {
    const m = await createMember(t);
    const before = await grantEvents();
    const r = await t.gql(OPS.grant, { userId: m.id, agentId: plainId, permission: 'OPERATE', skillId: 'deploy' });
    expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r.errors)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain(SKILL_ROUTING_EXTENSION);
    expect(r.errors![0]!.message).toMatch(/whole agent/);
    expect(await grantRows(m.id)).toEqual([]);
    expect(await grantEvents()).toBe(before);
    // The whole agent can still be granted.
    ok(await t.gql(OPS.grant, { userId: m.id, agentId: plainId, permission: 'OPERATE' }));
    expect(await grantRows(m.id)).toEqual([expect.objectContaining({ skill_id: null, permission: 'OPERATE' })]);
  });

  it('is refused for a skill the latest card does not list, naming the skills it does list', async () => {
    const m = await createMember(t);
    const r = await t.gql(OPS.grant, { userId: m.id, agentId: routedId, permission: 'VIEW', skillId: 'Deploy' });
    expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r.errors)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toMatch(/no skill "Deploy"/);
    expect(r.errors![0]!.message).toMatch(/deploy/);
    expect(await grantRows(m.id)).toEqual([]);
  });

  it('is accepted for a listed skill of an agent that advertises skill routing', async () => {
    const m = await createMember(t);
    const g = ok(await t.gql(OPS.grant, { userId: m.id, agentId: routedId, permission: 'OPERATE', skillId: 'deploy' })).grantAgentAccess;
    expect(g).toMatchObject({ permission: 'OPERATE', skillId: 'deploy' });
    expect(await grantRows(m.id)).toEqual([expect.objectContaining({ skill_id: 'deploy', permission: 'OPERATE' })]);
  });
});
