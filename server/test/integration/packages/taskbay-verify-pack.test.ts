import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SendMessageRequest } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalKeys, type ApprovalKeys } from '../../../src/approval-signing/keys.js';
import { approvedMessage } from '../../../src/delivery/worker.js';
import { readEvidencePart } from '../../../src/evidence/part.js';
import { JWKS_PATH } from '../../../src/verify-approval/index.js';
import { createMember, OPS, ok, rawId, startTestInstance, type TestInstance } from '../../support/harness.js';
import { runProgram } from '../../support/guard-process.js';
import { canon, sha256 } from '../../support/independent-digest.js';
import { outsideEnv } from '../../support/outside-env.js';
import { REPO_ROOT } from '../../support/repo-root.js';
import { SAMPLES } from '../../support/doc-samples.js';

// @taskbay/verify as an agent author gets it (issue 23): packed as npm publishes it (prepack
// builds dist/), installed alone into an empty directory outside the repository with the docs'
// install script (docs/samples/verify-install.sh) and npm offline, and run from there by plain
// node: no NODE_PATH, nothing of the repository resolvable. The approvals are made by Taskbay's
// own code (delivery/worker.ts approvedMessage, approval-signing/keys.ts), the JWKS served over
// loopback HTTP as Taskbay serves it; a createApproval's signed approval comes from a real
// Taskbay, read by its requester over the API, checked against that Taskbay's /.well-known/jwks.json.

const ISSUER = 'https://taskbay.example';
const TASK = 'agent-task-42';
const ACTION = { kind: 'send_message' as const, text: 'Approved. Restart the billing workers.', data: { workers: 3 } };
const run = promisify(execFile);

let work: string;
let app: string;
let installed: string;
let tarballFiles: string[];
let keys: ApprovalKeys;
let jwksServer: Server;
let jwksUrl: string;
let genuine: Record<string, any>;

/** Every file under `dir`, relative, with its size. */
function filesUnder(dir: string, prefix = ''): { path: string; bytes: number }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : [{ path: `${prefix}${e.name}`, bytes: statSync(join(dir, e.name)).size }],
  );
}

