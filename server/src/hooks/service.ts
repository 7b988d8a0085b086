import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Access } from '../access.js';
import { reviewerName } from '../auth/module.js';
import {
  consumeGrant,
  reportOutcome,
  scopeOf,
  t3BlockedDenial,
  approvalRequestEnvelope,
  effectiveGrantStatus,
  findCommand,
  loadView,
  requestCommandApproval,
  type CommandView,
} from '../commands/module.js';
import { approveLabel } from '../commands/label.js';
import type { Config } from '../config.js';
import { sql } from '../db/sql.js';
import { Decision } from '../decisions/entities.js';
import { DomainError } from '../errors.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { codePointLength, COMMAND_LIMITS, HOOK_LIMITS } from '../limits.js';
import { SHELL_TOOL, type HookAnswer, type HookHost, type HookInput } from './contracts.js';
import { HookCall } from './entities.js';
import { decideCommand, type CommandFacts, type Verdict } from './rules.js';
import { tenantCommandRules } from './rules-service.js';

// What Taskbay answers a coding agent's hook (docs/COMMAND-APPROVALS.md "taskbay hook"), in its
// own terms (contracts.ts says them in the host's). A shell command the tenant's rules hold
// (hooks/rules.ts; none matching: every shell command) opens a command approval in the token
// owner's hook agent, or resumes the session's live one for the same command (seed 002's
// single-session approvals, commands/service.ts `resume`), and waits for the decision: approved,
// the single-use grant is consumed and the call allowed with exactly the approved command, which
// the host then runs once (the hook never runs it); rejected, expired or still pending at the end
// of the wait, the call is denied, the last with seed 002's [T3_BLOCKED] denial so the agent runs
// the same command again once it is approved. PostToolUse closes the audit cycle: EXECUTED for
// the grant that call consumed (seed 002 "Event chain": PostToolUse fires on a clean exit; a consumed grant
// without it becomes FAILED "outcome never reported" after TASKBAY_COMMAND_OUTCOME_TIMEOUT).

export interface HookContext {
  em: EntityManager;
  orm: MikroORM;
  access: Access;
  config: Config;
  pubsub: TaskbayPubSub;
}

export interface HoldOptions {
  waitSeconds: number;
  expiresSeconds: number;
  /** Aborted when the hook's connection closes: nothing is consumed for a call nobody will run. */
  signal: AbortSignal;
}

const HOST_NAMES: Record<HookHost, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };

/** Seed 002's agent_id of a host session: `a` + hex of a hash of the host and its session_id, the same for every call of the session. */
export function hookAgentId(host: HookHost, sessionId: string): string {
  return `a${createHash('sha256').update(`taskbay-hook\0${host}\0${sessionId}`).digest('hex').slice(0, 32)}`;
}

const deny = (reason: string): HookAnswer => ({ kind: 'deny', reason });
const NONE: HookAnswer = { kind: 'none' };

export async function answerHook(ctx: HookContext, host: HookHost, input: HookInput, opts: HoldOptions): Promise<HookAnswer> {
  if (input.event === 'PostToolUse') return reportPostToolUse(ctx, host, input);
  const agentId = hookAgentId(host, input.sessionId);
  const shell = input.toolName === SHELL_TOOL;
  const command = input.command ?? '';
  const facts: CommandFacts = {
    command,
    scope: shell ? (scopeOf(command) ?? '') : '',
    tool: input.toolName,
    host,
    event: input.event,
    cwd: input.cwd,
    permissionMode: input.permissionMode,
    agent: { id: agentId, type: input.agentType },
  };
  const verdict = decideCommand(await tenantCommandRules(ctx.em, ctx.access.viewer.tenantId), facts, shell ? 'ASK' : 'ALLOW');
  const which = verdict.rule === null ? 'no command rule matched' : `command rule ${verdict.rule}`;
  const failedNote = verdict.failed.length
    ? ` (command rule${verdict.failed.length > 1 ? 's' : ''} ${verdict.failed.map((f) => `${f.rule}: ${f.error}`).join('; ')} could not be evaluated, so the strictest outcome applies)`
    : '';
  if (verdict.outcome === 'DENY') {
    return deny(
      `Taskbay: ${which} denies this ${shell ? 'command' : `${input.toolName} call`}${verdict.reason ? `: ${verdict.reason}` : ''}${failedNote}. It did not run.`,
    );
  }
  if (verdict.outcome === 'ALLOW') return NONE;
  if (!shell) {
    return deny(
      `Taskbay: ${which} asks a person for this ${input.toolName} call${verdict.reason ? ` (${verdict.reason})` : ''}${failedNote}, and Taskbay holds only shell commands (${SHELL_TOOL}) for approval, so it is denied.`,
    );
  }
  if (codePointLength(command, COMMAND_LIMITS.commandMaxChars) > COMMAND_LIMITS.commandMaxChars) {
    return deny(
      `Taskbay: this command is longer than ${COMMAND_LIMITS.commandMaxChars} characters, the most a command approval holds, so it is denied. It did not run.`,
    );
  }
  if (input.event === 'PermissionRequest') {
    const prompt = await promptOfAllowedCall(ctx, host, input.sessionId, command);
    if (prompt) return { kind: 'allow', reason: `Taskbay: the call allowed as ${prompt} runs once`, updatedInput: input.toolInput };
  }
  return hold(ctx, host, input, { agentId, command, scope: facts.scope, verdict, which, failedNote }, opts);
}

