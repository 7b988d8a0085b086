import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram } from '../../../server/test/support/guard-process.js';
import { eventually } from '../../../server/test/support/harness.js';
import { outsideEnv } from '../../../server/test/support/outside-env.js';
import { decided, inboxRequest, reviewer, startTaskbayWithWebhooks, type Taskbay } from './support.js';

// @taskbay/agent as an integrator gets it: @taskbay/verify and @taskbay/agent packed as npm
// publishes them (prepack builds dist/), installed with docs/samples/agent-install.sh into an
// empty directory outside the repository beside the frameworks' pinned versions, and the samples
// of docs/AGENT-FRAMEWORKS.md run from there as child processes against a real Taskbay (nothing
// of the repository resolvable). A sample takes its model as an argument: the small drivers this
// test writes give it the framework's offline model (ai/test, @openai/agents-core/testing).

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SAMPLES = join(ROOT, 'docs/samples');
const run = promisify(execFile);

/** The frameworks at the versions the package is tested with (its devDependencies). */
const FRAMEWORKS = (() => {
  const dev = JSON.parse(readFileSync(join(ROOT, 'packages/taskbay-agent/package.json'), 'utf8')).devDependencies as Record<string, string>;
  const standardwebhooks = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies.standardwebhooks as string;
  return [...Object.entries(dev).map(([name, version]) => `${name}@${version}`), `standardwebhooks@${standardwebhooks}`];
})();

let work: string;
let app: string;
const tarballs: Record<string, string[]> = {};
let tb: Taskbay;
let receiver: Server;
/** Webhook messages go to the program listening on this port (a sample's driver), or nowhere yet. */
let hookTarget = 0;
let secret = '';

const npmEnv = () => outsideEnv({ npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'taskbay-agent-pack-'));
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
  await run('sh', [join(SAMPLES, 'agent-install.sh'), ROOT, app], { cwd: work, env: npmEnv(), maxBuffer: 16 * 1024 * 1024 });
  await run('npm', ['install', '--save-exact', ...FRAMEWORKS], { cwd: app, env: npmEnv(), maxBuffer: 16 * 1024 * 1024 });
  for (const f of readdirSync(app).filter((f) => f.endsWith('.tgz'))) {
    tarballs[f] = (await run('tar', ['-tzf', join(app, f)])).stdout.split('\n').filter(Boolean);
  }
  for (const f of readdirSync(SAMPLES).filter((f) => f.startsWith('agent-') && f.endsWith('.mjs'))) copyFileSync(join(SAMPLES, f), join(app, f));

  // Taskbay's webhooks reach the webhook sample's driver through this relay (the endpoint is
  // registered before the driver runs; receiver.test resolves to loopback for this instance only).
  ({ tb, receiver, secret } = await startTaskbayWithWebhooks(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (!hookTarget) return void res.writeHead(204).end(); // not for the driver: dropped
    const forwarded = await fetch(`http://127.0.0.1:${hookTarget}${req.url}`, {
      method: 'POST',
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('webhook-') || k === 'content-type')) as Record<string, string>,
      body: Buffer.concat(chunks),
    }).catch(() => null);
    res.writeHead(forwarded?.status ?? 503).end();
  }));
}, 300_000);

