import { readFileSync, writeFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { env } from '../lib/taskbay-env.js';
import { EXPORT_FORMAT_V1, ExportFormatError, parseExport } from './export.js';
import { FAILURE_ACKNOWLEDGED } from './failures.js';
import { AuditPinError, parseSignedPin, PIN_FORMAT, pinSignatureProblem, type SignedPin, type TenantPin } from './pin.js';
import { parsePublicKey, readKeyFile, trustedKey, type TrustedKey } from './signing.js';
import { checkpointHash, pinnedCheckpointProblem, verifyAudit, withProblems, type AuditProblem } from './verify.js';

// `taskbay audit export [--out FILE]` fetches the tenant's signed audit log (TASKBAY_URL,
// TASKBAY_TOKEN of an admin); `taskbay audit verify FILE [--public-key PEM|FILE ...]` checks one
// offline. The trust anchor is a public key given here, else the local signing key; never only
// the key written inside the export. The export's own audit pin, and any pin given with --pin (a
// pin file copied from the server's TASKBAY_AUDIT_PIN_DIR, or an earlier export), say which
// checkpoint the log must still hold and which events may be unsigned; without any pin every
// event must be signed unless --allow-unsigned (exports of logs from before signing).

export const AUDIT_EXIT = { OK: 0, BROKEN: 1, USAGE: 64, UNREACHABLE: 69 } as const;

const USAGE =
  'usage: taskbay audit export [--out FILE] | taskbay audit verify FILE [--public-key PEM-or-FILE ...] [--pin PIN-or-EXPORT-FILE ...] [--allow-unsigned]';
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

/** A --pin file: a pin (from the server's TASKBAY_AUDIT_PIN_DIR) or an export carrying one. */
function pinOf(file: string): SignedPin {
  let doc: any;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`--pin ${file}: ${e instanceof SyntaxError ? 'not JSON' : (e as Error).message}`);
  }
  try {
    if (doc?.format === PIN_FORMAT) return parseSignedPin(doc, file);
    const pin = parseExport(doc).pin;
    if (!pin) throw new Error('an export from before pins holds none');
    return pin;
  } catch (e) {
    throw new Error(`--pin ${file}: ${e instanceof AuditPinError || e instanceof ExportFormatError ? e.message : (e as Error).message}`);
  }
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
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { 'public-key': { type: 'string', multiple: true }, pin: { type: 'string', multiple: true }, 'allow-unsigned': { type: 'boolean' } },
    });
  } catch (e) {
    err(`${(e as Error).message}\n${USAGE}`);
    return AUDIT_EXIT.USAGE;
  }
  const [file, ...surplus] = parsed.positionals;
  if (!file || surplus.length) {
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
  // The pins: the export's own and those given. A pin that does not hold is a finding, not a usage error.
  const given: { what: string; signed: SignedPin }[] = [];
  try {
    for (const f of parsed.values.pin ?? []) given.push({ what: f, signed: pinOf(f) });
  } catch (e) {
    err((e as Error).message);
    return AUDIT_EXIT.USAGE;
  }
  const pins: { what: string; pin: TenantPin }[] = [];
  const extra: AuditProblem[] = [];
  const finding = (reason: string) => extra.push({ stream: null, seq: null, checkpointSeq: null, reason });
  for (const { what, signed } of [...(doc.pin ? [{ what: "the export's pin", signed: doc.pin }] : []), ...given]) {
    const bad = pinSignatureProblem(signed, trusted) ?? (signed.pin.tenantId === doc.tenant.id ? null : `it is the pin of tenant ${signed.pin.tenantId}`);
    if (bad) finding(`${what}: ${bad}`);
    else pins.push({ what, pin: signed.pin });
  }
  if (doc.format !== EXPORT_FORMAT_V1 && !doc.pin) finding('the export has no pin');
  const allowUnsigned = parsed.values['allow-unsigned'] === true;
  const legacyHorizon = pins.length ? Math.min(...pins.map((p) => p.pin.legacyHorizon)) : allowUnsigned ? null : 0;
  const r = verifyAudit({ tenantId: doc.tenant.id, events: doc.events, checkpoints: doc.checkpoints, trusted, legacyHorizon });
  const acknowledged = new Set(doc.events.filter((e) => e.type === FAILURE_ACKNOWLEDGED).map((e) => String(e.data.failureId)));
  for (const { what, pin } of pins) {
    if (pin.checkpoint) {
      const found = doc.checkpoints.find((c) => c.seq === pin.checkpoint!.seq) ?? null;
      const p = pinnedCheckpointProblem(pin.checkpoint, found, found && checkpointHash(found), doc.tenant.id, trusted);
      if (p) extra.push({ ...p, reason: `${what}: ${p.reason}` });
    }
    if (pin.failure && !acknowledged.has(pin.failure.id)) {
      finding(`${what} records a failed verification of ${pin.failure.foundAt} that no admin has acknowledged: ${pin.failure.reason}`);
    }
  }
  const result = withProblems(r, extra);
  const anchors = trusted.map((k) => k.keyId).join(', ');
  if (!result.ok) {
    out(`first bad: ${describe(result.problems[0]!)}`);
    for (const p of result.problems.slice(1, 10)) out(`      also: ${describe(p)}`);
    if (result.problems.length > 10) out(`      and ${result.problems.length - 10} more`);
    out(`trusted keys: ${anchors}; export of tenant ${doc.tenant.name} (${doc.tenant.id}) made ${doc.exportedAt ?? '(no date)'}`);
    if (!pins.length && !allowUnsigned && doc.events.some((e) => e.sig === null)) {
      out('no pin: every event must be signed; for a log from before signing existed pass --allow-unsigned (or --pin an earlier export)');
    }
    return AUDIT_EXIT.BROKEN;
  }
  out(
    `ok: tenant ${doc.tenant.name} (${doc.tenant.id}): ${r.events} events in ${r.streams} streams (${r.signedEvents} signed, ` +
      `${r.legacyUnsignedEvents} legacy unsigned), ${r.signedCheckpoints} signed checkpoints; signed by ${r.keyIds.join(', ') || 'no key'}; trusted keys: ${anchors}`,
  );
  for (const { what, pin } of pins) {
    out(pin.checkpoint ? `${what}: checkpoint ${pin.checkpoint.seq} (pinned ${pin.updatedAt}) is in the log as signed` : `${what}: no checkpoint pinned yet`);
  }
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
