import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page, type WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/agent.js';
import { startTestInstance, type TestInstance } from '../support/harness.js';

// The reviewer console in Debian's Chromium (playwright-core, no browser download): sign in,
// register the fixture agent, start a task, watch the request arrive live in a second browser
// context, edit then approve, see DELIVERED and the observed task state, a stale decision
// refused, and hostile agent content rendered as text with no request to any other host.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');
const PASSWORD = 'correct horse battery staple';
// playwright's launch() gives every browser a fresh temporary profile (its own --user-data-dir).
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

let t: TestInstance;
let agent: FixtureAgent;
let browser: Browser;
const contexts: BrowserContext[] = [];
const foreign: string[] = [];
const dialogs: string[] = [];

// The second reviewer's live connection passes through this route so the test can drop it.
const liveLink = { route: null as WebSocketRoute | null, refuse: false };

async function newPage(opts: { blockLive?: boolean; dropLive?: boolean } = {}): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(ctx);
  if (opts.blockLive) {
    // This reviewer's live connection never opens: the page keeps what it loaded (a stale view).
    await ctx.routeWebSocket(/\/graphql/, () => {});
  }
  if (opts.dropLive) {
    await ctx.routeWebSocket(/\/graphql/, (ws) => {
      if (liveLink.refuse) {
        void ws.close({ code: 1001, reason: 'test: network down' });
        return;
      }
      liveLink.route = ws;
      ws.connectToServer();
    });
  }
  const page = await ctx.newPage();
  const origin = new URL(t.instance.url);
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol !== 'data:' && u.host !== origin.host) foreign.push(r.url());
  });
  page.on('websocket', (ws) => {
    if (new URL(ws.url()).host !== origin.host) foreign.push(ws.url());
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return page;
}

/** Waits until the locator's text contains `text` (a string or pattern). */
async function hasText(loc: Locator, text: string | RegExp, timeout = 10_000): Promise<void> {
  await loc.filter({ hasText: text }).first().waitFor({ timeout });
}

async function signIn(page: Page, email: string) {
  await page.goto(t.instance.url + '/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Inbox' }).waitFor();
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startTestInstance();
  for (const [email, name] of [
    ['rita@example.test', 'Rita Reviewer'],
    ['sam@example.test', 'Sam Second'],
  ]) {
    const r = await t.gql(`mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, { i: { email, name, password: PASSWORD, role: 'ADMIN' } });
    expect(r.errors).toBeUndefined();
  }
  agent = await startFixtureAgent({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('reviewer console in Chromium', () => {
  it('runs the approval loop live, refuses a stale decision, and renders hostile content as text', async () => {
    const a = await newPage();
    const b = await newPage({ dropLive: true });
    await signIn(a, 'rita@example.test');
    await signIn(b, 'sam@example.test');

    // Register the fixture agent (showcase variant) from the Agents page.
    await a.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
    await a.getByLabel('Agent Card URL').fill(agent.cardUrl('showcase'));
    await a.getByRole('button', { name: 'Register' }).click();
    await a.locator('ul.agents > li').first().waitFor();

    // Start a task that asks for approval; the second reviewer's inbox is open meanwhile.
    await a.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await a.getByRole('button', { name: 'Start a task' }).click();
    await a.getByLabel('Message').fill('approve');
    const started = Date.now();
    await a.getByRole('button', { name: 'Start', exact: true }).click();
    await a.getByRole('heading', { name: /Task with/ }).waitFor();
    await a.getByText('Please approve this action.').waitFor();

    const row = b.locator('ul.inbox li', { hasText: 'Delete the staging cluster' });
    await row.waitFor({ timeout: 10_000 }); // no reload: arrives over the subscription
    const liveMs = Date.now() - started;
    console.log(`request visible in the second context ${liveMs} ms after Start`);
    await hasText(row.locator('.risk'), 'HIGH');
    await b.screenshot({ path: join(SHOTS, 'inbox.png'), fullPage: true });

    // Keyboard: j focuses the row, Enter opens it.
    await b.keyboard.press('j');
    await b.keyboard.press('k');
    await b.keyboard.press('Enter');
    await b.getByRole('heading', { name: 'Delete the staging cluster' }).waitFor();
    const approvalPath = new URL(b.url()).pathname;

    // A third reviewer view whose live connection is blocked: it will decide on what it saw.
    const c = await newPage({ blockLive: true });
    await signIn(c, 'sam@example.test');
    await c.goto(t.instance.url + approvalPath);
    await c.getByRole('heading', { name: 'Delete the staging cluster' }).waitFor();

    // Edit then approve in the first context.
    await a.goto(t.instance.url + approvalPath);
    await a.getByRole('heading', { name: 'Delete the staging cluster' }).waitFor();
    await hasText(a.getByLabel('Message text'), 'Approved. Delete the staging cluster.');
    await a.getByRole('button', { name: 'Edit then approve' }).click();
    await a.locator('#edit-text').fill('Approved. Delete the staging cluster, but keep the backups.');
    await a.getByRole('button', { name: 'Approve edited action' }).click();
    await a.getByTestId('decision-result').getByText('Edited and approved.').waitFor();
    await a.getByTestId('execution-status').getByText('DELIVERED').waitFor({ timeout: 20_000 });
    await a.getByTestId('observed-state').getByText(/COMPLETED/).waitFor({ timeout: 20_000 });
    await hasText(a.getByTestId('revision'), 'revision 2');
    await hasText(a.locator('.diff .d-add').first(), 'keep the backups');
    await hasText(a.getByTestId('chain-status'), 'verified');
    await a.screenshot({ path: join(SHOTS, 'approval.png'), fullPage: true });

    // The second reviewer sees the change live; the request stays listed, marked.
    await b.getByTestId('approval-status').getByText('APPROVED').waitFor({ timeout: 10_000 });

    // The stale view decides on revision 1 and is refused, clearly.
    await c.getByRole('button', { name: 'Approve', exact: true }).click();
    const refusal = c.getByTestId('decision-result');
    await hasText(refusal, 'Refused');
    await hasText(refusal, 'revision 1');
    await c.getByTestId('revision').getByText('revision 2').waitFor();

    // Hostile A2UI and text content: rendered as text, nothing loaded, nothing run.
    await a.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await a.getByRole('button', { name: 'Start a task' }).click();
    await a.getByLabel('Message').fill('surface');
    await a.getByRole('button', { name: 'Start', exact: true }).click();
    await a.getByText('Not rendered: Image component').waitFor();
    await a.getByText('<img src=x onerror="alert(1)"><b>Not bold</b> **not markdown**').waitFor();
    await a.getByText('(action openUrl not run)').waitFor();
    expect(await a.locator('img, iframe, object, embed').count()).toBe(0);
    expect(await a.locator('.a2ui b').count()).toBe(0);
    await a.screenshot({ path: join(SHOTS, 'task.png'), fullPage: true });
    // The phishing button stays inert; the event button answers the agent with its context.
    expect(await a.getByRole('button', { name: /Verify your account/ }).isDisabled()).toBe(true);
    await a.getByRole('button', { name: 'Confirm', exact: true }).click();
    await a.getByText(/Received confirm_deploy with context/).waitFor({ timeout: 10_000 });
    await hasText(a.getByTestId('task-state'), 'COMPLETED');
    await a.waitForTimeout(500);

    // A form the agent asks for: validated and coerced in the page, answered with typed values.
    await a.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await a.getByRole('button', { name: 'Start a task' }).click();
    await a.getByLabel('Message').fill('form');
    await a.getByRole('button', { name: 'Start', exact: true }).click();
    await a.getByText('Where should I deploy?').waitFor();
    const form = a.getByRole('form', { name: 'Deploy request' });
    await form.getByLabel('Environment').selectOption('production');
    await form.getByLabel('Replicas').fill('two');
    await form.getByRole('button').click();
    await form.getByText('A whole number.').waitFor();
    await form.getByLabel('Replicas').fill('3');
    await form.getByRole('button').click();
    await hasText(a.getByTestId('task-state'), 'COMPLETED');
    const sent = agent.received.at(-1)!;
    expect(sent.message.parts).toEqual([{ data: { environment: 'production', replicas: 3, dryRun: false }, mediaType: 'application/json' }]);

    // The second reviewer's socket drops; a request opened meanwhile appears after reconnecting.
    await b.getByRole('navigation').getByRole('link', { name: 'Inbox' }).click();
    await b.getByRole('heading', { name: 'Inbox' }).waitFor();
    liveLink.refuse = true;
    await liveLink.route!.close({ code: 1001, reason: 'test: network down' });
    await b.getByText('Live updates disconnected').waitFor();
    await a.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await a.getByRole('button', { name: 'Start a task' }).click();
    await a.getByLabel('Message').fill('approve');
    await a.getByRole('button', { name: 'Start', exact: true }).click();
    await a.getByText('Please approve this action.').waitFor();
    liveLink.refuse = false;
    await b.locator('ul.inbox li[data-status="PENDING"]', { hasText: 'Delete the staging cluster' }).waitFor({ timeout: 15_000 });
    await b.getByText('Live updates disconnected').waitFor({ state: 'detached' });

    // Keyboard: j/k, a, then y to confirm; the decided request stays in the list, marked.
    // (The first request, approved earlier, is still listed from this reviewer's cache, marked.)
    await b.keyboard.press('j');
    await b.keyboard.press('k');
    await hasText(b.locator('ul.inbox li.focused'), 'Delete the staging cluster');
    await b.keyboard.press('a');
    await b.getByRole('alertdialog', { name: 'Confirm decision' }).waitFor();
    await b.keyboard.press('y');
    await b.getByRole('status').filter({ hasText: 'Approved “Delete the staging cluster”' }).waitFor();
    await b.locator('ul.inbox li.focused[data-status="APPROVED"]', { hasText: 'Delete the staging cluster' }).waitFor({ timeout: 10_000 });
    expect(await b.locator('ul.inbox li').count()).toBe(2);

    // Phone width: no horizontal scrolling on the inbox and the approval page.
    await b.setViewportSize({ width: 390, height: 844 });
    expect(await b.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await b.screenshot({ path: join(SHOTS, 'inbox-phone.png') });
    await a.setViewportSize({ width: 390, height: 844 });
    await a.goto(t.instance.url + approvalPath);
    await a.getByRole('heading', { name: 'Delete the staging cluster' }).waitFor();
    expect(await a.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