afterAll(async () => {
  await tb?.t.stop();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A program in the integrator's directory, with the agent's Taskbay settings. */
function node(file: string, extra: Record<string, string> = {}) {
  return runProgram(process.execPath, [file], { cwd: app, env: outsideEnv({ TASKBAY_URL: tb.agent.url, TASKBAY_TOKEN: tb.agent.token, ...extra }) });
}

const AI_MODEL = `import { MockLanguageModelV3 } from 'ai/test';
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
export const model = () => new MockLanguageModelV3({ doGenerate: [
  { content: [{ type: 'tool-call', toolCallId: process.env.CALL_ID, toolName: 'sendEmail', input: JSON.stringify({ to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] },
  { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
] });
`;

const AGENTS_MODEL = `import { Usage } from '@openai/agents-core';
import { assistantMessage, functionCall, modelResponse, ScriptedModel } from '@openai/agents-core/testing';
export const callModel = () => new ScriptedModel([
  modelResponse({ output: [functionCall('send_email', { to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' }, { callId: process.env.CALL_ID })], usage: new Usage({ requests: 1 }) }),
  modelResponse({ output: [assistantMessage('done')], usage: new Usage({ requests: 1 }) }),
]);
export const answerModel = () => new ScriptedModel([modelResponse({ output: [assistantMessage('sent it')], usage: new Usage({ requests: 1 }) })]);
`;

describe('the packed @taskbay/agent', () => {
  it('holds ES modules and declarations for each subpath, not the TypeScript sources; its @taskbay/verify is the packed one', () => {
    const agent = Object.entries(tarballs).find(([f]) => f.startsWith('taskbay-agent-'))?.[1];
    expect(agent).toBeDefined();
    for (const sub of ['index', 'ai-sdk', 'openai-agents', 'langgraph'])
      expect(agent).toEqual(expect.arrayContaining([`package/dist/${sub}.js`, `package/dist/${sub}.d.ts`]));
    expect(agent!.filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
    expect(agent!.filter((f) => /test|build\.mjs|tsconfig/.test(f))).toEqual([]);
    const installed = JSON.parse(readFileSync(join(app, 'node_modules/@taskbay/agent/package.json'), 'utf8'));
    expect(Object.keys(installed.dependencies)).toEqual(['@taskbay/verify']);
    expect(readdirSync(join(app, 'node_modules/@taskbay'))).toEqual(['agent', 'verify']);
  });

  it('type-checks an integrator’s TypeScript against its declarations, with each framework', async () => {
    writeFileSync(
      join(app, 'check.ts'),
      `import { requestApproval, isTaskbayAgentError, type ApprovalOutcome } from '@taskbay/agent';
import { resolveToolApprovals } from '@taskbay/agent/ai-sdk';
import { taskbayTool, approveToolCalls } from '@taskbay/agent/openai-agents';
import { approveToolCall, resumeWithTaskbay } from '@taskbay/agent/langgraph';
import { z } from 'zod';
export async function check(): Promise<string> {
  const o: ApprovalOutcome = await requestApproval({ url: 'http://localhost:4000', token: 'tb_x', title: 't', action: { kind: 'send_message', text: 't' } });
  // @ts-expect-error: an action has a kind
  await requestApproval({ url: 'u', token: 't', title: 't', action: { text: 't' } });
  const r = await resolveToolApprovals([{ role: 'user', content: 'hi' }], { url: 'u', token: 't' });
  const t = taskbayTool({
    name: 'n',
    description: 'd',
    parameters: z.object({ a: z.string() }),
    execute: async ({ a }) => {
      // @ts-expect-error: the parameters type the input (a is a string)
      const n: number = a;
      return String(n);
    },
  });
  void t; void approveToolCalls; void approveToolCall; void resumeWithTaskbay; void isTaskbayAgentError;
  return o.status === 'APPROVED' ? o.decisionId : String(r.decisions.length);
}
`,
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--lib',
      'es2022,dom',
      'check.ts',
    ];
    const result = await run(process.execPath, [tsc, ...args], { cwd: app, env: outsideEnv() }).catch((e) => e);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
  }, 120_000);

  it('docs/samples/agent-request-approval.mjs: waits, and deploys what the reviewer approved', async () => {
    const script = node('agent-request-approval.mjs');
    const id = await eventually(async () => /Waiting for a decision on (\S+)/.exec(script.stdout)?.[1], 30_000);
    await reviewer.approve(tb, await decided(tb, id));
    expect(await script.code, script.stderr).toBe(0);
    const held = await decided(tb, id);
    expect(script.stdout).toContain(`Deploying web 2.4.1, approved by ${(await tb.t.gql('{ viewer { name } }')).data.viewer.name} (digest ${held.digest})\n`);
  }, 60_000);

  it('docs/samples/agent-ai-sdk.mjs: the tool runs once, with the reviewer’s edited arguments', async () => {
    writeFileSync(join(app, 'ai-model.mjs'), AI_MODEL);
    writeFileSync(
      join(app, 'drive-ai-sdk.mjs'),
      `import { ask } from './agent-ai-sdk.mjs';\nimport { model } from './ai-model.mjs';\nconsole.log('final: ' + (await ask(model(), 'Send the Q3 report to ops')));\n`,
    );
    const script = node('drive-ai-sdk.mjs', { CALL_ID: 'pack-ai-1' });
    const seen = await inboxRequest(tb, 'pack-ai-1');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached.' });
    expect(await script.code, script.stderr).toBe(0);
    expect(script.stdout).toBe('sent "Q3 report" to finance@example.com\nfinal: done\n');
  }, 60_000);

  it('docs/samples/agent-openai-agents.mjs: the run resumes once approved; the tool runs once', async () => {
    writeFileSync(join(app, 'agents-model.mjs'), AGENTS_MODEL);
    writeFileSync(
      join(app, 'drive-openai.mjs'),
      `import { ask } from './agent-openai-agents.mjs';\nimport { callModel } from './agents-model.mjs';\nconsole.log('final: ' + (await ask(callModel(), 'Send the Q3 report to ops')));\n`,
    );
    const script = node('drive-openai.mjs', { CALL_ID: 'pack-oa-1', OPENAI_AGENTS_DISABLE_TRACING: '1' });
    await reviewer.approve(tb, await inboxRequest(tb, 'pack-oa-1'));
    expect(await script.code, script.stderr).toBe(0);
    expect(script.stdout).toBe('sent "Q3 report" to ops@example.com\nfinal: done\n');
  }, 60_000);

  it('docs/samples/agent-openai-webhook.mjs: one process stops and stores the run; another resumes it on Taskbay’s webhook', async () => {
    writeFileSync(join(app, 'agents-model.mjs'), AGENTS_MODEL);
    writeFileSync(
      join(app, 'drive-start.mjs'),
      `import { start } from './agent-openai-webhook.mjs';\nimport { callModel } from './agents-model.mjs';\nconsole.log('started: ' + (await start(callModel(), 'Send the Q3 report to ops')));\n`,
    );
    writeFileSync(
      join(app, 'drive-hook.mjs'),
      `import { readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { onApprovalDecided } from './agent-openai-webhook.mjs';
import { answerModel } from './agents-model.mjs';
const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  await onApprovalDecided(Buffer.concat(chunks).toString('utf8'), req.headers, answerModel());
  res.writeHead(204).end();
  if (readdirSync(process.env.RUN_STORE).length === 0) server.close(); // the stored run has finished
});
server.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
`,
    );
    const env = { CALL_ID: 'pack-hook-1', RUN_STORE: join(work, 'runs'), TASKBAY_WEBHOOK_SECRET: secret, OPENAI_AGENTS_DISABLE_TRACING: '1' };
    const first = node('drive-start.mjs', env);
    expect(await first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('started: null\n');
    expect(readdirSync(join(work, 'runs'))).toHaveLength(1);

    const second = node('drive-hook.mjs', env);
    hookTarget = Number(await eventually(async () => /listening on (\d+)/.exec(second.stdout)?.[1], 30_000));
    const seen = await inboxRequest(tb, 'pack-hook-1');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached.' });
    expect(await second.code, second.stderr).toBe(0);
    hookTarget = 0;
    expect(second.stdout).toMatch(/^listening on \d+\nsent "Q3 report" to finance@example.com\nrun finished: sent it\n$/);
    expect(readdirSync(join(work, 'runs'))).toEqual([]);
  }, 90_000);

  it('docs/samples/agent-langgraph.mjs: the node sends once approved; a rejection sends nothing', async () => {
    writeFileSync(
      join(app, 'drive-langgraph.mjs'),
      `import { send } from './agent-langgraph.mjs';
const call = { id: process.env.CALL_ID, name: 'send_email', args: { to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' } };
console.log('result: ' + (await send(call, 'thread-' + process.env.CALL_ID)));
`,
    );
    const approved = node('drive-langgraph.mjs', { CALL_ID: 'pack-lg-1' });
    await reviewer.approve(tb, await inboxRequest(tb, 'pack-lg-1'));
    expect(await approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe('sent "Q3 report" to ops@example.com\nresult: sent to ops@example.com\n');

    const rejected = node('drive-langgraph.mjs', { CALL_ID: 'pack-lg-2' });
    await reviewer.reject(tb, await inboxRequest(tb, 'pack-lg-2'), 'not this week');
    expect(await rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toMatch(/^result: Rejected in Taskbay by .+: not this week\n$/);
  }, 60_000);
});
