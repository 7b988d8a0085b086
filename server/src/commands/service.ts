import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApprovalRequest, type ApprovalRow } from '../approvals/entities.js';
import { expiryFor, insertPendingApproval, parseExternalId } from '../approvals/module.js';
import { policyRecord } from '../policies/module.js';
import { appendEvents } from '../audit/module.js';
import { authorize } from '../auth/module.js';
import { ensureCommandHookAgent } from '../agents/module.js';
import type { Access } from '../access.js';
import type { Config } from '../config.js';
import { sql } from '../db/sql.js';
import { DomainError, notFound } from '../errors.js';
import { ApprovalGrant, CommandApproval, type ApprovalGrantRow, type CommandApprovalRow } from './entities.js';
import { canonicalSha256 } from '../lib/hashing.js';
import { isUuid } from '../lib/untrusted.js';
import { APPROVAL_LIMITS } from '../limits.js';
import { commandEvent } from './command-event.js';
import {
  APPROVAL_ID,
  commandSetApprovalId,
  parseAgentId,
  parseCommands,
  parseSealedPayload,
  payloadFingerprint,
  runCommandDigest,
  singleApprovalId,
  type RunCommandAction,
} from './rules.js';

// Command approvals (seed 002) on top of the one approval loop: the request is an `approval`
// row (source COMMAND, no task) of the requesting person's command-hook agent, decided by the
// ordinary decision path under the ordinary grants (VIEW/OPERATE on that agent); this module
// adds the sealed payload, the fingerprint check at activation, the single-use grant and the
// seed's events (REQUESTED SHOWN APPROVED REJECTED EXECUTED FAILED REVOKED) in the one chain.
// Its part of the decision (commands/decision.ts) joins the decision path in commands/module.ts, so that path
// imports nothing of this module.

export interface CommandRequestInput {
  agent_id: unknown;
  payload: unknown;
  commands?: unknown;
  /** Seed 002: exists only at the contract level, so a hook-shaped payload may leave it out. */
  verification?: unknown;
  expires_in_seconds?: unknown;
  /** The integration's own call or thread id (approvals/external-id.ts); optional, signed with the approval. */
  external_id?: unknown;
  /**
   * Return this session's live request for the same commands and sealed payload instead of
   * minting another `P-{uuid4}` (the guard's deny mode, whose agent re-runs the command).
   */
  resume?: unknown;
}

export interface CommandView {
  approval: ApprovalRow;
  command: CommandApprovalRow;
  grant: ApprovalGrantRow | null;
}

const title = (commands: string[]) => {
  const first = [...commands[0]!].length > 150 ? [...commands[0]!].slice(0, 149).join('') + '…' : commands[0]!;
  return commands.length === 1 ? `Run: ${first}` : `Run ${commands.length} commands: ${first} …`;
};

/** Whether a request can still lead to a run: pending and not past its expiry, or approved with an unused grant. */
function isLive(view: CommandView, now = new Date()): boolean {
  if (view.command.status === 'pending') return !view.approval.expiresAt || view.approval.expiresAt.getTime() > now.getTime();
  return view.command.status === 'approved' && !!view.grant && effectiveGrantStatus(view.grant, now) === 'PENDING';
}

/**
 * Seed 002: "Approvals are in-loop and single-session". A request belongs to one session: the
 * tenant, the person whose token asked, and the coding agent's agent_id. Asking again returns it
 * only to that session, only while it is live, and only for the same sealed payload; a
 * content-derived COMMAND_SET id met in any other case is refused, since an approval_id is
 * never handed to another session nor reused.
 */
function sameSession(command: CommandApprovalRow, viewer: { userId: string }, agentId: string): boolean {
  return command.requestedById === viewer.userId && command.agentId === agentId;
}

