import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { TestInstance } from './harness.js';
import { REPO_ROOT } from './repo-root.js';

// The audit log's command line as its user runs it: `taskbay audit ARGS`, the real CLI in a child
// process, and the export it reads, fetched over HTTP into a file.

const TSX = join(REPO_ROOT, 'node_modules/.bin/tsx');

export interface AuditCliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `taskbay audit ARGS` against instance t, without any inherited audit key and with an empty data
 * directory under `dir` (no local key unless `env` gives one).
 */
export function auditCli(t: TestInstance, dir: string, args: string[], env: Record<string, string> = {}): Promise<AuditCliRun> {
  const base = { ...process.env };
  delete base.TASKBAY_AUDIT_KEY;
  const child = spawn(TSX, ['server/src/cli.ts', 'audit', ...args], {
    cwd: REPO_ROOT,
    env: { ...base, TASKBAY_DATA_DIR: join(dir, 'empty-data-dir'), TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: t.adminToken, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

/** The tenant's export over HTTP (the admin's token), written to `dir/name`. */
export async function exportToFile(t: TestInstance, dir: string, name: string): Promise<string> {
  const res = await fetch(`${t.instance.url}/api/audit/export`, { headers: { authorization: `Bearer ${t.adminToken}` } });
  expect(res.status).toBe(200);
  const file = join(dir, name);
  writeFileSync(file, await res.text());
  return file;
}

/** The trust anchor an auditor keeps: the PEM of GET /api/audit/public-key?format=pem, written to `dir/taskbay-audit.pub`. */
export async function publicKeyToFile(t: TestInstance, dir: string): Promise<string> {
  const res = await fetch(`${t.instance.url}/api/audit/public-key?format=pem`);
  expect(res.status).toBe(200);
  const file = join(dir, 'taskbay-audit.pub');
  writeFileSync(file, await res.text());
  return file;
}
