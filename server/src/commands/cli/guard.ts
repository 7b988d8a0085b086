import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { ResultOf, VariablesOf } from '@graphql-typed-document-node/core';
import { APPROVAL_LIMITS } from '../../limits.js';
import { noncePrefix, scopeOf, shellQuote, STDERR_TAIL_BYTES, t3BlockedDenial } from '../rules.js';
import { env, GUARD_EXIT, http, Unreachable, type Env } from './client.js';
import { graphql } from './gql/index.js';
import { reportOrKeep, sendKeptReports } from './outcomes.js';

// `taskbay guard -- CMD ...`: the hook's client (with --deny-mode for hosts whose hooks can only
// deny). Asks for approval of the exact command, waits for the decision, consumes the
// single-use grant just before running the command, and reports its outcome.

const ApprovalDecided = graphql(`
  subscription CliApprovalDecided($id: ID!) {
    approvalChanged(approvalId: $id) {
      id
      status
    }
  }
`);

const say = (line: string) => process.stderr.write(`taskbay guard: ${line}\n`);

/** A stable id of this coding-agent session when none is given: a + 10 hex of host and parent pid. */
function defaultAgentId(): string {
  return `a${createHash('sha256').update(`${hostname()}:${process.ppid}`).digest('hex').slice(0, 10)}`;
}

type Final = { status: string };

/** Waits for the approval to leave PENDING: live over graphql-ws, with a slow poll as a safety net. */
function waitForDecision(e: Env, approvalGid: string, approvalId: string, timeoutMs: number): Promise<Final | 'timeout'> {
  return new Promise((resolve) => {
    let done = false;
    const wsUrl = e.url.replace(/^http/, 'ws') + '/graphql';
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: e.token ? { authorization: `Bearer ${e.token}` } : {},
      retryAttempts: 5,
      lazy: false,
    });
    const finish = (v: Final | 'timeout') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(poll);
      unsubscribe();
      void client.dispose();
      resolve(v);
    };
    const check = async () => {
      try {
        const { status, json } = await http(e, 'GET', `/api/command-approvals/${encodeURIComponent(approvalId)}`);
        if (status === 200 && json.approval_status !== 'PENDING') finish({ status: json.approval_status });
      } catch {
        // the next poll or the subscription decides
      }
    };
    const unsubscribe = client.subscribe<ResultOf<typeof ApprovalDecided>>(
      { query: String(ApprovalDecided), variables: { id: approvalGid } satisfies VariablesOf<typeof ApprovalDecided> },
      {
        next: (v) => {
          const s = v.data?.approvalChanged?.status;
          if (s && s !== 'PENDING') finish({ status: s });
        },
        error: () => {},
        complete: () => {},
      },
    );
    // A decision made before the subscription started is seen by the first check.
    client.on('connected', () => void check());
    const poll = setInterval(() => void check(), 5_000);
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
  });
}

/** Keeps the last `max` bytes written to it. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  cut = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer) {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.max) {
      const first = this.chunks[0]!;
      const excess = this.size - this.max;
      if (first.length <= excess) this.chunks.shift();
      else this.chunks[0] = first.subarray(excess);
      this.size -= Math.min(first.length, excess);
      this.cut = true;
    }
  }
  text(): string {
    return new TextDecoder().decode(Buffer.concat(this.chunks));
  }
}

/**
 * Runs argv with the guard's stdin and stdout; stderr is shown live (tee) and its last
 * STDERR_TAIL_BYTES are kept: a failure's detail is "exited with status N" and that tail.
 */
