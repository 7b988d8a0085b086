import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { actionDigest, type ApprovalAction, applyActionEdit, expireIfDue } from '../approvals/module.js';
import { appendEvents, stream, type AuditEventInput } from '../audit/module.js';
import { authorize, canOperate } from '../auth/module.js';
import { queueDelivery, queueFallbackJob, sendAfterCommit } from '../delivery/module.js';
import { enforcePolicy } from '../policies/module.js';
import { actionHashesTo, signApproval, type ApprovalKeys } from '../approval-signing/module.js';
import { ApprovalRequest, Revision, type ApprovalRow } from '../approvals/entities.js';
import { Access } from '../access.js';
import { User } from '../auth/entities.js';
import type { Deps } from '../deps.js';
import { badInput, DomainError } from '../errors.js';
import { checkAssignment } from './assignment.js';
import { noOperateMessage, REQUESTER_MESSAGE } from './who-decides.js';
import { Decision, type DecisionOutcome } from './entities.js';
import { decisionHookFor, RecordedRefusal } from './hooks.js';
import { quorumStep } from './quorum.js';
import { codePointLength, DECISION_LIMITS } from '../limits.js';
import { sql } from '../db/sql.js';
import { editOffered, NOT_EDITABLE_MESSAGE } from '../edit-rules.js';

// A decision binds to the revision and digest the reviewer saw. The approval row is locked for
// the whole decision, so of concurrent decisions exactly one wins; the database refuses a
// second final decision and any change to a closed request even if this code were wrong.

export interface DecideInput {
  approvalId: string;
  revision: number;
  digest: string;
  comment?: string | null;
  /** EDIT_AND_APPROVE: the edited action (send_message: text, data; send_data: values). */
  action?: unknown;
  /** DELEGATE: the new assignee. */
  toUserId?: string;
}

class ExpiredMarker extends Error {}

