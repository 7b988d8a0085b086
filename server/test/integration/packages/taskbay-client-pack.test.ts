import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outsideEnv } from '../../support/outside-env.js';
import { runProgram } from '../../support/guard-process.js';
import {
  appendProbeEvent,
  createMember,
  eventually,
  probeRequests,
  startTestInstance,
  type TestInstance,
  untilProbeArrives,
  rawId,
} from '../../support/harness.js';
import { REPO_ROOT } from '../../support/repo-root.js';
import { SAMPLES } from '../../support/doc-samples.js';

// @taskbay/client as an integrator gets it: packed as npm publishes it (prepack builds dist/),
// installed into an empty directory outside the repository, its declarations checked by tsc, and
// the docs' samples (docs/samples/client-*.mjs, embedded in README.md and docs/CLIENT.md) run
// from that directory against a real server: no NODE_PATH, nothing of the repository resolvable.
// `ws` is installed beside it: Node 20 has no global WebSocket. The install itself is the docs'
// sample docs/samples/client-install.sh.

const run = promisify(execFile);

let work: string;
let app: string;
let files: string[];
let t: TestInstance;
let requester: { id: string; email: string; token: string };
const probes = probeRequests(() => t);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'taskbay-client-pack-'));
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
  // The install as docs/CLIENT.md shows it: its sample script, run from outside the repository
  // (npm takes packages from its cache when it has them).
  const env = outsideEnv({ npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' });
  await run('sh', [join(SAMPLES, 'client-install.sh'), REPO_ROOT, app], { cwd: work, env, maxBuffer: 16 * 1024 * 1024 });
  const tarball = readdirSync(app).find((f) => /^taskbay-client-.*\.tgz$/.test(f));
  expect(tarball, 'client-install.sh left no taskbay-client tarball').toBeDefined();
  files = (await run('tar', ['-tzf', join(app, tarball!)])).stdout.split('\n').filter(Boolean);
  for (const f of readdirSync(SAMPLES).filter((f) => f.startsWith('client-'))) copyFileSync(join(SAMPLES, f), join(app, f));
  t = await startTestInstance();
  requester = await createMember(t);
}, 240_000);