function runChild(argv: string[]): Promise<{ code: number; exitCode: number; detail: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['inherit', 'inherit', 'pipe'] });
    const tail = new Tail(STDERR_TAIL_BYTES);
    child.stderr!.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      tail.push(chunk);
    });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const cleanup = () => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
    };
    const withStderr = (what: string) => {
      const text = tail.text();
      if (!text) return what;
      return `${what}; stderr${tail.cut ? ` (last ${STDERR_TAIL_BYTES} bytes)` : ''}:\n${text}`;
    };
    let started = true;
    child.on('error', (err) => {
      started = false;
      cleanup();
      resolve({ code: 127, exitCode: 127, detail: `could not start ${argv[0]}: ${err.message}` });
    });
    // 'close': the process ended and its stderr was read to the end.
    child.on('close', (code, signal) => {
      if (!started) return;
      cleanup();
      if (signal) {
        const n = ({ SIGINT: 2, SIGTERM: 15, SIGKILL: 9, SIGHUP: 1 } as Record<string, number>)[signal] ?? 1;
        resolve({ code: 128 + n, exitCode: -1, detail: withStderr(`killed by ${signal}`) });
      } else resolve({ code: code ?? 1, exitCode: code ?? 1, detail: code ? withStderr(`exited with status ${code}`) : null });
    });
  });
}

/** After approval: consume the single-use grant for this session, run the command, report the outcome. */
async function consumeAndRun(e: Env, approvalId: string, agentId: string, exact: string, argv: string[]): Promise<number> {
  // Just before running: consume the single-use grant.
  const consumed = await http(e, 'POST', `/api/command-approvals/${encodeURIComponent(approvalId)}/consume`, { agent_id: agentId });
  if (consumed.status !== 200) {
    say(`the grant could not be used (${consumed.json?.error}): ${consumed.json?.message}; the command did not run`);
    return consumed.json?.error === 'EXPIRED' ? GUARD_EXIT.EXPIRED : GUARD_EXIT.NOT_APPROVED;
  }
  if (consumed.json.commands?.length !== 1 || consumed.json.commands[0] !== exact) {
    say('the granted command is not the command given here; the command did not run');
    return GUARD_EXIT.NOT_APPROVED;
  }
  say(`approved; running ${exact}`);
  const ran = await runChild(argv);
  await reportOrKeep(e, { approval_id: approvalId, exit_code: ran.exitCode, ...(ran.detail ? { detail: ran.detail } : {}) }, say);
  return ran.code;
}

/**
 * The guard waits inside the agent's shell tool call, so by default it gives up before that call
 * does: Claude Code's Bash tool times out after 120 s unless the call asks for more
 * (BASH_DEFAULT_TIMEOUT_MS), and a timed-out call is moved to the background, not stopped.
 */
export const GUARD_DEFAULT_TIMEOUT_SECONDS = 110;

const USAGE =
  'usage: taskbay guard [--deny-mode] [--timeout SECONDS] [--risk high|medium] [--agent-id aHEX] [--operation T] [--rationale T] [--verification T] -- COMMAND [ARG ...]';