export async function decide(em: EntityManager, access: Access, deps: Deps, outcome: DecisionOutcome, input: DecideInput) {
  const { config } = deps;
  const viewer = access.viewer;
  const comment = input.comment?.trim() || null;
  if (outcome === 'REQUEST_CHANGES' && !comment) throw badInput('requestChanges needs a comment');
  if (comment && codePointLength(comment, DECISION_LIMITS.commentMax) > DECISION_LIMITS.commentMax) {
    throw badInput(`comment is longer than ${DECISION_LIMITS.commentMax} characters`);
  }
  try {
    const { decision, queued } = await em.transactional(async (tem) => {
      // Every read of the decision goes through its transaction's connection: while concurrent
      // decisions hold pool connections waiting for the row lock, the lock holder must not need
      // a second connection (the grants) to finish, or the pool deadlocks.
      const txAccess = new Access(tem, viewer);
      const locked = await tem.findOne(
        ApprovalRequest,
        { id: input.approvalId, tenantId: viewer.tenantId },
        { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
      );
      // The approver scope (auth/visibility.ts authorize): unseen is NOT_FOUND, seen without
      // OPERATE is FORBIDDEN. The requester sees their own request but is answered
      // SEPARATION_OF_DUTIES below: that, not a missing grant, is why they never decide it.
      const isRequester = !!locked?.requesterId && locked.requesterId === viewer.userId;
      const forbidden = noOperateMessage({ agentId: locked?.agentId ?? null });
      const approval = await authorize(txAccess, isRequester ? 'VIEW' : 'OPERATE', 'approval', locked, forbidden);
      if (approval.status === 'EXPIRED') throw new DomainError('EXPIRED', 'this request has expired');
      if (approval.status !== 'PENDING') {
        throw new DomainError('NOT_PENDING', `this request is ${approval.status} and cannot be decided again`, {
          status: approval.status,
        });
      }
      if (approval.expiresAt && approval.expiresAt.getTime() <= Date.now()) throw new ExpiredMarker();
      if (isRequester) {
        throw new DomainError('SEPARATION_OF_DUTIES', REQUESTER_MESSAGE);
      }
      // The request's policy (frozen when it opened): allowed outcomes, the task's starter.
      await enforcePolicy(tem, approval, outcome, viewer.userId, input.toUserId);
      // Assigned to a person or a reviewer group: only they (or admins) decide it.
      await checkAssignment(tem, approval, txAccess);
      if (input.revision !== approval.revision || input.digest !== approval.digest) {
        throw new DomainError('STALE_REVISION', `you decided on revision ${input.revision}, but the request is at revision ${approval.revision}`, {
          currentRevision: approval.revision,
          currentDigest: approval.digest,
        });
      }

      // What this kind of approval adds to the decision (command approvals: commands/decision.ts).
      const hook = decisionHookFor(approval);
      hook?.checkOutcome(outcome);
      // The requester offered no edit (createApproval editable: false); no policy overrides it.
      if (outcome === 'EDIT_AND_APPROVE' && !editOffered(approval)) {
        throw new DomainError('OUTCOME_NOT_ALLOWED', NOT_EDITABLE_MESSAGE, { outcome, reason: 'NOT_EDITABLE' });
      }
      // A vote toward a quorum leaves the request PENDING; the approval that makes it is final (quorum.ts).
      const step = await quorumStep(tem, approval, viewer.userId, outcome);

      const now = new Date();
      const decisionId = randomUUID();
      const events: AuditEventInput[] = [];
      const base = { tenantId: viewer.tenantId, stream: stream.approval(approval.id), actor: { type: 'user' as const, id: viewer.userId } };
      const routing = { approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, decisionId };

      if (outcome === 'EDIT_AND_APPROVE') {
        const edited = applyActionEdit(approval.action as ApprovalAction, input.action);
        if (!edited.ok) throw new DomainError('INVALID_ACTION', edited.error);
        const digest = actionDigest(edited.action);
        const number = approval.revision + 1;
        tem.create(Revision, {
          id: randomUUID(),
          approvalId: approval.id,
          number,
          action: edited.action,
          digest,
          createdByType: 'user',
          createdById: viewer.userId,
          createdAt: now,
        });
        approval.revision = number;
        approval.digest = digest;
        approval.action = edited.action;
        events.push({ ...base, type: 'approval.revised', data: { ...routing, revision: number, digest, action: edited.action } });
      }

      let delegatedToId: string | null = null;
      if (outcome === 'DELEGATE') {
        if (!input.toUserId) throw badInput('delegate needs toUserId');
        const to = await tem.findOne(User, { id: input.toUserId, tenantId: viewer.tenantId });
        if (!to) throw badInput('toUserId is not a user of this tenant');
        if (approval.requesterId === to.id) throw badInput('a request cannot be delegated to its requester');
        // The assignee must be able to decide: delegating to someone without OPERATE would
        // leave the request to admins only.
        const toAccess = new Access(tem, { userId: to.id, tenantId: to.tenantId, role: to.role, email: to.email });
        if (!(await canOperate(toAccess, approval))) {
          throw badInput(
            approval.agentId ? 'the delegate needs OPERATE on this agent' : 'a request without an approver scope can only be delegated to an admin',
          );
        }
        delegatedToId = to.id;
        approval.assigneeId = to.id;
      }

      const approved = !step.vote && (outcome === 'APPROVE' || outcome === 'EDIT_AND_APPROVE');
      // The approval's signature: made here, from what this transaction writes, and
      // stored with the decision row at its insert; never from a decision read back.
      const signature = approved ? await signApproving(tem, deps.approvalKeys, approval, decisionId, now) : null;
      const decision = tem.create(Decision, {
        id: decisionId,
        approvalId: approval.id,
        outcome,
        revision: approval.revision,
        digest: approval.digest,
        reviewerId: viewer.userId,
        comment,
        delegatedToId,
        vote: step.vote,
        signature,
        decidedAt: now,
      });
      const finalStatus = step.vote
        ? undefined
        : ({ APPROVE: 'APPROVED', EDIT_AND_APPROVE: 'APPROVED', REJECT: 'REJECTED', REQUEST_CHANGES: 'CHANGES_REQUESTED' } as const)[
            outcome as Exclude<DecisionOutcome, 'DELEGATE'>
          ];
      if (finalStatus) {
        approval.status = finalStatus;
        approval.closedAt = now;
      }
      // A vote changes nothing a kind of approval reacts to: its hook sees the final decision.
      if (hook && !step.vote) events.push(...(await hook.onDecision(tem, approval, outcome, base.actor, decisionId, config)));
      const quorum = step.required > 1 || step.vote ? { quorum: { count: step.count, required: step.required } } : {};
      events.push({
        ...base,
        type: step.vote ? 'approval.voted' : outcome === 'DELEGATE' ? 'approval.delegated' : 'approval.decided',
        latencyFrom: approval.createdAt,
        data: {
          ...routing,
          outcome,
          revision: approval.revision,
          digest: approval.digest,
          seenRevision: input.revision,
          seenDigest: input.digest,
          comment,
          delegatedToId,
          status: approval.status,
          ...quorum,
        },
      });

      // Decision rows the quorum did not count for want of a signed record (quorum.ts), reported.
      events.push(...step.alerts);

      let queued: string | null = null;
      if (approved && approval.taskId && !hook?.deliversDecisions) {
        const { deliveryId, messageId } = await queueDelivery(tem, { approvalId: approval.id, decisionId, now });
        await queueFallbackJob(tem, config, deliveryId, now);
        events.push({ ...base, type: 'delivery.queued', data: { ...routing, deliveryId, messageId } });
        queued = deliveryId;
      }
      await tem.flush();
      await appendEvents(tem, events);
      return { decision, queued };
    });
    // The delivery it queued is sent now, by this instance (delivery/direct.ts).
    if (queued) sendAfterCommit(em, deps, queued);
    return decision;
  } catch (e) {
    if (e instanceof RecordedRefusal) {
      await e.recordRefusal(em);
      throw e;
    }
    if (e instanceof ExpiredMarker) {
      await expireIfDue(em, input.approvalId);
      throw new DomainError('EXPIRED', 'this request has expired');
    }
    if (String((e as Error)?.message ?? '').includes('decision_one_say_per_revision')) {
      throw new DomainError('ALREADY_VOTED', 'you already decided this revision of the request');
    }
    if (isDbFinalityError(e)) {
      throw new DomainError('NOT_PENDING', 'this request was decided by someone else');
    }
    throw e;
  }
}

/**
 * The signed approval of the final approving decision `decisionId` on `approval` (as this
 * decision leaves it: the edited revision for an edit then approve), iat its decision time
 * (approval-signing/signed-approval.ts). Only an action that hashes to the digest the reviewer
 * decided on is signed: a request whose stored action does not (a row rewritten behind
 * Taskbay's back) is refused, and nothing is decided.
 */
async function signApproving(tem: EntityManager, keys: ApprovalKeys, approval: ApprovalRow, decisionId: string, now: Date): Promise<string> {
  if (!actionHashesTo(approval.action, approval.digest)) {
    throw new DomainError('INVALID_ACTION', `the request's action does not hash to its digest ${approval.digest}: nothing was approved`, {
      reason: 'ACTION_DIGEST_MISMATCH',
    });
  }
  let taskId: string | null = null;
  if (approval.taskId) {
    const [task] = await sql<{ remote_task_id: string | null }>(tem, 'select remote_task_id from task where id = ?', [approval.taskId]);
    taskId = task?.remote_task_id ?? null;
  }
  return signApproval(
    keys,
    {
      requestId: approval.id,
      decisionId,
      revision: approval.revision,
      revisionDigest: approval.digest,
      taskId,
      externalId: approval.externalId ?? null,
    },
    now,
  );
}

/** The database's own refusal (unique final decision, closed-request trigger) as NOT_PENDING. */
function isDbFinalityError(e: unknown): boolean {
  const msg = String((e as Error)?.message ?? '');
  return msg.includes('decision_one_final') || msg.includes('and final') || msg.includes('approval_one_pending_per_task');
}
