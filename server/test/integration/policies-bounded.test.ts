import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HELD_POLICY_NAME } from '../../src/policies/snapshot.js';
import { codeOf, createMember, OPS, startTestInstance, type TestInstance } from '../support/harness.js';
import { clearPolicies, createGroup, createPolicy, ok, open, Q, requestedEvent } from '../support/policies.js';

// Issue 22 finding 5 (docs/POLICIES.md "When a condition fails"):
// - a condition that fails gives the request the strictest policy it could have had, never the
//   failing policy's own rules because its condition failed.

let t: TestInstance;

beforeAll(async () => {
  t = await startTestInstance();
});

afterAll(async () => {
  await t?.stop();
});

beforeEach(() => clearPolicies(t));

/** The catch-all a tenant keeps last: two approvals, no edits, not by the task's starter. */
const production = () =>
  createPolicy(t, { name: 'production', condition: '', allowedOutcomes: ['APPROVE', 'REJECT'], quorum: { approvals: 2 }, excludeTaskStarter: true });

describe('finding 5: a failing condition never picks the weaker policy', () => {
  it("a requester who makes a permissive policy's condition throw gets the stricter policy below it, with a vote counted, not a decision", async () => {
    await createPolicy(t, { name: 'fast lane', condition: 'int(title) > 0' });
    const strict = await production();
    // A numbered title takes the fast lane, as its admin meant.
    expect((await open(t, { title: '42' })).policy.name).toBe('fast lane');
    // Any other title makes int() throw.
    const a = await open(t, { title: 'Deploy now' });
    expect(a.policy).toMatchObject({
      policyId: strict.id,
      name: 'production',
      quorum: { approvals: 2 },
      excludeTaskStarter: true,
      allowedOutcomes: ['APPROVE', 'REJECT'],
    });
    expect(a.policy.conditionError).toMatch(
      /^the condition of "fast lane" \(version 1\) failed: int\(\) type error: cannot convert to int.*\. The strictest .* applies: "production"/s,
    );
    expect((await requestedEvent(t, a.id)).policy.failClosed).toMatchObject({
      applied: 'strictest',
      failed: [{ name: 'fast lane', error: expect.stringMatching(/^int\(\) type error: cannot convert to int/) }],
    });

    // Its rules hold: one approval is a vote, not a decision.
    const reviewer = (await createMember(t, { role: 'ADMIN' })).token;
    ok(await t.gql(OPS.approve, { id: a.id, revision: 1, digest: a.digest }, reviewer));
    expect(ok(await t.gql(Q.approvalPolicy, { id: a.id })).approval.status).toBe('PENDING');
  });

  it('when no policy the request could have had is the strictest, it is held: it cannot be approved, only rejected', async () => {
    const reviewer = await createMember(t, { role: 'ADMIN' });
    const group = await createGroup(t, 'security', [reviewer.id]);
    await createPolicy(t, { name: 'two approvals', condition: 'int(title) > 0', quorum: { approvals: 2 } });
    await createPolicy(t, { name: 'security only', condition: '', quorum: { approvals: 1, fromGroupIds: [group.id] } });
    const a = await open(t, { title: 'Rotate keys' });
    expect(a.policy).toMatchObject({ policyId: null, name: HELD_POLICY_NAME, isDefault: false, allowedOutcomes: ['REJECT', 'REQUEST_CHANGES'] });
    expect(a.policy.conditionError).toMatch(
      /None of the policies this request could have had \("two approvals" \(version 1\), "security only" \(version 1\)\) is at least as strict as all the others, so it cannot be approved/,
    );
    expect((await requestedEvent(t, a.id)).policy).toMatchObject({ id: null, name: HELD_POLICY_NAME, failClosed: { applied: 'held' } });

    const approve = await t.gql(OPS.approve, { id: a.id, revision: 1, digest: a.digest }, reviewer.token);
    expect(codeOf(approve)).toBe('OUTCOME_NOT_ALLOWED');
    expect(approve.errors![0]!.message).toMatch(/held rules/);
    expect(ok(await t.gql(OPS.reject, { id: a.id, revision: 1, digest: a.digest, comment: 'fix the condition first' }, reviewer.token)).reject.outcome).toBe(
      'REJECT',
    );
  });
});
