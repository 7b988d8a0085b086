import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';
import type { PolicyRules } from './rules.js';

// Approval policies of a tenant (docs/POLICIES.md). The policy row holds what is not versioned:
// its name, its place in the order, whether it is on, and which version is current. A version
// (condition and rules) never changes once written (trigger policy_version_immutable); editing a
// policy writes the next one. Versions go with their policy; requests keep their own snapshot.

export const Policy = defineEntity({
  name: 'Policy',
  tableName: 'policy',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    name: p.text(),
    /** Lower first; the first enabled policy whose condition matches is chosen. */
    position: p.integer(),
    enabled: p.boolean().default(true),
    currentVersion: p.integer(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['tenantId', 'name'] }],
  indexes: [{ name: 'policy_tenant_position', properties: ['tenantId', 'position'] }],
});

export const PolicyVersion = defineEntity({
  name: 'PolicyVersion',
  tableName: 'policy_version',
  properties: {
    id: p.uuid().primary(),
    policyId: manyToOneId(Policy, 'policy_id').deleteRule('cascade'),
    version: p.integer(),
    /** CEL over the request (policies/condition.ts); empty matches every request. */
    condition: p.text(),
    rules: p.json<PolicyRules>(),
    createdById: manyToOneId(User, 'created_by_id').nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['policyId', 'version'] }],
});

export const POLICY_ENTITIES = [Policy, PolicyVersion];
export type PolicyRow = InferEntity<typeof Policy>;
export type PolicyVersionRow = InferEntity<typeof PolicyVersion>;

/** The rules a request opened under, frozen into its row (approval.policy). */
export type { PolicySnapshot } from './snapshot.js';
