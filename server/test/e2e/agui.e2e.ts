import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgUiFixture, type AgUiFixture } from '../../src/fixture-agent/agui.js';
import { startTestInstance, type TestInstance } from '../support/harness.js';
import { launchChromium } from '../support/chromium.js';
import { gqlData, sessionCookie, sessionPage, createPasswordUser } from '../support/console-session.js';
import { REPO_ROOT } from '../support/repo-root.js';

// An AG-UI agent registered on the Agents page (a refused URL, a non-URL and a duplicate endpoint
// shown as errors), a task started with it from Tasks, and its interrupt approved in the console
// (docs/AG-UI.md): the fixture agent's run ends
// with a tool-call interrupt, the reviewer sees the interrupt's message and the tool call with its
// arguments and approves it in Chromium, and the agent's resumed run completing shows on the task
// page without a reload.

const SHOTS = process.env.TASKBAY_SCREENSHOT_DIR ?? join(REPO_ROOT, 'test-results/screenshots');
const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;

let t: TestInstance;
let agent: AgUiFixture;
let browser: Browser;
let cookie: string;

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

async function page(): Promise<Page> {
  return (await sessionPage(browser, t, cookie, { timeout: WAIT })).page;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startTestInstance();
  agent = await startAgUiFixture();
  agent.trust(t.config.publicUrl, `${t.instance.url}/.well-known/jwks.json`);
  await createPasswordUser(t, { email: 'rita@example.test', name: 'Rita Reviewer', password: PASSWORD, role: 'ADMIN' });
  cookie = await sessionCookie(t, 'rita@example.test', PASSWORD);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('AG-UI interrupts in the console', () => {
  it('registers an AG-UI agent on the Agents page (refusals shown), starts a task with it from Tasks and approves its interrupt', async () => {
    const p = await page();
    await p.goto(`${t.instance.url}/agents`);
    const form = p.getByRole('form', { name: 'Register an agent' });
    await form.getByLabel('AG-UI, by its endpoint').check();
    const alert = form.getByRole('alert');

    // The network policy's refusal (a link-local metadata address), with its headline.
    await form.getByLabel('Endpoint URL', { exact: true }).fill('http://169.254.169.254/latest');
    await form.getByLabel('Name', { exact: true }).fill('Metadata');
    await form.getByRole('button', { name: 'Register' }).click();
    await alert.filter({ hasText: 'The agent network policy refuses this address' }).waitFor();
    await alert.filter({ hasText: /BAD_USER_INPUT: 169\.254\.169\.254 .*is refused by the agent network policy/ }).waitFor();
    await p.screenshot({ path: join(SHOTS, 'agui-register-refused.png'), fullPage: true });

    // Not a URL: the server says so (the form leaves the judging to it).
    await form.getByLabel('Endpoint URL', { exact: true }).fill('not a url');
    await form.getByRole('button', { name: 'Register' }).click();
    await alert.filter({ hasText: 'BAD_USER_INPUT: endpointUrl is not a URL' }).waitFor();

    // The fixture agent: registered, listed with its kind and endpoint.
    await form.getByLabel('Endpoint URL', { exact: true }).fill(agent.url('approval'));
    await form.getByLabel('Name', { exact: true }).fill('Mailer (AG-UI)');
    await form.getByRole('button', { name: 'Register' }).click();
    await form.getByRole('status').filter({ hasText: 'Registered Mailer (AG-UI) (AG-UI' }).waitFor();
    const listed = p.locator('ul.agents > li', { hasText: 'Mailer (AG-UI)' });
    await listed.filter({ hasText: `AG-UI · endpoint ${agent.url('approval')}` }).waitFor();
    expect(await form.getByRole('alert').count()).toBe(0);

    // The same endpoint again: refused as a duplicate, nothing added.
    await form.getByLabel('Endpoint URL', { exact: true }).fill(agent.url('approval'));
    await form.getByLabel('Name', { exact: true }).fill('Mailer again');
    await form.getByRole('button', { name: 'Register' }).click();
    await alert.filter({ hasText: `an agent with endpoint ${agent.url('approval')} is already registered` }).waitFor();
    const agents = (await gql(`{ agents { name kind endpointUrl } }`)).agents;
    expect(agents).toEqual([{ name: 'Mailer (AG-UI)', kind: 'AG_UI', endpointUrl: agent.url('approval') }]);
    await p.screenshot({ path: join(SHOTS, 'agui-registered.png'), fullPage: true });

    // A task with it, started from Tasks; its interrupt approved, the resumed run shown.
    const taskPage = await page();
    await taskPage.goto(`${t.instance.url}/tasks`);
    await taskPage.getByRole('button', { name: 'Start a task' }).click();
    await taskPage.getByLabel('Agent', { exact: true }).selectOption({ label: 'Mailer (AG-UI)' });
    await taskPage.getByLabel('Message').fill('Please send the Q3 report.');
    await taskPage.getByRole('button', { name: 'Start', exact: true }).click();
    await taskPage.waitForURL(/\/tasks\/[^/]+$/);
    const taskId = decodeURIComponent(new URL(taskPage.url()).pathname.split('/').at(-1)!);
    const task = (await gql(`query($id: ID!) { task(id: $id) { id state remoteTaskId } }`, { id: taskId })).task;
    expect(task.state).toBe('INPUT_REQUIRED');
    const edges = (await gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id } } } }`, { t: task.id })).approvals.edges;
    expect(edges).toHaveLength(1);
    const approvalId = edges[0].node.id as string;

    // The task page, open before the decision: it shows the run waiting on the interrupt.
    await taskPage.getByRole('heading', { level: 1, name: /Task with/ }).waitFor();
    await taskPage
      .getByTestId('task-state')
      .filter({ hasText: /INPUT.REQUIRED/i })
      .waitFor();

    // The agents page's tab goes on to the request.
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
