import { readFileSync, writeFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { env } from '../commands/cli/client.js';
import { ExportFormatError, parseExport } from './export.js';
import { parsePublicKey, readKeyFile, trustedKey, type TrustedKey } from './signing.js';
import { verifyAudit, type AuditProblem } from './verify.js';

// `taskbay audit export [--out FILE]` fetches the tenant's signed audit log (TASKBAY_URL,
// TASKBAY_TOKEN of an admin); `taskbay audit verify FILE [--public-key PEM|FILE ...]` checks one
// offline. The trust anchor is a public key given here, else the local signing key; never only
// the key written inside the export.

export const AUDIT_EXIT = { OK: 0, BROKEN: 1, USAGE: 64, UNREACHABLE: 69 } as const;

const USAGE = 'usage: taskbay audit export [--out FILE] | taskbay audit verify FILE [--public-key PEM-or-FILE ...]';
const err = (line: string) => process.stderr.write(`taskbay audit: ${line}\n`);
const out = (line: string) => process.stdout.write(`${line}\n`);

async function exportCommand(args: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({ args, options: { out: { type: 'string' } } }).values;
  } catch (e) {
    err(`${(e as Error).message}\n${USAGE}`);
    return AUDIT_EXIT.USAGE;
  }
  const e = env();
  if (!e.token) {
    err('set TASKBAY_TOKEN to an API token of an admin (and TASKBAY_URL, default http://localhost:4000)');
    return AUDIT_EXIT.USAGE;
  }
  let res: Response;
  try {
    res = await fetch(`${e.url}/api/audit/export`, { headers: { authorization: `Bearer ${e.token}` }, signal: AbortSignal.timeout(120_000) });
  } catch (x) {
    err(`cannot reach Taskbay at ${e.url}: ${(x as Error).message}`);
    return AUDIT_EXIT.UNREACHABLE;
  }
  const text = await res.text();
  if (res.status !== 200) {
    let message = text.slice(0, 300);
    try {
      const j = JSON.parse(text);
      message = `${j.error}: ${j.message}`;
    } catch {
      // not JSON: the text is the message
    }
    err(`Taskbay answered ${res.status}: ${message}`);
    return res.status >= 500 ? AUDIT_EXIT.UNREACHABLE : AUDIT_EXIT.BROKEN;
  }
  if (values.out) {
    writeFileSync(values.out, text, { mode: 0o600 });
    const doc = JSON.parse(text);
    err(`wrote ${doc.events?.length ?? 0} events and ${doc.checkpoints?.length ?? 0} checkpoints of tenant ${doc.tenant?.name} to ${values.out}`);
  } else out(text);
  return AUDIT_EXIT.OK;
}

/** --public-key values (PEM text or a file), else the local signing key; null when there is none. */
function trustAnchors(given: string[]): TrustedKey[] | null {
  if (given.length) {
    return given.map((v) => {
      const pem = v.trim().startsWith('-----BEGIN') ? v : readFileSync(v, 'utf8');
      return trustedKey(parsePublicKey(pem, v.trim().startsWith('-----BEGIN') ? '--public-key' : v));
    });
  }
  const config = loadConfig();
  const local = config.auditSigningKey ?? readKeyFile(config.dataDir);
  return local ? [trustedKey(createPublicKey(local))] : null;
}

function describe(p: AuditProblem): string {
  if (p.stream === null) return `checkpoint ${p.checkpointSeq}: ${p.reason}`;
  return p.seq === null ? `stream ${p.stream}: ${p.reason}` : `stream ${p.stream} seq ${p.seq}: ${p.reason}`;
}

async function verifyCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { 'public-key': { type: 'string', multiple: true } } });
  } catch (e) {
    err(`${(e as Error).message}\n${USAGE}`);
    return AUDIT_EXIT.USAGE;
  }
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length) {
    err(USAGE);
    return AUDIT_EXIT.USAGE;
  }
  let doc: ReturnType<typeof parseExport>;
  try {
    doc = parseExport(JSON.parse(readFileSync(file, 'utf8')));
  } catch (e) {
    err(`${file}: ${e instanceof SyntaxError ? 'not JSON' : e instanceof ExportFormatError ? e.message : (e as Error).message}`);
    return AUDIT_EXIT.USAGE;
  }
  let trusted: TrustedKey[] | null;
  try {
    trusted = trustAnchors(parsed.values['public-key'] ?? []);
  } catch (e) {
    err((e as Error).message);
    return AUDIT_EXIT.USAGE;
  }
  if (!trusted) {
    err(
      'no trusted public key: pass --public-key with the PEM of GET /api/audit/public-key?format=pem (kept apart from the database),\n' +
        'or run where TASKBAY_AUDIT_KEY or the data directory holds the signing key. The key named inside the export is not\n' +
        `trusted on its own (whoever could rewrite the database could write an export and a key to match)${doc.publicKey.keyId ? `; it names key ${doc.publicKey.keyId}` : ''}.`,
    );
    return AUDIT_EXIT.USAGE;
  }
  const r = verifyAudit({ tenantId: doc.tenant.id, events: doc.events, checkpoints: doc.checkpoints, trusted });
  const anchors = trusted.map((k) => k.keyId).join(', ');
  if (!r.ok) {
    out(`first bad: ${describe(r.problems[0]!)}`);
    for (const p of r.problems.slice(1, 10)) out(`      also: ${describe(p)}`);
    if (r.problems.length > 10) out(`      and ${r.problems.length - 10} more`);
    out(`trusted keys: ${anchors}; export of tenant ${doc.tenant.name} (${doc.tenant.id}) made ${doc.exportedAt ?? '(no date)'}`);
    return AUDIT_EXIT.BROKEN;
  }
  out(
    `ok: tenant ${doc.tenant.name} (${doc.tenant.id}): ${r.events} events in ${r.streams} streams (${r.signedEvents} signed, ` +
      `${r.legacyUnsignedEvents} legacy unsigned), ${r.signedCheckpoints} signed checkpoints; signed by ${r.keyIds.join(', ') || 'no key'}; trusted keys: ${anchors}`,
  );
  if (doc.legacyCheckpointsOmitted) out(`${doc.legacyCheckpointsOmitted} legacy global checkpoints are not in the export (they name other tenants' streams)`);
  out(
    r.lastCheckpoint
      ? `last checkpoint: seq ${r.lastCheckpoint.seq} at ${r.lastCheckpoint.at.toISOString()} hash ${r.lastCheckpoint.hash} (keep it: every later export must still contain it)`
      : 'no signed checkpoint yet: a removed stream would not be found',
  );
  return AUDIT_EXIT.OK;
}

export async function runAuditCli(args: string[]): Promise<never> {
  const [sub, ...rest] = args;
  let code: number;
  if (sub === 'export') code = await exportCommand(rest);
  else if (sub === 'verify') code = await verifyCommand(rest);
  else {
    err(USAGE);
    code = AUDIT_EXIT.USAGE;
  }
  process.exit(code);
}
