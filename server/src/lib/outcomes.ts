// The outcomes a reviewer's decision can take. Plain data, shared by the decision row
// (decisions/entities.ts) and the policy that may narrow them (policies/snapshot.ts), which
// is chosen when a request opens, before any decision exists.
export const DECISION_OUTCOMES = ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];
