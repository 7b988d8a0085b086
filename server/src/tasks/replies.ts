import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { TERMINAL_STATES } from '../a2a/types.js';
import { canonicalJson, sha256Hex, uuidFromDigest } from '../lib/hashing.js';
import { badInput } from '../errors.js';
import { codePointLength, MESSAGE_LIMITS } from '../limits.js';
import { Task, TaskReply, TaskStatusEntry, type TaskRow } from './entities.js';

// Seed 003: the console supplies "idempotent delivery of the answer". A keyed reply (the answer
// to a form or an A2UI surface, or free text sent with an idempotency key) reaches the agent
// once: its row is written under the task's row lock before the send, so a second submission
// (concurrent, or a retry after a lost answer) finds it. The same reply again is answered with
// the task as it stands and sends nothing; another reply under the same key is refused. A failed
// send removes the row, and a retry sends again with the same derived messageId, which an agent
// that deduplicates by messageId recognises.

/** What a keyed reply answers, and how its key is refused when used for other content. */
export type ReplyKey = { kind: 'answer'; agentMessageId: string } | { kind: 'client'; idempotencyKey: string };

function storedKey(key: ReplyKey): string {
  return key.kind === 'answer' ? `message:${key.agentMessageId}` : `client:${key.idempotencyKey}`;
}

/** A client's idempotency key, checked: 1 to MESSAGE_LIMITS.idempotencyKeyMax characters. */
export function clientReplyKey(idempotencyKey: string): ReplyKey {
  const n = codePointLength(idempotencyKey, MESSAGE_LIMITS.idempotencyKeyMax);
  if (n === 0 || n > MESSAGE_LIMITS.idempotencyKeyMax) {
    throw badInput(`idempotencyKey must be 1 to ${MESSAGE_LIMITS.idempotencyKeyMax} characters`);
  }
  return { kind: 'client', idempotencyKey };
}

/**
 * The A2A messageId of a keyed reply: the same task, key and answer give the same id. `answer` is
 * what makes two submissions the same (the parts sent, less what the server fills in, such as an
 * A2UI action's missing timestamp).
 */
export function replyMessageId(taskId: string, key: ReplyKey, answer: unknown): string {
  return uuidFromDigest(sha256Hex(canonicalJson({ taskId, replyKey: storedKey(key), answer })));
}

/**
 * Seed 003: "The person can only use the form while the task is still waiting": the task waits
 * for input, and its latest status message is the one answered. Run on the locked task row.
 */
async function requireWaitingOn(em: EntityManager, task: TaskRow, agentMessageId: string) {
  const [latest] = await em.find(TaskStatusEntry, { taskId: task.id }, { orderBy: { at: 'desc', id: 'desc' }, limit: 1, refresh: true });
  if (task.state !== 'TASK_STATE_INPUT_REQUIRED' || latest?.messageId !== agentMessageId) {
    throw badInput('the task no longer waits for this message', { reason: 'NOT_WAITING' });
  }
}

export function requireOpen(task: TaskRow) {
  if (task.limitReason != null) throw badInput(`Taskbay stopped following the task (${task.limitReason}): it takes no more messages`);
  if (TERMINAL_STATES.includes(task.state)) throw badInput(`the task is ${task.state} and takes no more messages`);
}

export interface ReplyClaim {
  /** The row written for this send; null when the same reply was claimed before (send nothing). */
  rowId: string | null;
  messageId: string;
}

/**
 * Claims a keyed reply under the task's row lock. The same reply claimed before: `rowId` null.
 * Another reply under the key: BAD_USER_INPUT (ALREADY_ANSWERED, IDEMPOTENCY_KEY_REUSED). An
 * answer to a message the task no longer waits on: NOT_WAITING; free text to an ended task too.
 */
export async function claimReply(em: EntityManager, taskId: string, key: ReplyKey, answer: unknown, userId: string | null): Promise<ReplyClaim> {
  const messageId = replyMessageId(taskId, key, answer);
  const replyKey = storedKey(key);
  return em.fork().transactional(async (tem) => {
    const task = await tem.findOneOrFail(Task, { id: taskId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const earlier = await tem.findOne(TaskReply, { taskId, replyKey });
    if (earlier) {
      if (earlier.messageId === messageId) return { rowId: null, messageId };
      throw key.kind === 'answer'
        ? badInput('this message was already answered with other values', { reason: 'ALREADY_ANSWERED' })
        : badInput('this idempotencyKey was already used for another message on this task', { reason: 'IDEMPOTENCY_KEY_REUSED' });
    }
    if (key.kind === 'answer') await requireWaitingOn(tem, task, key.agentMessageId);
    else requireOpen(task);
    const row = tem.create(TaskReply, { id: randomUUID(), taskId, replyKey, messageId, createdById: userId, createdAt: new Date() });
    await tem.flush();
    return { rowId: row.id, messageId };
  });
}

/** A send that failed frees its key: a retry sends again (with the same messageId). */
export async function releaseReply(em: EntityManager, claim: ReplyClaim) {
  if (claim.rowId) await em.fork().nativeDelete(TaskReply, { id: claim.rowId });
}