/** The hook asks: a pending command approval in the one inbox with one REQUESTED event. */
export async function requestCommandApproval(
  em: EntityManager,
  access: Access,
  config: Config,
  input: CommandRequestInput,
): Promise<CommandView & { created: boolean }> {
  const agentId = parseAgentId(input.agent_id);
  if (!agentId.ok) throw new DomainError('BAD_USER_INPUT', agentId.error);
  const payload = parseSealedPayload(input.payload, { verification: input.verification });
  if (!payload.ok) throw new DomainError('BAD_USER_INPUT', payload.error);
  if (input.commands != null && payload.commands != null && canonicalSha256(input.commands) !== canonicalSha256(payload.commands)) {
    throw new DomainError('BAD_USER_INPUT', 'commands is given in the payload and beside it with different values');
  }
  const commands = parseCommands(input.commands ?? payload.commands, payload.value);
  if (!commands.ok) throw new DomainError('BAD_USER_INPUT', commands.error);
  const ttl = input.expires_in_seconds ?? null;
  const { expiresMinSeconds: min, expiresMaxSeconds: max } = APPROVAL_LIMITS;
  if (ttl !== null && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < min || ttl > max)) {
    throw new DomainError('BAD_USER_INPUT', `expires_in_seconds must be an integer ${min}..${max}`);
  }
  if (input.resume != null && typeof input.resume !== 'boolean') throw new DomainError('BAD_USER_INPUT', 'resume must be a boolean');
  const externalId = parseExternalId(input.external_id, 'external_id');
  if (!externalId.ok) throw new DomainError('BAD_USER_INPUT', externalId.error);
  const viewer = access.viewer;
  const isSet = commands.value.length >= 2;
  const action: RunCommandAction = { kind: 'run_command', agent_id: agentId.value, commands: commands.value, payload: payload.value };
  const digest = runCommandDigest(action);
  const fingerprint = payloadFingerprint(payload.value);

  return em.transactional(async (tem) => {
    // One session's asks are serialised (step_seq, resume); then, for a set, its id.
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', [`command-session:${viewer.tenantId}:${agentId.value}`]);
    if (input.resume === true && !isSet) {
      const mine = await tem.find(
        CommandApproval,
        { tenantId: viewer.tenantId, requestedById: viewer.userId, agentId: agentId.value, fingerprint, status: { $in: ['pending', 'approved'] } },
        { orderBy: { createdAt: 'desc' }, refresh: true },
      );
      // An approved request with an unused grant first (the re-run runs), else the newest pending one.
      const live: CommandView[] = [];
      for (const candidate of mine) {
        if (canonicalSha256(candidate.commands) !== canonicalSha256(commands.value)) continue;
        const view = await loadView(tem, candidate);
        if (isLive(view)) live.push(view);
      }
      const found = live.find((v) => v.command.status === 'approved') ?? live[0];
      if (found) return { ...found, created: false };
    }
    const approvalIdText = isSet ? commandSetApprovalId(commands.value) : singleApprovalId();
    // A COMMAND_SET id is derived from its content: the same chain asked again by the same
    // session is the same approval (one REQUESTED per approval_id), never a second one.
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', [`command-approval:${viewer.tenantId}:${approvalIdText}`]);
    const existing = await tem.findOne(CommandApproval, { tenantId: viewer.tenantId, approvalId: approvalIdText });
    if (existing) {
      // Another person's or another session's: not theirs to see or use, and the id cannot be
      // minted twice; refused, revealing nothing of it.
      if (!sameSession(existing, viewer, agentId.value)) {
        throw new DomainError(
          'BAD_USER_INPUT',
          `${approvalIdText} belongs to another session's request for the same commands; approvals are single-session and an approval_id is never reused`,
          { reason: 'APPROVAL_ID_USED' },
        );
      }
      if (existing.fingerprint !== fingerprint) {
        throw new DomainError('BAD_USER_INPUT', `${approvalIdText} was asked with another sealed payload; an approval_id stands for one sealed payload`, {
          reason: 'APPROVAL_ID_USED',
        });
      }
      const view = await loadView(tem, existing);
      if (isLive(view)) return { ...view, created: false };
      const was =
        existing.status === 'pending'
          ? 'expired'
          : existing.status === 'approved'
            ? `approved and its grant is ${effectiveGrantStatus(view.grant!)}`
            : existing.status;
      throw new DomainError('BAD_USER_INPUT', `${approvalIdText} was already ${was}; an approval_id is never reused`, {
        reason: 'APPROVAL_ID_USED',
        status: existing.status,
      });
    }
    // step_seq: the n-th ask of this coding-agent session (agent_id), so the session's asks line up.
    const [{ n }] = (await sql<{ n: number }>(tem, 'select count(*)::int as n from command_approval where tenant_id = ? and agent_id = ?', [
      viewer.tenantId,
      agentId.value,
    ])) as [{ n: number }];
    // The request belongs to the hook's agent record (made on this person's first request), so
    // the ordinary grants on that agent decide who sees and decides it.
    const hookAgentId = await ensureCommandHookAgent(tem, viewer);
    const id = randomUUID();
    const now = new Date();
    const expiresAt = expiryFor(config, ttl as number | null, now);
    const approval = await insertPendingApproval(tem, {
      id,
      tenantId: viewer.tenantId,
      key: null,
      source: 'COMMAND',
      title: title(commands.value),
      summary: `${payload.value.operation}\n${payload.value.rationale}`.slice(0, 4000),
      risk: payload.value.risk_level === 'high' ? 'HIGH' : 'MEDIUM',
      requesterId: viewer.userId,
      agentId: hookAgentId,
      taskId: null,
      skillId: null,
      sourceMessageId: null,
      stepSeq: n + 1,
      digest,
      action,
      externalId: externalId.value,
      // A command is approved or rejected as sealed, never edited (commands/decision.ts).
      editable: false,
      expiresAt,
      actor: { type: 'user', id: viewer.userId },
      now,
    });
    const command = tem.create(CommandApproval, {
      id,
      tenantId: viewer.tenantId,
      approvalId: approvalIdText,
      kind: isSet ? 'COMMAND_SET' : 'COMMAND',
      agentId: agentId.value,
      commands: commands.value,
      payload: payload.value,
      fingerprint,
      status: 'pending',
      requestedById: viewer.userId,
      createdAt: now,
      updatedAt: now,
    });
    await tem.flush();
    await appendEvents(tem, [
      commandEvent(
        command,
        approval,
        'REQUESTED',
        { type: 'user', id: viewer.userId },
        {
          kind: command.kind,
          agent_id: agentId.value,
          commands: commands.value,
          payload: payload.value,
          fingerprint,
          revision: 1,
          digest,
          risk: approval.risk,
          expiresAt: expiresAt.toISOString(),
          policy: policyRecord(approval.policy),
          ...(externalId.value !== null ? { externalId: externalId.value } : {}),
        },
      ),
    ]);
    return { approval, command, grant: null, created: true };
  });
}

