import { builder } from '../graphql/builder.js';
import { DECISION_OUTCOMES } from '../lib/outcomes.js';

// The DecisionOutcome enum, defined where both the decision path (decisions/graphql.ts) and the
// policies that narrow it (policies/graphql.ts) can reach it: a policy is chosen before any
// decision, so policies/ imports nothing of decisions/.
export const DecisionOutcomeEnum = builder.enumType('DecisionOutcome', { values: DECISION_OUTCOMES });
