import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { isUuid } from '../lib/untrusted.js';
import { noncePrefix, scopeOf, shellQuote, STDERR_TAIL_BYTES, t3BlockedDenial } from './rules.js';

// The terminal side of command approvals: `taskbay guard -- CMD ...` (the hook's client; with
// --deny-mode for hosts whose hooks can only deny) and `taskbay approvals list|show|approve|reject`
// (for reviewers who live in a terminal).

/** Exit codes of `taskbay guard` apart from the command's own status (README). */
export const GUARD_EXIT = {
  USAGE: 64,
  UNREACHABLE: 69,
  EXPIRED: 75,
  NOT_APPROVED: 77,
} as const;

interface Env {
  url: string;
  token: string | null;
}

export function env(): Env {
  return { url: (process.env.TASKBAY_URL || 'http://localhost:4000').replace(/\/+$/, ''), token: process.env.TASKBAY_TOKEN || null };
}

class Unreachable extends Error {}

async function http(e: Env, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  let res: Response;
  try {
    res = await fetch(e.url + path, {
      method,
      headers: { 'content-type': 'application/json', ...(e.token ? { authorization: `Bearer ${e.token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new Unreachable(`cannot reach Taskbay at ${e.url}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    if (res.status >= 500 || res.status === 404) throw new Unreachable(`Taskbay at ${e.url} answered ${res.status} without JSON`);
  }
  if (res.status >= 500) throw new Unreachable(`Taskbay at ${e.url} answered ${res.status}: ${json?.message ?? text.slice(0, 200)}`);
  return { status: res.status, json };
}

async function gql(e: Env, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const { json } = await http(e, 'POST', '/graphql', { query, variables });
  if (json?.errors?.length) {
    const err = json.errors[0];
    throw new Error(`${err.extensions?.code ?? 'ERROR'}: ${err.message}`);
  }
  return json?.data;
}

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
    const unsubscribe = client.subscribe<{ approvalChanged: { status: string } }>(
      { query: 'subscription($id: ID!) { approvalChanged(approvalId: $id) { id status } }', variables: { id: approvalGid } },
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
  await reportOrKeep(e, { approval_id: approvalId, exit_code: ran.exitCode, ...(ran.detail ? { detail: ran.detail } : {}) });
  return ran.code;
}

// ---- outcome reports that could not be sent (seed 002: no command outcome is lost) ----

interface OutcomeReport {
  approval_id: string;
  exit_code: number;
  detail?: string;
}

/** Pauses between the attempts to send an outcome report before it is kept on disk. */
const REPORT_BACKOFF_MS = [500, 1000, 2000];

/** Where reports are kept: TASKBAY_STATE_DIR, else $XDG_STATE_HOME/taskbay, else ~/.local/state/taskbay. */
export function stateDir(): string {
  if (process.env.TASKBAY_STATE_DIR) return process.env.TASKBAY_STATE_DIR;
  return join(process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'taskbay');
}

const keptDir = () => join(stateDir(), 'outcomes');

/** One attempt: 'sent' (recorded now or already), 'refused' (an answer that will not change), or Unreachable. */
async function sendReport(e: Env, r: OutcomeReport): Promise<{ result: 'sent' | 'refused'; message: string }> {
  const res = await http(e, 'POST', `/api/command-approvals/${encodeURIComponent(r.approval_id)}/outcome`, {
    exit_code: r.exit_code,
    ...(r.detail ? { detail: r.detail } : {}),
  });
  if (res.status === 200) return { result: 'sent', message: `recorded ${res.json?.event}` };
  // The grant already has its terminal event (reported before, or reconciled): nothing to keep.
  if (res.status === 409 && res.json?.reason === 'OUTCOME_RECORDED') return { result: 'sent', message: res.json?.message };
  return { result: 'refused', message: `(${res.json?.error}) ${res.json?.message}` };
}

/** After the command ran: report, retrying with backoff; a server still unreachable gets it on a later run. */
async function reportOrKeep(e: Env, r: OutcomeReport): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const sent = await sendReport(e, r);
      if (sent.result === 'refused') say(`could not record the outcome ${sent.message}`);
      return;
    } catch (err) {
      if (!(err instanceof Unreachable)) throw err;
      if (attempt >= REPORT_BACKOFF_MS.length) {
        const file = keepReport(e, r);
        say(`could not record the outcome (${err.message}); kept it in ${file}, sent on the next guard run or by \`taskbay approvals sweep\``);
        return;
      }
      await new Promise((ok) => setTimeout(ok, REPORT_BACKOFF_MS[attempt]));
    }
  }
}

/** Written 0600 in a 0700 directory, whole or not at all (temp file, then rename). */
function keepReport(e: Env, r: OutcomeReport): string {
  const dir = keptDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${r.approval_id}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ url: e.url, ...r, kept_at: new Date().toISOString() }) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return file;
}

