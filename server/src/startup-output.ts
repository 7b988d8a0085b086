import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, type LogFormat, type LogFormatSetting, writeOut } from './log.js';

// What `taskbay serve` says once it is ready: where the console is, how the first admin gets in,
// where data and keys are. On a terminal, readable lines; otherwise one JSON log line with the
// same facts as fields. docs/choices.md "Issue 26: start-up output and the first admin's way in".
//
// The one-time sign-in link is a credential, so it goes only where a person reads it and a log
// collector does not:
//   - stdout, when stdout is a terminal showing text;
//   - else stderr, when that is a terminal and JSON was not asked for (`npm start | jq`,
//     `npm start > taskbay.log`): the person at the terminal sees it, the collected lines do not;
//   - else a file readable only by this user (<dataDir>/admin-sign-in-link.txt); the log line
//     names the file, not the link. TASKBAY_LOG_FORMAT=json says the output is collected, so the
//     link then always goes to the file;
//   - only when that file cannot be written is the link in a log line: the only output left.

/** Beside the keys; rewritten at every start that makes a link, removed at one that makes none. */
export const SIGN_IN_LINK_FILE = 'admin-sign-in-link.txt';

export interface StartupFacts {
  consoleUrl: string;
  /** The local URL of GraphQL (the line tests and scripts wait for names it). */
  graphqlUrl: string;
  graphiql: boolean;
  dataDir: string;
  /** "embedded PostgreSQL in …, port N" or "DATABASE_URL postgres://host:port/db" (no credentials). */
  database: string;
  auditKey: string;
  approvalKey: string;
  auditPins: string;
  /** The admin this start made, if any. */
  adminCreated: string | null;
  signIn: { email: string; url: string; expiresAt: Date } | null;
}

export interface Terminal {
  format: LogFormat;
  /** TASKBAY_LOG_FORMAT as set (`auto` when unset). */
  asked: LogFormatSetting;
  stdoutIsTty: boolean;
  stderrIsTty: boolean;
  writeStderr(text: string): void;
}

export type SecretChannel = 'stdout' | 'stderr' | 'file';

/** Where the sign-in link goes (the rules above). */
export function secretChannel(t: Pick<Terminal, 'format' | 'asked' | 'stdoutIsTty' | 'stderrIsTty'>): SecretChannel {
  if (t.format === 'text' && t.stdoutIsTty) return 'stdout';
  if (t.asked !== 'json' && !t.stdoutIsTty && t.stderrIsTty) return 'stderr';
  return 'file';
}

const clock = (d: Date) => d.toTimeString().slice(0, 5);

function signInLines(s: NonNullable<StartupFacts['signIn']>): string[] {
  return [`  Sign in:   ${s.url}`, `             one-time link for ${s.email}, valid until ${clock(s.expiresAt)}: open it and choose a password`];
}

/** The readable lines of a terminal; the sign-in link only when it goes there. */
export function startupText(f: StartupFacts, withLink: boolean, linkNote: string | null): string {
  const lines = [
    '',
    'Taskbay is ready.',
    `  Console:   ${f.consoleUrl}`,
    `  GraphQL:   ${f.graphqlUrl}${f.graphiql ? ' (GraphiQL on)' : ''}`,
    ...(f.adminCreated ? [`  Admin:     ${f.adminCreated} (created now, no password yet)`] : []),
    ...(f.signIn && withLink ? signInLines(f.signIn) : []),
    ...(f.signIn && linkNote ? [`  Sign in:   ${linkNote}`] : []),
    `  Data:      ${f.dataDir}`,
    `  Database:  ${f.database}`,
    `  Keys:      audit signing     ${f.auditKey}`,
    `             approval signing  ${f.approvalKey}`,
    `             audit pins        ${f.auditPins}`,
    'Stop with Ctrl-C.',
    '',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the link file (0600; its directory 0700 when made here); null when it cannot. A new
 * file renamed into place: its mode is the one given (an existing file would keep its own), and
 * replicas starting together on one volume each leave a whole file (the last one's; every link
 * stays valid).
 */
function writeLinkFile(dataDir: string, s: NonNullable<StartupFacts['signIn']>): string | null {
  const path = join(dataDir, SIGN_IN_LINK_FILE);
  const fresh = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(fresh, `One-time sign-in link for ${s.email}, valid until ${s.expiresAt.toISOString()}; open it to choose a password:\n${s.url}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    renameSync(fresh, path);
    return path;
  } catch {
    rmSync(fresh, { force: true });
    return null;
  }
}

/** Says it: the terminal's lines or the JSON line, and the link where it belongs. */
export function showStartup(f: StartupFacts, t: Terminal): void {
  const link = f.signIn;
  const channel = link ? secretChannel(t) : null;
  const linkFile = link && channel === 'file' ? writeLinkFile(f.dataDir, link) : null;
  // An old file holds a link used or expired by now: no reason to keep it.
  if (!linkFile) removeLinkFile(f.dataDir);
  /** The link itself is in this output: on a terminal, or as the only output left. */
  const linkHere = channel === 'stdout' || (channel === 'file' && !linkFile);
  const note = !link
    ? null
    : channel === 'stderr'
      ? 'a one-time link was written to the terminal (stderr), not to this output'
      : linkFile
        ? `a one-time link for ${link.email} is in ${linkFile} (readable only by this user), valid until ${clock(link.expiresAt)}`
        : null;

  if (t.format === 'text') writeOut(startupText(f, linkHere, note));
  else {
    log.info(
      {
        console: f.consoleUrl,
        dataDir: f.dataDir,
        database: f.database,
        auditKey: f.auditKey,
        approvalKey: f.approvalKey,
        auditPins: f.auditPins,
        ...(f.adminCreated ? { adminCreated: f.adminCreated } : {}),
      },
      `Taskbay GraphQL${f.graphiql ? ' (with GraphiQL)' : ''} at ${f.graphqlUrl}`,
    );
    const about = link ? { email: link.email, expiresAt: link.expiresAt.toISOString() } : {};
    if (note) log.info({ ...about, ...(linkFile ? { file: linkFile } : {}) }, `Sign in: ${note}`);
    if (link && linkHere) {
      log.warn(
        { ...about, signInLink: link.url },
        `Sign in: the one-time link could not be written to ${join(f.dataDir, SIGN_IN_LINK_FILE)}, so it is in this line, the only output left`,
      );
    }
  }
  if (link && channel === 'stderr') t.writeStderr(`\nTaskbay, sign in:\n${signInLines(link).join('\n')}\n\n`);
}

function removeLinkFile(dataDir: string): void {
  try {
    rmSync(join(dataDir, SIGN_IN_LINK_FILE), { force: true });
  } catch {
    // Not there to remove, or not ours to: nothing to say at start-up.
  }
}