interface Held {
  agentId: string;
  command: string;
  scope: string;
  verdict: Verdict;
  which: string;
  failedNote: string;
}

/** Opens or resumes the session's request for this command, waits for its decision, and consumes the grant when it is approved. */
async function hold(ctx: HookContext, host: HookHost, input: HookInput, held: Held, opts: HoldOptions): Promise<HookAnswer> {
  const { access, config } = ctx;
  const why =
    held.verdict.rule === null ? 'no command rule allows it (a shell command waits for a person unless a rule allows it)' : `${held.which} asks a person`;
  let asked: CommandView;
  try {
    asked = await requestCommandApproval(ctx.em, access, config, {
      agent_id: held.agentId,
      payload: {
        operation: `${HOST_NAMES[host]} command intercepted: ${held.scope}`,
        exact_content: held.command,
        scope: held.scope,
        risk_level: 'medium',
        rollback: null,
        // The same command in the same directory under the same rule is the same sealed payload, so a re-run resumes it.
        rationale: `${why}${held.verdict.reason ? `: ${held.verdict.reason}` : ''}; working directory ${input.cwd || '(not given)'}`,
        verification: 'the command exits with status 0',
      },
      expires_in_seconds: opts.expiresSeconds,
      resume: true,
    });
  } catch (e) {
    if (e instanceof DomainError) return deny(`Taskbay refused to hold this command (${e.code}): ${e.message}. It did not run.`);
    throw e;
  }
  const pid = asked.command.approvalId;
  const until = Date.now() + opts.waitSeconds * 1000;
  const view = asked.approval.status === 'PENDING' ? await waitForDecision(ctx, asked.command.id, until, opts.signal) : asked;
  if (opts.signal.aborted) return deny(`Taskbay: the hook's connection closed while ${pid} was waiting; nothing ran.`);
  const status = view.approval.status;
  if (status === 'PENDING') {
    return deny(
      `${t3BlockedDenial(approvalRequestEnvelope(view.command))}Taskbay held this command for ${opts.waitSeconds}s without a decision (${pid}). ` +
        `Run the same command again after it is approved (${approveLabel(pid)}): the same request is resumed and then runs once.`,
    );
  }
  if (status === 'EXPIRED' || view.command.status === 'expired') {
    return deny(`Taskbay: ${pid} expired before anyone decided; the command did not run. Running it again asks again.`);
  }
  if (status === 'REJECTED') return deny(await rejection(ctx.em, view));
  if (view.command.status === 'revoked') return deny(`Taskbay: the grant of ${pid} was revoked by an admin; the command did not run.`);
  if (status !== 'APPROVED' || view.command.status !== 'approved' || !view.grant) {
    return deny(`Taskbay: ${pid} is ${status.toLowerCase()}; the command did not run.`);
  }
  if (effectiveGrantStatus(view.grant) !== 'PENDING') {
    return deny(
      `Taskbay: the grant of ${pid} is ${effectiveGrantStatus(view.grant).toLowerCase()} (a grant is used once, within its time); the command did not run. Running it again asks again.`,
    );
  }
  let consumed: CommandView;
  try {
    consumed = await consumeGrant(ctx.em, access, config, pid, { agent_id: held.agentId });
  } catch (e) {
    if (e instanceof DomainError) return deny(`Taskbay: the grant of ${pid} could not be used (${e.code}): ${e.message}. The command did not run.`);
    throw e;
  }
  // What the host runs is exactly what was approved (the grant's command), never anything else.
  if (consumed.command.commands.length !== 1 || consumed.command.commands[0] !== held.command) {
    return deny(`Taskbay: the granted command of ${pid} is not this command; it did not run.`);
  }
  await ctx.em.fork().transactional(async (tem) => {
    tem.create(HookCall, {
      id: randomUUID(),
      tenantId: access.viewer.tenantId,
      userId: access.viewer.userId,
      host,
      sessionId: input.sessionId,
      toolUseId: input.toolUseId,
      event: input.event as 'PreToolUse' | 'PermissionRequest',
      command: held.command,
      commandApprovalId: consumed.command.id,
      promptUsedAt: null,
      reportedAt: null,
      createdAt: new Date(),
    });
  });
  const approver = await decidedBy(ctx.em, consumed);
  return {
    kind: 'allow',
    reason: `Taskbay: ${pid} approved${approver ? ` by ${approver}` : ''}; it runs once`,
    // Claude Code: updatedInput "replaces the entire input object", so the other fields stay as they were.
    updatedInput: { ...input.toolInput, command: consumed.command.commands[0]! },
  };
}