/**
 * Sends the kept reports for this server (TASKBAY_URL); each is removed once the server recorded
 * it or answered that the grant already has its outcome. Returns how many were sent and how many
 * of this server's are still kept.
 */
export async function sendKeptReports(e: Env, print: (line: string) => void): Promise<{ sent: number; kept: number }> {
  let names: string[];
  try {
    names = readdirSync(keptDir()).filter((n) => /^P-[0-9a-f]{32}\.json$/.test(n));
  } catch {
    return { sent: 0, kept: 0 };
  }
  let sent = 0;
  let kept = 0;
  for (const name of names) {
    const file = join(keptDir(), name);
    let r: OutcomeReport & { url?: string };
    try {
      r = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      print(`${file} is not a readable outcome report; left in place`);
      kept++;
      continue;
    }
    // Kept for another server (another TASKBAY_URL): sent when the guard runs against that one.
    if (r.url !== e.url) continue;
    try {
      const res = await sendReport(e, r);
      if (res.result === 'sent') {
        rmSync(file, { force: true });
        print(`${r.approval_id}: ${res.message}`);
        sent++;
      } else {
        print(`${r.approval_id}: refused ${res.message}; kept in ${file}`);
        kept++;
      }
    } catch (err) {
      if (!(err instanceof Unreachable)) throw err;
      print(`${r.approval_id}: ${err.message}; kept in ${file}`);
      kept++;
    }
  }
  return { sent, kept };
}

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
        timeout: { type: 'string', default: '600' },
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
  if (!argv.length || !Number.isInteger(timeout) || timeout < 1 || timeout > 2_592_000 || (opts.risk !== 'high' && opts.risk !== 'medium')) {
    say(USAGE);
    return GUARD_EXIT.USAGE;
  }
  const denyMode = opts['deny-mode'] === true;
  const givenAgentId = opts['agent-id'] ?? process.env.TASKBAY_AGENT_ID;
  // The re-run after approval must name the same session as the blocked run; a default derived
  // from this process would differ between the two tool calls.
  if (denyMode && !givenAgentId) {
    say('--deny-mode needs the coding agent\'s session id: --agent-id aHEX or TASKBAY_AGENT_ID (the same on the re-run)');
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
    say(`waiting for approval of ${a.approval_id} [${noncePrefix(a.approval_id)}] to run: ${exact}  (up to ${timeout}s; decide in the Taskbay inbox or with \`taskbay approvals approve ${a.approval_id}\`)`);
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

// ---- taskbay approvals list|show|approve|reject ----

const FIELDS = `id status source title summary risk revision digest action createdAt expiresAt
  requester { email } decisions { outcome reviewer { email } comment decidedAt }
  command { approvalId kind agentId commands status fingerprint grant { status expiresAt consumedAt } }
  events { seq type actorType at }`;

async function loadApproval(e: Env, id: string): Promise<any> {
  if (/^P-[0-9a-f]{32}$/.test(id)) {
    const d = await gql(e, `query($id: String!) { commandApproval(approvalId: $id) { approval { ${FIELDS} } } }`, { id });
    return d.commandApproval?.approval ?? null;
  }
  const gid = isUuid(id) ? Buffer.from(`Approval:${id.toLowerCase()}`).toString('base64') : id;
  return (await gql(e, `query($id: ID!) { approval(id: $id) { ${FIELDS} } }`, { id: gid })).approval;
}

function line(a: any): string {
  const what = a.command ? `${a.command.approvalId}  ${a.command.commands.join(' ; ')}` : a.title;
  return `${a.id}  ${a.status.padEnd(17)} ${a.risk.padEnd(8)} ${a.source.padEnd(7)} ${what}`;
}

export async function approvals(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { status: { type: 'string', multiple: true }, all: { type: 'boolean' }, comment: { type: 'string' }, first: { type: 'string', default: '50' } },
  });
  const e = env();
  const out = (s: string) => process.stdout.write(s + '\n');
  if (!e.token) {
    process.stderr.write('set TASKBAY_TOKEN to an API token (and TASKBAY_URL, default http://localhost:4000)\n');
    return GUARD_EXIT.USAGE;
  }
  try {
    switch (sub) {
      case 'list': {
        const status = values.all ? null : (values.status?.map((s) => s.toUpperCase()) ?? ['PENDING']);
        const d = await gql(e, `query($status: [ApprovalStatus!], $first: Int) { approvals(status: $status, first: $first) { edges { node { ${FIELDS} } } } }`, {
          status,
          first: Number(values.first),
        });
        const rows = d.approvals.edges.map((x: any) => x.node);
        if (!rows.length) out('no approvals');
        for (const a of rows) out(line(a));
        return 0;
      }
      case 'show': {
        const a = positionals[0] ? await loadApproval(e, positionals[0]) : null;
        if (!a) {
          process.stderr.write('usage: taskbay approvals show <id | P-…>; not found\n');
          return positionals[0] ? 1 : GUARD_EXIT.USAGE;
        }
        out(JSON.stringify(a, null, 2));
        return 0;
      }
      case 'approve':
      case 'reject': {
        const a = positionals[0] ? await loadApproval(e, positionals[0]) : null;
        if (!a) {
          process.stderr.write(`usage: taskbay approvals ${sub} <id | P-…> [--comment TEXT]; not found\n`);
          return positionals[0] ? 1 : GUARD_EXIT.USAGE;
        }
        out(line(a));
        if (a.command) for (const c of a.command.commands) out(`  $ ${c}`);
        else out(JSON.stringify(a.action, null, 2));
        // The decision names the revision and digest shown above.
        const d = await gql(
          e,
          `mutation($id: ID!, $revision: Int!, $digest: String!, $comment: String) { ${sub}(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) { id outcome revision digest } }`,
          { id: a.id, revision: a.revision, digest: a.digest, comment: values.comment ?? null },
        );
        out(`${d[sub].outcome} revision ${d[sub].revision} digest ${d[sub].digest}`);
        return 0;
      }
      case 'sweep': {
        // For a host's Stop hook: send the outcome reports guard runs kept.
        const r = await sendKeptReports(e, out);
        out(`sent ${r.sent}, still kept ${r.kept}`);
        return r.kept ? GUARD_EXIT.UNREACHABLE : 0;
      }
      case 'replay': {
        // Seed 002 `gaia approvals replay`: re-presents (prints, never runs) the commands that ran.
        const id = positionals[0];
        if (!id) {
          process.stderr.write('usage: taskbay approvals replay <P-… | id>\n');
          return GUARD_EXIT.USAGE;
        }
        const res = await http(e, 'GET', `/api/command-approvals/${encodeURIComponent(id)}/executed`);
        if (res.status !== 200) {
          process.stderr.write(`${res.json?.error ?? res.status}: ${res.json?.message ?? 'not found'}\n`);
          return 1;
        }
        out(`${res.json.approval_id} EXECUTED ${res.json.executed_at} exit ${res.json.exit_code}`);
        for (const c of res.json.commands as string[]) out(`  $ ${c}`);
        return 0;
      }
      default:
        process.stderr.write(
          'usage: taskbay approvals list [--status S ...|--all] | show <id> | approve <id> [--comment T] | reject <id> [--comment T] | sweep | replay <id>\n',
        );
        return GUARD_EXIT.USAGE;
    }
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return err instanceof Unreachable ? GUARD_EXIT.UNREACHABLE : 1;
  }
}

/** Entry from cli.ts. */
export async function runCli(command: 'guard' | 'approvals', args: string[]): Promise<never> {
  const code = command === 'guard' ? await guard(args) : await approvals(args);
  process.exit(code);
}

// Run directly (`tsx server/src/grants/cli.ts guard -- CMD`): the same commands without loading
// the server's modules, so a hook's guard starts in about a second instead of several.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'guard' || command === 'approvals') void runCli(command, rest);
  else {
    process.stderr.write('usage: cli.ts guard [options] -- COMMAND ... | approvals list|show|approve|reject|sweep|replay\n');
    process.exit(GUARD_EXIT.USAGE);
  }
}
