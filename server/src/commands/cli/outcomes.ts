import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { http, Unreachable, type Env } from './client.js';

// Outcome reports of commands the guard ran (seed 002: no command outcome is lost): sent with
// retries, kept on disk when the server stays unreachable, and sent by a later guard run or by
// `taskbay approvals sweep`.

export interface OutcomeReport {
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
export async function reportOrKeep(e: Env, r: OutcomeReport, say: (line: string) => void): Promise<void> {
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