afterAll(async () => {
  await t?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function sample(name: string, args: string[], token: string) {
  return runProgram(process.execPath, [name, ...args], { cwd: app, env: outsideEnv({ TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: token }) });
}

describe('the client samples in README.md and docs/CLIENT.md', () => {
  it('are embedded exactly as the files this test runs (README: all three)', () => {
    const samples = readdirSync(SAMPLES).filter((f) => f.startsWith('client-') && f.endsWith('.mjs'));
    expect(samples.sort()).toEqual(['client-approve.mjs', 'client-stream-inbox.mjs', 'client-wait-for-decision.mjs']);
    for (const doc of ['README.md', 'docs/CLIENT.md']) {
      const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
      const embedded = [...text.matchAll(/<!-- sample: docs\/samples\/(client-[\w.-]+\.mjs) -->\n```js\n([\s\S]*?)```/g)];
      expect(embedded.length, doc).toBeGreaterThan(0);
      for (const [, file, block] of embedded) expect(block, `${doc}: ${file}`).toBe(readFileSync(join(SAMPLES, file!), 'utf8'));
      if (doc === 'README.md') expect(embedded.map((m) => m[1]).sort()).toEqual(samples.sort());
    }
  });
});

describe('the packed @taskbay/client', () => {
  it('holds the ES modules and declarations and the operation documents, not the TypeScript sources or the build', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/gql/functions.js',
        'package/dist/gql/graphql.d.ts',
        'package/src/operations/mutations.graphql',
      ]),
    );
    expect(files.filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
    expect(files.filter((f) => /build\.mjs|codegen/.test(f))).toEqual([]);
  });

  it('type-checks an integrator’s code against its declarations (and refuses a decision without a digest)', async () => {
    writeFileSync(
      join(app, 'check.ts'),
      `import { createTaskbayClient, isTaskbayError, type TaskbayErrorCode } from '@taskbay/client';
const taskbay = createTaskbayClient({ url: 'http://localhost:4000', token: 'tb_x' });
export async function check(id: string): Promise<TaskbayErrorCode | string> {
  const a = await taskbay.approval({ id });
  if (!a) return 'none';
  // @ts-expect-error: a decision names its digest
  await taskbay.approve({ input: { approvalId: id, revision: a.revision } });
  for await (const p of taskbay.all.tasks({ state: 'INPUT_REQUIRED' })) return p.agent.name;
  try { await taskbay.viewer(); } catch (e) { if (isTaskbayError(e, 'STALE_REVISION')) return e.code; }
  return a.status;
}
`,
    );
    const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', 'check.ts'];
    const result = await run(process.execPath, [tsc, ...args], { cwd: app, env: outsideEnv() }).catch((e) => e);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
  }, 60_000);

  it('docs/samples/client-wait-for-decision.mjs: opens a request and exits 0 once a reviewer approves it', async () => {
    const script = sample('client-wait-for-decision.mjs', [], requester.token);
    const id = await eventually(async () => /Waiting for a decision on (\S+)/.exec(script.stdout)?.[1], 30_000);
    // Its subscription is live once a change of the request reaches it (the script prints each).
    await untilProbeArrives(async () => {
      const before = script.stdout.split('PENDING').length;
      await appendProbeEvent(t, id);
      return () => script.stdout.split('PENDING').length > before;
    });
    const [a] = await t.sql<{ revision: number; digest: string }>('select revision, digest from approval where id = $1', [rawId(id)]);
    const decided = await t.gql(
      `mutation($id: ID!, $revision: Int!, $digest: String!) { approve(input: { approvalId: $id, revision: $revision, digest: $digest }) { id } }`,
      { id, revision: a!.revision, digest: a!.digest },
    );
    expect(decided.errors).toBeUndefined();
    expect(await script.code, script.stderr).toBe(0);
    expect(script.stdout).toMatch(/APPROVED \(revision 1\)\nApproved: deploying\n$/);
  }, 60_000);

  it('docs/samples/client-approve.mjs: lists pending requests, approves one, and reports a second try as NOT_PENDING', async () => {
    const open = `mutation($title: String!, $action: JSON!) { createApproval(input: { title: $title, action: $action }) { id } }`;
    const opened = await t.gql(open, { title: 'Send the quarterly report', action: { kind: 'send_message', text: 'report' } }, requester.token);
    expect(opened.errors).toBeUndefined();
    const id = opened.data.createApproval.id as string;
    const list = sample('client-approve.mjs', [], t.adminToken);
    expect(await list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`${id}  MEDIUM  Send the quarterly report`);

    const approve = sample('client-approve.mjs', [id, 'ok from a script'], t.adminToken);
    expect(await approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toBe('Approved "Send the quarterly report" at revision 1\n');
    const [decision] = await t.sql(`select outcome, comment from decision d join approval a on a.id = d.approval_id where a.title = $1`, [
      'Send the quarterly report',
    ]);
    expect(decision).toMatchObject({ outcome: 'APPROVE', comment: 'ok from a script' });

    const again = sample('client-approve.mjs', [id], t.adminToken);
    expect(await again.code).toBe(3);
    expect(again.stderr).toMatch(/^Not approved \(NOT_PENDING\): /);
  }, 60_000);

  it('docs/samples/client-stream-inbox.mjs: prints each new request as it is opened', async () => {
    const script = sample('client-stream-inbox.mjs', [], t.adminToken);
    try {
      await untilProbeArrives(async () => {
        const probe = await probes.open();
        return () => script.stdout.includes(probe);
      });
      const open = `mutation { createApproval(input: { title: "Restart the billing workers", risk: HIGH, action: { kind: "send_message", text: "restart" } }) { id } }`;
      const id = (await t.gql(open, {}, requester.token)).data.createApproval.id as string;
      await eventually(async () => script.stdout.includes(id));
      // createMember names a person after their email.
      expect(script.stdout).toContain(`HIGH Restart the billing workers (${id}) from ${requester.email}\n`);
    } finally {
      script.kill();
    }
  }, 60_000);
});
