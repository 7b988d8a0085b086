import { POLICY_ENTITIES } from './entities.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './admin-graphql.js';
import { POLICY_CHANNEL, PolicyCache, registerPolicyCache } from './cache.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { choosePolicy, policyRecord } from './choose.js';
export { ConditionBudget } from './condition-budget.js';
export { fmt, type VariableSpecs } from './condition-cost.js';
export { type CompiledCondition, ConditionError, conditionErrorMessage, conditionLanguage } from './condition.js';
export { enforcePolicy, starterExcludedMessage } from './enforce.js';
export {
  cachedCompile,
  checkedRuleList,
  decideByRules,
  type ListedRule,
  type LoadedListRule,
  loadRuleList,
  type RuleListKind,
  type RuleListVerdict,
} from './rule-list.js';
export { ApprovalPolicyRef, RiskEnum } from './graphql.js';
export { DecisionOutcomeEnum } from './outcome-enum.js';
export { DEFAULT_POLICY, type EscalationRule, type PolicyRisk, type PolicySnapshot, type QuorumRule } from './snapshot.js';

// Policies: the CEL rules that choose, when a request opens, who must decide it and how (quorum,
// escalation, separation of duties); frozen into the request as its snapshot.

export const policiesModule = defineModule({
  name: 'policies',
  entities: POLICY_ENTITIES,
  // A tenant's compiled policies, remembered per instance while the LISTEN loop keeps them fresh.
  start({ orm, barrier }) {
    const policies = new PolicyCache(barrier);
    registerPolicyCache(orm, policies);
    return { channels: { [POLICY_CHANNEL]: (tenantId) => policies.invalidateTenant(tenantId) } };
  },
});