export async function loadView(em: EntityManager, command: CommandApprovalRow): Promise<CommandView> {
  const approval = await em.findOneOrFail(ApprovalRequest, { id: command.id }, { refresh: true });
  const grant = await em.findOne(ApprovalGrant, { commandApprovalId: command.id }, { refresh: true });
  return { approval, command, grant };
}

/** By seed id (`P-…`) or the approval's uuid, in the viewer's tenant. */
export async function findCommand(em: EntityManager, tenantId: string, id: string): Promise<CommandApprovalRow | null> {
  if (APPROVAL_ID.test(id)) return em.findOne(CommandApproval, { tenantId, approvalId: id }, { refresh: true });
  if (isUuid(id)) return em.findOne(CommandApproval, { tenantId, id: id.toLowerCase() }, { refresh: true });
  return null;
}

/**
 * A command approval the viewer may see (auth/visibility.ts: its requester, VIEW on the hook's
 * agent, admins); anything else is NOT_FOUND, as if it did not exist.
 */
export async function getCommandView(em: EntityManager, access: Access, id: string): Promise<CommandView> {
  const command = await findCommand(em, access.viewer.tenantId, id);
  if (!command) throw notFound('command approval');
  const view = await loadView(em, command);
  await authorize(access, 'VIEW', 'command approval', view.approval);
  return view;
}

/** The grant's status as of now: a PENDING grant past its expiry is EXPIRED. */
export function effectiveGrantStatus(grant: ApprovalGrantRow, now = new Date()) {
  return grant.status === 'PENDING' && grant.expiresAt.getTime() <= now.getTime() ? 'EXPIRED' : grant.status;
}
