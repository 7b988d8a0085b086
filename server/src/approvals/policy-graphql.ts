import { ApprovalPolicyRef } from '../policies/module.js';
import { builder } from '../graphql/builder.js';
import { ApprovalRef } from './graphql.js';

// The policy a request opened under, as a field of Approval.
builder.objectFields(ApprovalRef, (t) => ({
  policy: t.field({
    type: ApprovalPolicyRef,
    description: 'The policy this request opened under (docs/POLICIES.md).',
    resolve: (a) => a.policy,
  }),
}));