/** The request's state, live: a decision, an expiry or a revocation reaches the pub/sub through the LISTEN loop (events/listener.ts). */
async function waitForDecision(ctx: HookContext, commandId: string, until: number, signal: AbortSignal): Promise<CommandView> {
  const events = ctx.pubsub.subscribe('approval', { when: (e) => e.approvalId === commandId });
  const current = async () => {
    const em = ctx.orm.em.fork() as unknown as EntityManager;
    const command = await findCommand(em, ctx.access.viewer.tenantId, commandId);
    return loadView(em, command!);
  };
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  try {
    for (;;) {
      // Subscribed first, then read: a decision made before the subscription is seen here.
      const view = await current();
      const left = until - Date.now();
      if (view.approval.status !== 'PENDING' || left <= 0 || signal.aborted) return view;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        events.next(),
        stopped,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.min(left, HOOK_LIMITS.recheckSeconds * 1000));
        }),
      ]);
      clearTimeout(timer);
    }
  } finally {
    stop();
    await events.return!();
  }
}

async function finalDecision(em: EntityManager, approvalId: string) {
  return em.findOne(Decision, { approvalId, vote: false, outcome: { $ne: 'DELEGATE' } }, { refresh: true });
}

async function decidedBy(em: EntityManager, view: CommandView): Promise<string | null> {
  const d = await finalDecision(em, view.approval.id);
  return d ? reviewerName(em, d.reviewerId) : null;
}

/** The reviewer's words and who they are. */
async function rejection(em: EntityManager, view: CommandView): Promise<string> {
  const pid = view.command.approvalId;
  const d = await finalDecision(em, view.approval.id);
  const who = d ? await reviewerName(em, d.reviewerId) : 'a reviewer';
  const words = d?.comment?.trim();
  return `Taskbay: ${pid} was rejected by ${who}${words ? `: "${words}"` : ' (no comment)'}. The command did not run; do not run it again unchanged.`;
}

/**
 * A PermissionRequest for the command the PreToolUse hook allowed moments ago in this session is
 * that call's own prompt (the host asks when its ask rules still apply after an allow): answered
 * once, without a second grant. Returns the P- id, or null.
 */
async function promptOfAllowedCall(ctx: HookContext, host: HookHost, sessionId: string, command: string): Promise<string | null> {
  const v = ctx.access.viewer;
  const rows = await sql<{ approval_id: string }>(
    ctx.em,
    `update hook_call h set prompt_used_at = now()
      from command_approval c
     where h.id = (select id from hook_call where tenant_id = ? and user_id = ? and host = ? and session_id = ? and command = ?
                    order by created_at desc limit 1)
       and c.id = h.command_approval_id
       and h.event = 'PreToolUse' and h.prompt_used_at is null and h.reported_at is null
       and h.created_at > now() - make_interval(secs => ?)
     returning c.approval_id`,
    [v.tenantId, v.userId, host, sessionId, command, HOOK_LIMITS.promptAfterAllowSeconds],
  );
  return rows[0]?.approval_id ?? null;
}

/**
 * PostToolUse: the command of a call a hook allowed ran and exited cleanly (seed 002, "Event chain"). The call is found by the session and its
 * tool_use_id (a PermissionRequest, which has none, by the session and the command); a call
 * Taskbay did not hold has nothing to report.
 */
async function reportPostToolUse(ctx: HookContext, host: HookHost, input: HookInput): Promise<HookAnswer> {
  if (input.toolName !== SHELL_TOOL || input.command === null) return NONE;
  const v = ctx.access.viewer;
  const rows = await sql<{ id: string; approval_id: string }>(
    ctx.em,
    `update hook_call h set reported_at = now()
      from command_approval c
     where h.id = coalesce(
             (select id from hook_call where tenant_id = ? and user_id = ? and host = ? and session_id = ? and tool_use_id = ? and command = ?
                and reported_at is null order by created_at desc limit 1),
             (select id from hook_call where tenant_id = ? and user_id = ? and host = ? and session_id = ? and tool_use_id is null and command = ?
                and reported_at is null order by created_at desc limit 1))
       and c.id = h.command_approval_id and h.reported_at is null
     returning h.id, c.approval_id`,
    [v.tenantId, v.userId, host, input.sessionId, input.toolUseId, input.command, v.tenantId, v.userId, host, input.sessionId, input.command],
  );
  const call = rows[0];
  if (!call) return NONE;
  try {
    await reportOutcome(ctx.em, ctx.access, call.approval_id, { exit_code: 0 });
  } catch (e) {
    // Recorded already (the reconciler's FAILED after the outcome timeout, say): nothing more to say.
    if (e instanceof DomainError && e.code === 'NOT_PENDING') return NONE;
    await sql(ctx.em, 'update hook_call set reported_at = null where id = ?', [call.id]);
    throw e;
  }
  return NONE;
}
