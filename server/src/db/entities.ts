import { Tenant, User, ApiToken, WebSession } from '../auth/entities.js';
import { AgentGrant } from '../auth/agent-grant-entity.js';
import { Agent, CardSnapshot } from '../agents/entities.js';
import { Task, TaskStatusEntry, TaskMessage, TaskReply } from '../tasks/entities.js';
import { ApprovalRequest, Revision } from '../approvals/entities.js';
import { AgUiInterrupt, AgUiRun } from '../tasks/agui-run-entity.js';
import { Decision } from '../decisions/entities.js';
import { Delivery } from '../delivery/entities.js';
import { ExecutionEvidence } from '../evidence/entities.js';
import { AuditEvent, AuditCheckpoint } from '../audit/entities.js';
import { COMMAND_ENTITIES } from '../commands/entities.js';
import { WEBHOOK_ENTITIES } from '../webhooks/entities.js';
import { GROUP_ENTITIES } from '../groups/entities.js';
import { POLICY_ENTITIES } from '../policies/entities.js';
import { HOOK_ENTITIES } from '../hooks/entities.js';

export const entities = [
  Tenant,
  User,
  ApiToken,
  WebSession,
  AgentGrant,
  Agent,
  CardSnapshot,
  Task,
  TaskStatusEntry,
  TaskMessage,
  TaskReply,
  AgUiRun,
  AgUiInterrupt,
  ApprovalRequest,
  Revision,
  Decision,
  Delivery,
  ExecutionEvidence,
  AuditEvent,
  AuditCheckpoint,
  ...COMMAND_ENTITIES,
  ...WEBHOOK_ENTITIES,
  ...GROUP_ENTITIES,
  ...POLICY_ENTITIES,
  ...HOOK_ENTITIES,
];