export async function guard(args: string[]): Promise<number> {
  const dash = args.indexOf('--');
  const own = dash >= 0 ? args.slice(0, dash) : args;
  const argv = dash >= 0 ? args.slice(dash + 1) : [];
  let opts;
  try {
    opts = parseArgs({
      args: own,
      options: {
        timeout: { type: 'string', default: String(GUARD_DEFAULT_TIMEOUT_SECONDS) },
        'agent-id': { type: 'string' },
        'deny-mode': { type: 'boolean', default: false },
        risk: { type: 'string', default: 'medium' },
        operation: { type: 'string' },
        rationale: { type: 'string' },
        verification: { type: 'string' },
      },
    }).values;
  } catch (err) {
    say((err as Error).message);
    return GUARD_EXIT.USAGE;
  }
  const timeout = Number(opts.timeout);
  if (
    !argv.length ||
    !Number.isInteger(timeout) ||
    timeout < APPROVAL_LIMITS.expiresMinSeconds ||
    timeout > APPROVAL_LIMITS.expiresMaxSeconds ||
    (opts.risk !== 'high' && opts.risk !== 'medium')
  ) {
    say(USAGE);
    return GUARD_EXIT.USAGE;
  }
  const denyMode = opts['deny-mode'] === true;
  const givenAgentId = opts['agent-id'] ?? process.env.TASKBAY_AGENT_ID;
  // The re-run after approval must name the same session as the blocked run; a default derived
  // from this process would differ between the two tool calls.
  if (denyMode && !givenAgentId) {
    say("--deny-mode needs the coding agent's session id: --agent-id aHEX or TASKBAY_AGENT_ID (the same on the re-run)");
    return GUARD_EXIT.USAGE;
  }
  const agentId = givenAgentId ?? defaultAgentId();
  const e = env();
  if (!e.token) {
    say('set TASKBAY_TOKEN to an API token (and TASKBAY_URL, default http://localhost:4000)');
    return GUARD_EXIT.USAGE;
  }
  // Outcomes an earlier run could not report go first (a server still unreachable keeps them).
  await sendKeptReports(e, (l) => say(`kept outcome ${l}`));
  const exact = shellQuote(argv);
  // Seed 002: scope is `command.split()[0]` of the verbatim command (not argv[0], which the
  // quoting may change).
  const scope = scopeOf(exact);
  if (scope === null) {
    say(USAGE);
    return GUARD_EXIT.USAGE;
  }
  try {
    const asked = await http(e, 'POST', '/api/command-approvals', {
      agent_id: agentId,
      payload: {
        operation: opts.operation ?? `MUTATIVE command intercepted: ${scope}`,
        exact_content: exact,
        scope,
        risk_level: opts.risk,
        rollback: null,
        rationale: opts.rationale ?? `${scope} runs only with a person's approval (taskbay guard)`,
        verification: opts.verification ?? 'the command exits with status 0',
      },
      expires_in_seconds: timeout,
      // Deny mode: the re-run finds the request the blocked run opened (this session, same command).
      ...(denyMode ? { resume: true } : {}),
    });
    if (asked.status === 401) {
      say(`Taskbay refused the token: ${asked.json?.message ?? 'unauthenticated'}`);
      return GUARD_EXIT.NOT_APPROVED;
    }
    if (asked.status >= 300) {
      say(`Taskbay refused the request (${asked.json?.error}): ${asked.json?.message}`);
      return asked.status === 400 ? GUARD_EXIT.USAGE : GUARD_EXIT.NOT_APPROVED;
    }
    const a = asked.json;
    if (denyMode) {
      if (a.status === 'approved' && a.grant?.status === 'PENDING') return await consumeAndRun(e, a.approval_id, agentId, exact, argv);
      // Not approved yet: the seed's denial with the envelope, and nothing runs.
      process.stdout.write(t3BlockedDenial(a.envelope));
      say(`${a.approval_id} [${noncePrefix(a.approval_id)}] is waiting for approval; the command did not run`);
      return GUARD_EXIT.NOT_APPROVED;
    }
    say(
      `waiting for approval of ${a.approval_id} [${noncePrefix(a.approval_id)}] to run: ${exact}  (up to ${timeout}s; decide in the Taskbay inbox or with \`taskbay approvals approve ${a.approval_id}\`)`,
    );
    const decided = await waitForDecision(e, a.id, a.approval_id, timeout * 1000);
    if (decided === 'timeout') {
      say(`no decision within ${timeout}s; the command did not run`);
      return GUARD_EXIT.EXPIRED;
    }
    if (decided.status === 'EXPIRED') {
      say('the request expired; the command did not run');
      return GUARD_EXIT.EXPIRED;
    }
    if (decided.status !== 'APPROVED') {
      say(`${decided.status.toLowerCase().replace('_', ' ')}; the command did not run`);
      return GUARD_EXIT.NOT_APPROVED;
    }
    return await consumeAndRun(e, a.approval_id, agentId, exact, argv);
  } catch (err) {
    if (err instanceof Unreachable) {
      say(`${err.message}; the command did not run`);
      return GUARD_EXIT.UNREACHABLE;
    }
    throw err;
  }
}
