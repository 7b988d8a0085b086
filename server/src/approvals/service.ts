import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { TERMINAL_STATES } from '../a2a/types.js';
import type { Config } from '../config.js';
import { appendEvents, stream, streamOpenedHere, SYSTEM, type Actor, type AuditEventInput, type AuditPayload } from '../audit/module.js';
import { latestSnapshot } from '../agents/module.js';
import { authorize, authorizeAgent } from '../auth/module.js';
import { choosePolicy, policyRecord } from '../policies/module.js';
import { actionDigest, approvalRequestKey, type ApprovalAction } from './digest.js';
import { AGUI_KEY_PREFIX, ApprovalRequest, type ApprovalSource, type RevisionRow, type Risk } from './entities.js';
import { insertApprovalWithRevision } from './insert.js';
import { parseApprovalRequest, type ApprovalRequestInput } from './request-part.js';
import { parseExternalId } from './external-id.js';
import type { Access } from '../access.js';
import { badInput, DomainError } from '../errors.js';
import { Agent, type AgentRow } from '../agents/entities.js';
import { readRows } from '../db/read-rows.js';
import { Task } from '../tasks/entities.js';
import { AGENT_LIMITS, codePointLength, type RiskLevel } from '../limits.js';

// The life of an approval request apart from decisions: opening (from an agent or a person),
// superseding, expiring, closing when its task ends.

export const toRisk = (r: RiskLevel): Risk => r.toUpperCase() as Risk;

export interface OpenContext {
  tenantId: string;
  agentId: string | null;
  taskId: string | null;
  skillId: string | null;
  sourceMessageId: string | null;
  stepSeq: number | null;
  requesterId: string | null;
  actor: Actor;
  source: 'AGENT' | 'USER';
  /** Agent requests carry a key; a replay of the same key opens nothing. */
  key: string | null;
  /** The integration's own call or thread id (createApproval, command hooks): stored, signed with the approval, outside the digest. */
  externalId?: string | null;
  /** false: the request offers no edit-then-approve (edit-rules.ts editOffered). */
  editable?: boolean;
  /**
   * false: the task's open requests stay open (the interrupts of one AG-UI run, which are live
   * together; their keys start with AGUI_KEY_PREFIX). Default: the open request is superseded.
   */
  supersede?: false;
}

export function expiryFor(config: Config, expiresInSeconds: number | null, now = new Date()): Date {
  return new Date(now.getTime() + (expiresInSeconds ?? config.defaultApprovalTtlSeconds) * 1000);
}

/**
 * Opens a PENDING request; the task's open request (if any) becomes SUPERSEDED by it.
 * Must run inside a transaction. Returns null when the key was seen before (replay).
 */
