import { DECISION_OUTCOMES } from '../lib/outcomes.js';
import { effectiveOutcomes, HELD_POLICY_NAME, type FailClosed, type PolicyRef, type PolicySnapshot } from './snapshot.js';

// The rules a request gets when a condition could not be evaluated on it (policies/choose.ts,
// docs/POLICIES.md "When a condition fails"): the strictest of the policies it could have had,
// never simply the policy whose condition failed (a requester who can make a condition fail
// would otherwise pick that policy over a stricter one below it).
//
// A policy is at least as strict as another when, on every rule a reviewer meets, it asks at
// least as much:
// - it allows only outcomes the other allows (as they apply: a quorum of two or more never
//   delegates);
// - it excludes the task's starter if the other does;
// - it needs at least as many approvals;
// - one rejection rejects under it if it does under the other;
// - when the other counts only some groups' approvals, it counts only (some of) those groups.
// Escalation is not compared: it assigns and raises the risk, it never decides; the policy that
// applies brings its own.
//
// When one candidate is at least as strict as all the others, its rules apply as they are. When
// none is (say a quorum of two against approvals from one group only), the request is held: it
// cannot be approved, only rejected or sent back, until an admin fixes the condition and the
// agent asks again.

export function atLeastAsStrict(a: PolicySnapshot, b: PolicySnapshot): boolean {
  const allowed = effectiveOutcomes(b);
  if (!effectiveOutcomes(a).every((o) => allowed.includes(o))) return false;
  if (b.excludeTaskStarter && !a.excludeTaskStarter) return false;
  if (a.quorum.approvals < b.quorum.approvals) return false;
  if (b.quorum.rejectionRejects && !a.quorum.rejectionRejects) return false;
  const groups = b.quorum.fromGroupIds;
  if (groups.length && (!a.quorum.fromGroupIds.length || !a.quorum.fromGroupIds.every((g) => groups.includes(g)))) return false;
  return true;
}

const ref = (p: PolicySnapshot): PolicyRef => ({ policyId: p.policyId, name: p.name, version: p.version });
const label = (p: PolicyRef) => (p.policyId ? `"${p.name}" (version ${p.version})` : 'the default policy');

/**
 * The rules of a request whose conditions failed: `candidates` are every policy it could have
 * had (in order), `failed` the ones whose condition failed, with the errors.
 */
export function failClosed(candidates: PolicySnapshot[], failed: FailClosed['failed']): PolicySnapshot {
  const strictest = candidates.find((c) => candidates.every((o) => atLeastAsStrict(c, o)));
  const why = `${failed.map((f) => `the condition of ${label(f)} failed: ${f.error}`).join('; ')}`;
  const record = { failed, candidates: candidates.map(ref) };
  if (strictest) {
    const conditionError = `${why}. The strictest of the policies this request could have had applies: ${label(strictest)}`;
    return { ...strictest, conditionError: conditionError.slice(0, 2000), failClosed: { ...record, applied: 'strictest' } };
  }
  const allowedByAll = DECISION_OUTCOMES.filter(
    (o) => o === 'REJECT' || (o === 'REQUEST_CHANGES' && candidates.every((c) => effectiveOutcomes(c).includes(o))),
  );
  const conditionError =
    `${why}. None of the policies this request could have had (${candidates.map((c) => label(c)).join(', ')}) is at least as strict as all the others, ` +
    'so it cannot be approved: it can be rejected or sent back. An admin should fix the condition';
  return {
    policyId: null,
    name: HELD_POLICY_NAME,
    version: 0,
    allowedOutcomes: allowedByAll,
    excludeTaskStarter: candidates.some((c) => c.excludeTaskStarter),
    quorum: { approvals: 1, fromGroupIds: [], rejectionRejects: true },
    escalation: null,
    conditionError: conditionError.slice(0, 2000),
    failClosed: { ...record, applied: 'held' },
  };
}
