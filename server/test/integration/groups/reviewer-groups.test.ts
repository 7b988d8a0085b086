import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, createMember, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { clearPolicies, createPolicy, Q, tenantEvents } from '../../support/policies.js';

// Reviewer groups (docs/POLICIES.md "Groups"): admins create, rename and delete them and add and
// remove members; every change is a tenant audit event; members are refused; a group a policy
// names cannot be deleted; policies name only groups and people of the tenant.

let t: TestInstance;

const GROUP = `id name members { id }`;
const G = {
  list: `{ reviewerGroups { ${GROUP} } }`,
  create: `mutation($name: String!, $memberIds: [ID!]) { createReviewerGroup(input: { name: $name, memberIds: $memberIds }) { ${GROUP} } }`,
  rename: `mutation($id: ID!, $name: String!) { renameReviewerGroup(id: $id, name: $name) { ${GROUP} } }`,
  delete: `mutation($id: ID!) { deleteReviewerGroup(id: $id) }`,
  add: `mutation($groupId: ID!, $userId: ID!) { addReviewerGroupMember(groupId: $groupId, userId: $userId) { ${GROUP} } }`,
  remove: `mutation($groupId: ID!, $userId: ID!) { removeReviewerGroupMember(groupId: $groupId, userId: $userId) { ${GROUP} } }`,
};

beforeAll(async () => {
  t = await startTestInstance();
});

afterAll(async () => {
  await t?.stop();
});

describe('reviewer groups', () => {
  it('an admin creates, renames, fills, empties and deletes a group; each change is audited', async () => {
    const [a, b] = [await createMember(t), await createMember(t)];
    const g = ok(await t.gql(G.create, { name: 'Release managers', memberIds: [a.id] })).createReviewerGroup;
    expect(g).toMatchObject({ name: 'Release managers', members: [{ id: a.id }] });
    expect(ok(await t.gql(G.add, { groupId: g.id, userId: b.id })).addReviewerGroupMember.members).toEqual([{ id: a.id }, { id: b.id }]);
    // Adding someone twice changes nothing.
    expect(ok(await t.gql(G.add, { groupId: g.id, userId: b.id })).addReviewerGroupMember.members).toHaveLength(2);
    expect(ok(await t.gql(G.remove, { groupId: g.id, userId: a.id })).removeReviewerGroupMember.members).toEqual([{ id: b.id }]);
    expect(ok(await t.gql(G.rename, { id: g.id, name: 'Releasers' })).renameReviewerGroup.name).toBe('Releasers');
    expect(ok(await t.gql(G.list)).reviewerGroups).toEqual([{ id: g.id, name: 'Releasers', members: [{ id: b.id }] }]);
    expect(ok(await t.gql(G.delete, { id: g.id })).deleteReviewerGroup).toBe(g.id);
    expect(ok(await t.gql(G.list)).reviewerGroups).toEqual([]);
    const events = (await tenantEvents(t, 'group.')).filter((e) => e.data.groupId === rawId(g.id));
    expect(events.map((e) => e.type)).toEqual(['group.created', 'group.member_added', 'group.member_removed', 'group.renamed', 'group.deleted']);
    expect(events[0]!.data.memberIds).toEqual([rawId(a.id)]);
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const g = ok(await t.gql(G.create, { name: 'Ops' })).createReviewerGroup;
    const nobody = Buffer.from('User:00000000-0000-4000-8000-00000000dead').toString('base64');
    expect(codeOf(await t.gql(G.create, { name: 'Ops' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(G.create, { name: '  ' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(G.create, { name: 'Other', memberIds: [nobody] }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(G.add, { groupId: g.id, userId: nobody }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(G.remove, { groupId: g.id, userId: nobody }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(G.rename, { id: g.id, name: 'x'.repeat(101) }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(G.delete, { id: 'not an id' }))).toBe('BAD_USER_INPUT');
    expect(ok(await t.gql(G.list)).reviewerGroups.map((x: any) => x.name)).toEqual(['Ops']);
    ok(await t.gql(G.delete, { id: g.id }));
  });

  it('members are refused: they can neither list nor change groups', async () => {
    const m = await createMember(t);
    const g = ok(await t.gql(G.create, { name: 'Guarded' })).createReviewerGroup;
    expect(codeOf(await t.gql(G.list, {}, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(G.create, { name: 'Mine' }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(G.rename, { id: g.id, name: 'Mine' }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(G.add, { groupId: g.id, userId: m.id }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(G.delete, { id: g.id }, m.token))).toBe('FORBIDDEN');
    expect(ok(await t.gql(G.list)).reviewerGroups.find((x: any) => x.id === g.id)).toEqual({ id: g.id, name: 'Guarded', members: [] });
    ok(await t.gql(G.delete, { id: g.id }));
  });

  it('a policy names groups and people of the tenant; a group a policy names cannot be deleted until the policy changes', async () => {
    await clearPolicies(t);
    const m = await createMember(t);
    const g = ok(await t.gql(G.create, { name: 'Approvers', memberIds: [m.id] })).createReviewerGroup;
    const p = await createPolicy(t, {
      name: 'two approvers',
      quorum: { approvals: 1, fromGroupIds: [g.id], rejectionRejects: false },
      escalation: { afterSeconds: 3600, toUserId: m.id, raiseRiskTo: 'HIGH' },
    });
    expect(p.currentVersion.quorum).toEqual({ approvals: 1, fromGroupIds: [g.id], rejectionRejects: false });
    expect(p.currentVersion.escalation).toEqual({ afterSeconds: 3600, toUser: { id: m.id }, toGroup: null, raiseRiskTo: 'HIGH' });
    const refused = await t.gql(G.delete, { id: g.id });
    expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    expect(refused.errors![0]!.message).toMatch(/"two approvers"/);
    ok(await t.gql(Q.update, { input: { id: p.id, quorum: { fromGroupIds: [] } } }));
    ok(await t.gql(G.delete, { id: g.id }));
    // A deleted group cannot be named again.
    expect(codeOf(await t.gql(Q.update, { input: { id: p.id, quorum: { fromGroupIds: [g.id] } } }))).toBe('BAD_USER_INPUT');
  });
});
