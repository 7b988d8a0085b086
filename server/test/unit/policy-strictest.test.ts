import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, HELD_POLICY_NAME, type PolicySnapshot } from '../../src/policies/snapshot.js';
import { atLeastAsStrict, failClosed } from '../../src/policies/strictest.js';

// Issue 22 finding 5: when a condition fails, the request gets the strictest of the policies it
// could have had (docs/POLICIES.md "When a condition fails"), never the failing policy's own
// rules because its condition failed.

const policy = (name: string, over: Partial<PolicySnapshot> & { approvals?: number; groups?: string[]; rejectionRejects?: boolean } = {}): PolicySnapshot => {
  const { approvals = 1, groups = [], rejectionRejects = true, ...rest } = over;
  return {
    ...DEFAULT_POLICY,
    policyId: `00000000-0000-4000-8000-${name
      .padStart(12, '0')
      .slice(-12)
      .replace(/[^0-9a-f]/g, 'a')}`,
    name,
    version: 1,
    quorum: { approvals, fromGroupIds: groups, rejectionRejects },
    ...rest,
  };
};

const failure = (p: PolicySnapshot) => ({ policyId: p.policyId!, name: p.name, version: p.version, error: 'int() type error' });

describe('at least as strict', () => {
  const base = policy('base');
  it.each<[string, Partial<PolicySnapshot> & { approvals?: number; groups?: string[]; rejectionRejects?: boolean }]>([
    ['fewer outcomes', { allowedOutcomes: ['APPROVE', 'REJECT'] }],
    ["excluding the task's starter", { excludeTaskStarter: true }],
    ['more approvals', { approvals: 2 }],
    ['approvals from a group only', { groups: ['g1'] }],
  ])('%s is stricter than the default rules, not the other way round', (_, over) => {
    const strict = policy('strict', over);
    expect(atLeastAsStrict(strict, base)).toBe(true);
    expect(atLeastAsStrict(base, strict)).toBe(false);
  });

  it('one rejection rejecting is stricter than waiting for the quorum', () => {
    expect(atLeastAsStrict(policy('a', { rejectionRejects: true }), policy('b', { rejectionRejects: false }))).toBe(true);
    expect(atLeastAsStrict(policy('b', { rejectionRejects: false }), policy('a', { rejectionRejects: true }))).toBe(false);
  });

  it('fewer groups are stricter; other groups are not comparable', () => {
    expect(atLeastAsStrict(policy('a', { groups: ['g1'] }), policy('b', { groups: ['g1', 'g2'] }))).toBe(true);
    expect(atLeastAsStrict(policy('b', { groups: ['g1', 'g2'] }), policy('a', { groups: ['g1'] }))).toBe(false);
    expect(atLeastAsStrict(policy('a', { groups: ['g1'] }), policy('c', { groups: ['g3'] }))).toBe(false);
  });

  it('a quorum of two never delegates, so a listed DELEGATE does not make it weaker', () => {
    const quorum = policy('q', { approvals: 2 });
    expect(quorum.allowedOutcomes).toContain('DELEGATE');
    expect(atLeastAsStrict(quorum, policy('no delegation', { allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES'] }))).toBe(true);
  });

  it('escalation is not compared', () => {
    const escalating = policy('e', { escalation: { afterSeconds: 60, toGroupId: null, toUserId: null, raiseRiskTo: 'CRITICAL' } });
    expect(atLeastAsStrict(escalating, base) && atLeastAsStrict(base, escalating)).toBe(true);
  });
});

describe('fail closed', () => {
  it('the throwing permissive policy above a strict one: the strict one applies, and the record says why', () => {
    const permissive = policy('fast lane');
    const strict = policy('production', { allowedOutcomes: ['APPROVE', 'REJECT'], approvals: 2, excludeTaskStarter: true });
    const applied = failClosed([permissive, strict], [failure(permissive)]);
    expect(applied).toMatchObject({ policyId: strict.policyId, name: 'production', version: 1, quorum: { approvals: 2 }, excludeTaskStarter: true });
    expect(applied.failClosed).toEqual({
      failed: [failure(permissive)],
      candidates: [permissive, strict].map(({ policyId, name, version }) => ({ policyId, name, version })),
      applied: 'strictest',
    });
    expect(applied.conditionError).toMatch(
      /the condition of "fast lane" \(version 1\) failed: int\(\) type error\. The strictest .* applies: "production" \(version 1\)/,
    );
  });

  it('the failing policy itself applies only when it is the strictest', () => {
    const strict = policy('strict', { approvals: 3 });
    expect(failClosed([strict, DEFAULT_POLICY], [failure(strict)])).toMatchObject({ name: 'strict', failClosed: { applied: 'strictest' } });
  });

  it('no single strictest: held, it cannot be approved; outcomes every candidate allows of reject and request changes remain', () => {
    const quorum = policy('two approvals', { approvals: 2 });
    const security = policy('security only', { groups: ['g1'], allowedOutcomes: ['APPROVE', 'REJECT', 'REQUEST_CHANGES'], excludeTaskStarter: true });
    const held = failClosed([quorum, security], [failure(quorum)]);
    expect(held).toMatchObject({
      policyId: null,
      name: HELD_POLICY_NAME,
      version: 0,
      allowedOutcomes: ['REJECT', 'REQUEST_CHANGES'],
      excludeTaskStarter: true,
    });
    expect(held.failClosed?.applied).toBe('held');
    expect(held.conditionError).toMatch(/cannot be approved/);
    const noChanges = policy('no changes', { allowedOutcomes: ['APPROVE', 'REJECT'], rejectionRejects: false, approvals: 2 });
    expect(failClosed([noChanges, DEFAULT_POLICY], [failure(noChanges)]).allowedOutcomes).toEqual(['REJECT']);
  });
});
