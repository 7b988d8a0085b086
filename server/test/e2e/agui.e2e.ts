import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgUiFixture, type AgUiFixture } from '../../src/fixture-agent/agui.js';
import { OPS, startTestInstance, type TestInstance } from '../support/harness.js';
import { launchChromium } from '../support/chromium.js';

// An AG-UI agent's interrupt approved in the console (docs/AG-UI.md): the fixture agent's run ends
// with a tool-call interrupt, the reviewer sees the interrupt's message and the tool call with its
// arguments and approves it in Chromium, and the agent's resumed run completing shows on the task
// page without a reload.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.TASKBAY_SCREENSHOT_DIR ?? join(ROOT, 'test-results/screenshots');
const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;

let t: TestInstance;
let agent: AgUiFixture;
let browser: Browser;
let cookie: string;

async function gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const r = await t.gql<T>(query, variables);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data!;
}

async function page(): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.addCookies([{ name: 'taskbay_session', value: cookie, url: t.instance.url, httpOnly: true, sameSite: 'Lax' }]);
  const p = await ctx.newPage();
  p.setDefaultTimeout(WAIT);
  return p;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startTestInstance();
  agent = await startAgUiFixture();
  agent.trust(t.config.publicUrl, `${t.instance.url}/.well-known/jwks.json`);
  await gql(`mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, {
    i: { email: 'rita@example.test', name: 'Rita Reviewer', password: PASSWORD, role: 'ADMIN' },
  });
  const res = await fetch(`${t.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }',
      variables: { e: 'rita@example.test', p: PASSWORD },
    }),
  });
  const set = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  cookie = set.slice(set.indexOf('=') + 1);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('AG-UI interrupts in the console', () => {
  it('approves an AG-UI interrupt and shows the resumed run completing', async () => {
    const registered = await gql(`mutation($url: String!) { registerAgUiAgent(input: { endpointUrl: $url, name: "Mailer (AG-UI)" }) { id } }`, {
      url: agent.url('approval'),
    });
    const task = (await gql(OPS.startTask, { agentId: registered.registerAgUiAgent.id, text: 'Please send the Q3 report.' })).startTask;
    expect(task.state).toBe('INPUT_REQUIRED');
    const edges = (await gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id } } } }`, { t: task.id })).approvals.edges;
    expect(edges).toHaveLength(1);
    const approvalId = edges[0].node.id as string;

    // The task page, open before the decision: it shows the run waiting on the interrupt.
    const taskPage = await page();
    await taskPage.goto(`${t.instance.url}/tasks/${task.id}`);
    await taskPage.getByRole('heading', { level: 1, name: /Task with/ }).waitFor();
    await taskPage
      .getByTestId('task-state')
      .filter({ hasText: /INPUT.REQUIRED/i })
      .waitFor();

    const p = await page();
    await p.goto(`${t.instance.url}/approvals/${approvalId}`);
    await p.getByRole('heading', { level: 1, name: /sendEmail: Send the Q3 report to ops@example.com\?/ }).waitFor();
    // The interrupt's message, the tool call and its arguments.
    await p.getByText('Send the Q3 report to ops@example.com?').first().waitFor();
    const data = p.getByLabel('Message data').first();
    for (const shown of ['toolName', 'sendEmail', 'arguments', 'ops@example.com', 'Q3 report']) await data.filter({ hasText: shown }).waitFor();
    await p.screenshot({ path: join(SHOTS, 'agui-interrupt.png'), fullPage: true });
    await p.getByRole('button', { name: 'Approve', exact: true }).click();
    await p.getByTestId('confirm-decision').getByRole('button', { name: 'Approve revision 1' }).click();
    await p.getByTestId('approval-status').getByText('APPROVED').waitFor();

    // The task page opened before: the resumed run's answer arrives live, no reload.
    await taskPage.getByTestId('task-state').filter({ hasText: 'COMPLETED' }).waitFor();
    await taskPage.getByText('Done: emailed ops@example.com.').waitFor();
    await taskPage.screenshot({ path: join(SHOTS, 'agui-resumed.png'), fullPage: true });
    expect(agent.resumes.filter((r) => r.threadId === task.remoteTaskId)).toHaveLength(1);
  });
});
