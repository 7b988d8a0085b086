import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { OPS, agentRegistry, codeOf, createMember, type TestInstance } from '../../support/harness.js';
import { startWithFixtureAgent, stopAll } from '../../support/fixture-agent.js';

// Issue 9, item 11: grants are listed and revocable (People), and a person sees their own grants
// (so the console can say why Tasks and Agents are empty).

let t: TestInstance;
let fixture: FixtureAgent;
const agentId = agentRegistry(() => t);

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent({ worker: false }));
});
afterAll(() => stopAll(t, fixture));

const MY_GRANTS = `{ viewer { grants { id permission agent { name } } } agents { id } }`;

describe('agent grants: list and revoke', () => {
  it('lists a grant for admins and for its holder, and revoking it removes the access, audited', async () => {
    const member = await createMember(t);
    const other = await createMember(t);
    expect((await t.gql(MY_GRANTS, {}, member.token)).data).toEqual({ viewer: { grants: [] }, agents: [] });

    const agent = await agentId(fixture.cardUrl('form'));
    const granted = await t.gql(OPS.grant, { userId: member.id, agentId: agent, permission: 'OPERATE' });
    const grantId = granted.data.grantAgentAccess.id;

    const listed = await t.gql(`query($u: ID) { agentGrants(userId: $u) { id permission user { email } agent { name } } }`, { u: member.id });
    expect(listed.data.agentGrants).toEqual([{ id: grantId, permission: 'OPERATE', user: { email: member.email }, agent: { name: 'Taskbay fixture: form' } }]);
    const mine = (await t.gql(MY_GRANTS, {}, member.token)).data;
    expect(mine.viewer.grants).toEqual([{ id: grantId, permission: 'OPERATE', agent: { name: 'Taskbay fixture: form' } }]);
    expect(mine.agents).toHaveLength(1);
    // Another member sees nobody else's grants.
    const seen = await t.gql(`{ users { email grants { id } } }`, {}, other.token);
    expect(seen.data.users.find((u: { email: string }) => u.email === member.email).grants).toEqual([]);

    // Only admins list and revoke.
    expect(codeOf(await t.gql(`{ agentGrants { id } }`, {}, member.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(`mutation($g: ID!) { revokeAgentAccess(grantId: $g) { id } }`, { g: grantId }, member.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(`mutation($g: ID!) { revokeAgentAccess(grantId: $g) { id } }`, { g: randomUUID() }))).toBe('NOT_FOUND');

    const revoked = await t.gql(`mutation($g: ID!) { revokeAgentAccess(grantId: $g) { id permission } }`, { g: grantId });
    expect(revoked.data.revokeAgentAccess).toEqual({ id: grantId, permission: 'OPERATE' });
    expect((await t.gql(MY_GRANTS, {}, member.token)).data).toEqual({ viewer: { grants: [] }, agents: [] });
    const events = await t.sql(`select type, data from audit_event where type = 'grant.revoked'`);
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ grantId, permission: 'OPERATE' });
  });
});