const inApp = (args: string[], env: Record<string, string> = {}) => runProgram(process.execPath, args, { cwd: app, env: outsideEnv(env) });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'taskbay-verify-pack-'));
  app = join(work, 'agent');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-agent', private: true, type: 'module' }));
  // The install as the docs show it, with npm offline: a package without dependencies needs no registry.
  const env = outsideEnv({ npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' });
  await run('sh', [join(SAMPLES, 'verify-install.sh'), REPO_ROOT, app], { cwd: work, env, maxBuffer: 16 * 1024 * 1024 });
  const tarball = readdirSync(app).find((f) => /^taskbay-verify-.*\.tgz$/.test(f));
  expect(tarball, 'verify-install.sh left no taskbay-verify tarball').toBeDefined();
  tarballFiles = (await run('tar', ['-tzf', join(app, tarball!)])).stdout.split('\n').filter(Boolean);
  installed = join(app, 'node_modules/@taskbay/verify');

  keys = await approvalKeys(generateKeyPairSync('ed25519').privateKey, [], ISSUER);
  jwksServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(keys.jwks)));
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;

  const fields = { requestId: randomUUID(), decisionId: randomUUID(), revision: 1, revisionDigest: sha256(canon(ACTION)) };
  const signature = await keys.sign({ ...fields, taskId: TASK }, new Date('2026-12-01T10:00:00Z'));
  genuine = JSON.parse(JSON.stringify(approvedMessage(ACTION, { ...fields, signature }, { messageId: randomUUID(), taskId: TASK, contextId: 'ctx' })));
  const tampered = { ...genuine, parts: [{ text: 'Approved. Delete the billing workers.' }] };
  // The object @a2a-js/sdk gives an executor for the same request, saved as JSON.
  const sdk = SendMessageRequest.fromJSON({ message: genuine }).message;
  for (const [name, message] of Object.entries({ genuine, tampered, sdk })) writeFileSync(join(app, `${name}.json`), JSON.stringify(message));
  copyFileSync(join(SAMPLES, 'verify-approval.mjs'), join(app, 'verify-approval.mjs'));
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => jwksServer?.close(resolve));
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed @taskbay/verify, installed alone', () => {
  it('is dist/, README.md and package.json: under 100 KB installed, no dependency, nothing else in node_modules', () => {
    expect(tarballFiles.filter((f) => !/^package\/dist\/[\w-]+\.(js|d\.ts)$/.test(f)).sort()).toEqual(['package/README.md', 'package/package.json']);
    expect(tarballFiles).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts']));
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@taskbay/verify', type: 'module', dependencies: {}, engines: { node: '>=20.19' } });
    expect(manifest.peerDependencies).toBeUndefined();
    expect(readdirSync(join(app, 'node_modules')).filter((d) => d !== '.package-lock.json')).toEqual(['@taskbay']);
    expect(readdirSync(join(app, 'node_modules/@taskbay'))).toEqual(['verify']);
    const bytes = filesUnder(installed).reduce((sum, f) => sum + f.bytes, 0);
    expect(bytes).toBeGreaterThan(10_000);
    expect(bytes).toBeLessThan(100 * 1024);
  });

  it('its modules import Node built-ins and each other only', () => {
    const specifiers = filesUnder(join(installed, 'dist'))
      .filter((f) => f.path.endsWith('.js'))
      .flatMap((f) => [
        ...readFileSync(join(installed, 'dist', f.path), 'utf8').matchAll(
          /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/g,
        ),
      ])
      .map((m) => m[1] ?? m[2]);
    expect(specifiers).toContain('node:crypto');
    expect(specifiers.filter((s) => !/^node:/.test(s!) && !/^\.\/[\w-]+\.js$/.test(s!))).toEqual([]);
  });

  it('a plain node script importing it verifies the genuine approval, the SDK’s object of it too, and refuses the tampered one', async () => {
    writeFileSync(
      join(app, 'check.mjs'),
      `import { readFileSync } from 'node:fs';
import { fetchJwks, verifyApprovedMessage } from '@taskbay/verify';
const jwks = await fetchJwks(process.env.JWKS_URL);
for (const name of ['genuine', 'sdk', 'tampered']) {
  const verdict = verifyApprovedMessage(JSON.parse(readFileSync(name + '.json', 'utf8')), { jwks, issuer: process.env.ISSUER, taskId: process.env.TASK_ID });
  console.log(JSON.stringify({ name, ...verdict }));
}
`,
    );
    const script = inApp(['check.mjs'], { JWKS_URL: jwksUrl, ISSUER, TASK_ID: TASK });
    expect(await script.code, script.stderr).toBe(0);
    const [fromWire, fromSdk, fromTampered] = script.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const claims = JSON.parse(Buffer.from(genuine.metadata.approval.signature.split('.')[1], 'base64url').toString());
    expect(fromWire).toEqual({ name: 'genuine', ok: true, claims, action: ACTION, keyId: keys.keyId });
    expect(fromSdk).toEqual({ ...fromWire, name: 'sdk' });
    expect(fromTampered).toEqual({
      name: 'tampered',
      ok: false,
      reason: `the received content has digest ${sha256(canon({ ...ACTION, text: 'Approved. Delete the billing workers.' }))}; the approved one is ${claims.revisionDigest}`,
    });
  });

  describe('a signed approval from createApproval, read from a real Taskbay', () => {
    let t: TestInstance;
    let requester: { token: string };
    let signed: Record<string, any>;
    const approved = { kind: 'send_message', text: 'Rotate the staging database password', data: { database: 'staging' } };

    beforeAll(async () => {
      t = await startTestInstance();
      requester = await createMember(t);
      const opened = ok(
        await t.gql(
          `mutation($input: CreateApprovalInput!) { createApproval(input: $input) { id revision digest } }`,
          { input: { title: 'Rotate the staging password', action: approved, externalId: 'thread-7/call_3' } },
          requester.token,
        ),
      ).createApproval;
      ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest }));
      // As the requester reads it: over HTTP, with its own token.
      const res = await fetch(`${t.instance.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${requester.token}` },
        body: JSON.stringify({
          query: `query($id: ID!) { approval(id: $id) { signedApproval { requestId decisionId revision revisionDigest signature action externalId } } }`,
          variables: { id: opened.id },
        }),
      });
      signed = ok((await res.json()) as any).approval.signedApproval;
      expect(signed).toMatchObject({ requestId: rawId(opened.id), externalId: 'thread-7/call_3', action: approved });
      const tampered = { ...signed, action: { ...signed.action, text: 'Drop the staging database' } };
      for (const [name, value] of Object.entries({ signed, tampered })) writeFileSync(join(app, `created-${name}.json`), JSON.stringify(value));
    }, 60_000);

    afterAll(async () => {
      await t?.stop();
    });

    it('verifySignedApproval from the install verifies it with that Taskbay’s JWKS and refuses it tampered, saying the digest differs', async () => {
      writeFileSync(
        join(app, 'check-created.mjs'),
        `import { readFileSync } from 'node:fs';
import { fetchJwks, verifySignedApproval } from '@taskbay/verify';
const jwks = await fetchJwks(process.env.JWKS_URL);
for (const name of ['signed', 'tampered']) {
  const verdict = verifySignedApproval(JSON.parse(readFileSync('created-' + name + '.json', 'utf8')), { jwks, issuer: process.env.ISSUER, externalId: 'thread-7/call_3' });
  console.log(JSON.stringify({ name, ...verdict }));
}
`,
      );
      const script = inApp(['check-created.mjs'], { JWKS_URL: `${t.instance.url}${JWKS_PATH}`, ISSUER: t.config.publicUrl });
      expect(await script.code, script.stderr).toBe(0);
      const [genuineVerdict, tamperedVerdict] = script.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const [header, payload] = signed.signature
        .split('.')
        .slice(0, 2)
        .map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()));
      expect(payload).toMatchObject({ iss: t.config.publicUrl, taskId: null, externalId: 'thread-7/call_3', revisionDigest: sha256(canon(approved)) });
      expect(genuineVerdict).toEqual({ name: 'signed', ok: true, claims: payload, action: approved, keyId: header.kid });
      expect(tamperedVerdict).toEqual({
        name: 'tampered',
        ok: false,
        reason: `the action has digest ${sha256(canon({ ...approved, text: 'Drop the staging database' }))}; the approved one is ${payload.revisionDigest}`,
      });
    });
  });

  it('require() works too on Node 20.19+ (an ES module without top-level await)', async () => {
    writeFileSync(
      join(app, 'check.cjs'),
      `const { verifyApprovedMessage } = require('@taskbay/verify');
const verdict = verifyApprovedMessage('{"parts":[]}', { jwks: { keys: [] }, issuer: 'x', taskId: 't' });
console.log(verdict.reason);
`,
    );
    const script = inApp(['check.cjs']);
    expect(await script.code, script.stderr).toBe(0);
    expect(script.stdout).toBe(
      'expected an A2A message (an object with a parts array), got a string: pass the parsed message object (JSON.parse of the text), not its JSON text\n',
    );
  });

  it('docs/samples/verify-approval.mjs (VERIFYING-APPROVALS.md) runs from the install: verifies, prints the evidence part; refuses the tampered message and another task', async () => {
    const env = { TASKBAY_URL: ISSUER, TASKBAY_JWKS_URL: jwksUrl, TASK_ID: TASK };
    const ok = inApp(['verify-approval.mjs', 'genuine.json'], env);
    expect(await ok.code, ok.stderr).toBe(0);
    const evidence = JSON.parse(ok.stdout);
    expect(evidence).toEqual({
      mediaType: 'application/vnd.agent-taskbay.execution-evidence+json',
      data: {
        requestId: genuine.metadata.approval.requestId,
        decisionId: genuine.metadata.approval.decisionId,
        executedDigest: sha256(canon(ACTION)),
        outcome: 'succeeded',
        detail: `executed: ${ACTION.text}`,
      },
    });
    // Taskbay's reader takes it as the report of this decision.
    expect(readEvidencePart([evidence])).toMatchObject({ ok: true, report: { decisionId: genuine.metadata.approval.decisionId } });
    const sdk = inApp(['verify-approval.mjs', 'sdk.json'], env);
    expect(await sdk.code, sdk.stderr).toBe(0);
    expect(JSON.parse(sdk.stdout)).toEqual(evidence);

    const refused = inApp(['verify-approval.mjs', 'tampered.json'], env);
    expect(await refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^approval refused: the received content has digest [0-9a-f]{64}; the approved one is /);
    expect(refused.stdout).toBe('');
    const otherTask = inApp(['verify-approval.mjs', 'genuine.json'], { ...env, TASK_ID: 'another-task' });
    expect(await otherTask.code).toBe(1);
    expect(otherTask.stderr).toBe(`approval refused: the approval was signed for task "${TASK}", not "another-task"\n`);
  });
});