export async function openApproval(tem: EntityManager, config: Config, ctx: OpenContext, request: ApprovalRequestInput) {
  if (ctx.key && (await tem.count(ApprovalRequest, { key: ctx.key }))) return null;
  const id = randomUUID();
  const digest = actionDigest(request.action);
  const events: AuditEventInput[] = [];
  if (ctx.taskId && ctx.supersede !== false) {
    // The one live request the index allows (an AG-UI interrupt's request is not it).
    const pending = await tem.find(ApprovalRequest, { taskId: ctx.taskId, status: 'PENDING' }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const open = pending.find((a) => !a.key?.startsWith(AGUI_KEY_PREFIX));
    if (open) {
      open.status = 'SUPERSEDED';
      open.supersededById = id;
      open.closedAt = new Date();
      // The old request must leave PENDING before the new one enters (one live per task).
      await tem.flush();
      events.push({
        tenantId: ctx.tenantId,
        stream: stream.approval(open.id),
        type: 'approval.superseded',
        actor: ctx.actor,
        data: { approvalId: open.id, supersededById: id, agentId: open.agentId, taskId: open.taskId },
      });
    }
  }
  const now = new Date();
  const approval = await insertPendingApproval(tem, {
    id,
    tenantId: ctx.tenantId,
    key: ctx.key,
    source: ctx.source,
    title: request.title,
    summary: request.summary,
    risk: toRisk(request.risk),
    requesterId: ctx.requesterId,
    agentId: ctx.agentId,
    taskId: ctx.taskId,
    skillId: ctx.skillId,
    sourceMessageId: ctx.sourceMessageId,
    stepSeq: ctx.stepSeq,
    digest,
    action: request.action,
    externalId: ctx.externalId ?? null,
    editable: ctx.editable ?? true,
    expiresAt: expiryFor(config, request.expiresInSeconds, now),
    actor: ctx.actor,
    now,
  });
  events.push({
    tenantId: ctx.tenantId,
    stream: stream.approval(id),
    type: 'approval.requested',
    actor: ctx.actor,
    data: {
      approvalId: id,
      agentId: ctx.agentId,
      taskId: ctx.taskId,
      source: ctx.source,
      key: ctx.key,
      title: request.title,
      risk: approval.risk,
      revision: 1,
      digest,
      action: request.action,
      expiresAt: approval.expiresAt!.toISOString(),
      policy: policyRecord(approval.policy),
      ...creationDetails(approval),
    },
  });
  // Events in the order they happened: the old one closes, then the new one opens.
  await appendEvents(tem, events);
  return approval;
}

/**
 * What the event of a request's creation adds about how it was opened: its externalId when it has
 * one, `editable: false` when it offers no edit (nothing when neither, as events were before).
 */
export function creationDetails(a: { externalId?: string | null; editable?: boolean }): Pick<AuditPayload<'approval.requested'>, 'externalId' | 'editable'> {
  return { ...(a.externalId != null ? { externalId: a.externalId } : {}), ...(a.editable === false ? { editable: false } : {}) };
}

export interface PendingApprovalFields {
  id: string;
  tenantId: string;
  key: string | null;
  source: ApprovalSource;
  title: string;
  summary: string | null;
  risk: Risk;
  requesterId: string | null;
  agentId: string | null;
  taskId: string | null;
  skillId: string | null;
  sourceMessageId: string | null;
  stepSeq: number | null;
  digest: string;
  /** An agent/person action, or another source's action (a command) stored as it is. */
  action: ApprovalAction | object;
  /** The integration's own call or thread id (approvals/external-id.ts); none when absent. */
  externalId?: string | null;
  /** false: no edit-then-approve (edit-rules.ts editOffered); editable when absent. */
  editable?: boolean;
  expiresAt: Date;
  actor: Actor;
  /** The creation time; expiresAt is computed from the same instant. */
  now: Date;
}

/**
 * The one place a PENDING request is written: the request at revision 1 and its first revision,
 * in the caller's transaction. Callers write their own audit events; the request's stream is new
 * (its id was made up here), so its first event takes no lock. Expiry needs nothing queued: the
 * sweepers find the request by its deadline (approvals/expiry.ts).
 */
export async function insertPendingApproval(tem: EntityManager, { now, actor, ...f }: PendingApprovalFields) {
  const policy = await choosePolicy(tem, {
    tenantId: f.tenantId,
    agentId: f.agentId,
    skillId: f.skillId,
    taskId: f.taskId,
    source: f.source,
    risk: f.risk,
    title: f.title,
    summary: f.summary,
    action: f.action,
  });
  // What the caller changed before goes first (the request's own rows go in one statement: insert.ts).
  await tem.flush();
  const approval = await insertApprovalWithRevision(
    tem,
    {
      ...f,
      externalId: f.externalId ?? null,
      editable: f.editable ?? true,
      policy,
      action: f.action as ApprovalAction,
      status: 'PENDING',
      assigneeId: null,
      assigneeGroupId: null,
      // The database derives the escalation time from the policy (approval_escalation_due).
      escalateAt: null,
      escalatedAt: null,
      revision: 1,
      version: 1,
      supersededById: null,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
    },
    {
      id: randomUUID(),
      approvalId: f.id,
      number: 1,
      action: f.action as ApprovalAction,
      digest: f.digest,
      createdByType: actor.type as RevisionRow['createdByType'],
      createdById: actor.id,
      createdAt: now,
    },
  );
  streamOpenedHere(tem, stream.approval(f.id));
  return approval;
}

export function agentRequestKey(localTaskId: string, messageId: string, action: ApprovalAction): string {
  return approvalRequestKey(localTaskId, messageId, actionDigest(action));
}

/** A task that ends before a decision supersedes its open request; nothing is sent. */
export async function closeOpenApprovalOfEndedTask(tem: EntityManager, tenantId: string, taskId: string, state: string) {
  const open = await tem.findOne(ApprovalRequest, { taskId, status: 'PENDING' }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!open) return null;
  open.status = 'SUPERSEDED';
  open.closedAt = new Date();
  await tem.flush();
  await appendEvents(tem, [
    {
      tenantId,
      stream: stream.approval(open.id),
      type: 'approval.superseded',
      actor: SYSTEM,
      data: { approvalId: open.id, supersededById: null, agentId: open.agentId, taskId, reason: `task ${state}` },
    },
  ]);
  return open;
}

/** A person asks others (createApproval): the requester is set, separation of duties applies. */
export async function createUserApproval(
  em: EntityManager,
  access: Access,
  config: Config,
  input: {
    taskId?: string | null;
    /** Without a task: the approver scope (OPERATE on it decides, VIEW sees). */
    agentId?: string | null;
    skillId?: string | null;
    title: string;
    summary?: string | null;
    risk?: RiskLevel | null;
    expiresInSeconds?: number | null;
    action: unknown;
    /** The integration's own call or thread id (limits.ts EXTERNAL_ID_LIMITS). */
    externalId?: unknown;
    /** false: the request offers no edit-then-approve. Default true. */
    editable?: boolean | null;
  },
) {
  const externalId = parseExternalId(input.externalId);
  if (!externalId.ok) throw badInput(externalId.error);
  const parsed = parseApprovalRequest({
    title: input.title,
    ...(input.summary != null ? { summary: input.summary } : {}),
    ...(input.risk != null ? { risk: input.risk } : {}),
    ...(input.expiresInSeconds != null ? { expiresInSeconds: input.expiresInSeconds } : {}),
    action: input.action,
  });
  if (!parsed.ok) {
    throw new DomainError(/action/i.test(parsed.error) ? 'INVALID_ACTION' : 'BAD_USER_INPUT', parsed.error);
  }
  const skillId = input.skillId?.trim() || null;
  if (input.taskId && (input.agentId || skillId)) {
    throw badInput("a request on a task is scoped to the task's agent and skill: give taskId or agentId (and skillId), not both");
  }
  if (skillId && !input.agentId) throw badInput('skillId needs agentId');
  const scope = input.agentId ? await approverScope(em, access, input.agentId, skillId) : null;
  let task = null;
  if (input.taskId) {
    task = await authorize(access, 'OPERATE', 'task', await em.findOne(Task, { id: input.taskId, tenantId: access.viewer.tenantId }));
  }
  return em.transactional(async (tem) => {
    let stepSeq: number | null = null;
    if (task) {
      // docs/ARCHITECTURE.md "The flow" 9: a request on an ended task is never live. The lock orders this
      // against an observation that ends the task (it holds the same row lock).
      const current = await tem.findOneOrFail(Task, { id: task.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (TERMINAL_STATES.includes(current.state)) {
        throw new DomainError('BAD_USER_INPUT', `the task is ${current.state} and takes no more requests`);
      }
      stepSeq = current.lastStepSeq || null;
    }
    return openApproval(
      tem,
      config,
      {
        tenantId: access.viewer.tenantId,
        agentId: task?.agentId ?? scope?.agentId ?? null,
        taskId: task?.id ?? null,
        skillId: task?.skillId ?? scope?.skillId ?? null,
        sourceMessageId: null,
        stepSeq,
        requesterId: access.viewer.userId,
        actor: { type: 'user', id: access.viewer.userId },
        source: 'USER',
        key: null,
        externalId: externalId.value,
        editable: input.editable ?? true,
      },
      parsed.request,
    );
  });
}

/**
 * The approver scope a person names for a request without a task: an agent of the tenant they
 * can see (NOT_FOUND otherwise, as for any unseen agent), and optionally one of its card's
 * skills. A command hook's agent may be named too; it has no skills.
 */
async function approverScope(em: EntityManager, access: Access, agentId: string, skillId: string | null) {
  // Read, not changed: a plain row (db/read-rows.ts), no managed entity on the ingest path.
  const [row] = await readRows<AgentRow>(em, Agent, { id: agentId, tenantId: access.viewer.tenantId });
  const agent = await authorizeAgent(access, 'VIEW', row ?? null, skillId);
  if (skillId) {
    if (codePointLength(skillId, AGENT_LIMITS.skillIdMax) > AGENT_LIMITS.skillIdMax)
      throw badInput(`skillId is longer than ${AGENT_LIMITS.skillIdMax} characters`);
    const card = (await latestSnapshot(em, agent.id))?.card ?? null;
    if (!card?.skills.some((s) => s.id === skillId)) throw badInput(`the agent ${agent.name} has no skill ${skillId}`);
  }
  return { agentId: agent.id, skillId };
}
