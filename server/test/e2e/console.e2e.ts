import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Locator, type Page, type Request, type WebSocketRoute } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { DECISION_LIMITS, MESSAGE_LIMITS } from '../../src/limits.js';
import type { Variant } from '../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { agentRegistry, createMember, OPS, startTestInstance, type TestInstance } from '../support/harness.js';
import { launchChromium } from '../support/chromium.js';
import { gqlData, sessionCookie, createPasswordUser } from '../support/console-session.js';
import { REPO_ROOT } from '../support/repo-root.js';

// The reviewer console in Debian's Chromium (playwright-core, no browser download), one scenario
// per test so a failure names what broke. Each scenario makes its own requests through the
// fixture agents and leaves no pending request behind (afterEach rejects what is left), so every
// scenario starts from an empty inbox. Screenshots go to test-results/screenshots (ignored);
// `server/scripts/refresh-screenshots.ts` copies them into docs/screenshots.

const SHOTS = process.env.TASKBAY_SCREENSHOT_DIR ?? join(REPO_ROOT, 'test-results/screenshots');
const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;

type Who = 'rita' | 'sam' | 'mia';
const PEOPLE: Record<Who, { email: string; name: string; role: 'ADMIN' | 'MEMBER'; id?: string; cookie?: string }> = {
  rita: { email: 'rita@example.test', name: 'Rita Reviewer', role: 'ADMIN' },
  sam: { email: 'sam@example.test', name: 'Sam Second', role: 'ADMIN' },
  mia: { email: 'mia@example.test', name: 'Mia Member', role: 'MEMBER' },
};

let t: TestInstance;
let agent: FixtureAgent;
let browser: Browser;
let contexts: BrowserContext[] = [];
let foreign: string[] = [];
let dialogs: string[] = [];
let agentHolds: Promise<void> | null = null;
const register = agentRegistry(() => t);

type Approval = { id: string; title: string; risk: string; status: string; revision: number; digest: string; action: any; [k: string]: any };

// ---------------------------------------------------------------------------------------------
// helpers

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

async function agentId(variant: Variant): Promise<string> {
  // The first scenario registers one agent from the Agents page; reuse it when it is there.
  const { agents } = await gql<{ agents: { id: string; name: string }[] }>('{ agents { id name } }');
  return agents.find((a) => a.name === `Taskbay fixture: ${variant}`)?.id ?? register(agent.cardUrl(variant));
}

async function startTask(variant: Variant, input: { text?: string; data?: unknown }): Promise<string> {
  const r = await gql(OPS.startTask, { agentId: await agentId(variant), text: input.text ?? null, data: input.data ?? null });
  return r.startTask.id as string;
}

async function approval(id: string): Promise<Approval> {
  return (await gql(`query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} } }`, { id })).approval;
}

async function approvalOfTask(taskId: string): Promise<Approval> {
  const r = await gql(`query($t: ID!) { approvals(taskId: $t, first: 5) { edges { node { ${OPS.approvalFields} } } } }`, { t: taskId });
  const node = r.approvals.edges[0]?.node;
  if (!node) throw new Error(`task ${taskId} opened no approval`);
  return node;
}

/** A fixture agent asks for approval (showcase/approver "approve", approver "approve data", rogue). */
async function ask(variant: Variant, text = 'approve'): Promise<Approval> {
  return approvalOfTask(await startTask(variant, { text }));
}

/** The scripted agent asks for exactly this request. */
async function scripted(request: { title: string; risk?: string; expiresInSeconds?: number; summary?: string; action?: unknown }): Promise<Approval> {
  const data = { action: { kind: 'send_message', text: `Approved: ${request.title}` }, ...request };
  const reply = { state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'Please approve.' }, { data, mediaType: MEDIA_TYPE.approvalRequest }] };
  return approvalOfTask(await startTask('scripted', { data: { reply } }));
}

const signInCookie = (who: Who) => sessionCookie(t, PEOPLE[who].email, PASSWORD);

const liveLink = { route: null as WebSocketRoute | null, refuse: false };

/** A browser context; signed in as `who` (a session made once per person) unless null. */
async function newPage(who: Who | null, opts: { live?: 'blocked' | 'droppable'; width?: number; height?: number } = {}): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 } });
  contexts.push(ctx);
  if (who) await ctx.addCookies([{ name: 'taskbay_session', value: PEOPLE[who].cookie!, url: t.instance.url, httpOnly: true, sameSite: 'Lax' }]);
  if (opts.live === 'blocked') {
    // This reviewer's live connection never opens: the page keeps what it loaded (a stale view).
    await ctx.routeWebSocket(/\/graphql/, () => {});
  }
  if (opts.live === 'droppable') {
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
  page.setDefaultTimeout(WAIT);
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

async function open(page: Page, path: string, heading: string | RegExp) {
  await page.goto(t.instance.url + path);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

const inboxRows = (page: Page) => page.locator('ul.inbox > li');
const row = (page: Page, a: { id: string }) => page.locator(`ul.inbox > li[data-id="${a.id}"]`);

/** The GraphQL operation a request of the console names (GET query string or POST body). */
const operationOfRequest = (r: Request): string | undefined =>
  new URL(r.url()).searchParams.get('operationName') ?? (r.method() === 'POST' ? r.postDataJSON()?.operationName : undefined);

/** Waits until the locator's text contains `text` (a string or pattern). */
async function hasText(loc: Locator, text: string | RegExp, timeout = WAIT): Promise<void> {
  await loc.filter({ hasText: text }).first().waitFor({ timeout });
}

/** The ids of the inbox rows, in screen order. */
async function rowIds(page: Page): Promise<string[]> {
  return inboxRows(page).evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? ''));
}

/** One visible selection: the selected row, the row marked current and the focused element agree. */
async function selection(page: Page) {
  return page.evaluate(() => ({
    selected: [...document.querySelectorAll('ul.inbox > li.selected')].map((e) => e.getAttribute('data-id')),
    current: [...document.querySelectorAll('ul.inbox > li[aria-current="true"]')].map((e) => e.getAttribute('data-id')),
    focused: document.activeElement?.closest('ul.inbox > li')?.getAttribute('data-id') ?? null,
  }));
}

const confirmBox = (page: Page) => page.getByTestId('confirm-decision');
const shot = (page: Page, name: string, fullPage = true) => page.screenshot({ path: join(SHOTS, name), fullPage });
const noHorizontalScroll = async (page: Page) =>
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width);

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await startTestInstance();
  for (const p of Object.values(PEOPLE)) {
    p.id = await createPasswordUser(t, { ...p, password: PASSWORD });
  }
  PEOPLE.rita.cookie = await signInCookie('rita');
  PEOPLE.sam.cookie = await signInCookie('sam');
  PEOPLE.mia.cookie = await signInCookie('mia');
  agent = await startFixtureAgent({
    port: 0,
    host: '127.0.0.1',
    // While set, the agent holds its answer to an approved message (the delivery stays unrecorded).
    beforeReply: async (m) => {
      if (agentHolds && m.message.metadata?.approval) await agentHolds;
    },
  });
  browser = await launchChromium();
});

afterEach(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  contexts = [];
  const seenForeign = foreign;
  const seenDialogs = dialogs;
  foreign = [];
  dialogs = [];
  liveLink.route = null;
  liveLink.refuse = false;
  // Leave no pending request for the next scenario.
  const r = await gql(`{ approvals(first: 100, status: [PENDING]) { edges { node { id revision digest } } } }`);
  for (const { node } of r.approvals.edges) await t.gql(OPS.reject, { id: node.id, revision: node.revision, digest: node.digest, comment: 'test cleanup' });
  // Agent content never made the browser load anything from another host or open a dialog.
  expect(seenForeign).toEqual([]);
  expect(seenDialogs).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('reviewer console in Chromium', () => {
  it('signs in, registers an agent, and a request started in one browser arrives live in another', async () => {
    const a = await newPage(null);
    const b = await newPage('sam');
    await a.goto(t.instance.url + '/');
    await a.getByLabel('Email').fill(PEOPLE.rita.email);
    await a.getByLabel('Password').fill(PASSWORD);
    await a.getByRole('button', { name: 'Sign in' }).click();
    await a.getByRole('heading', { name: 'Inbox' }).waitFor();
    await open(b, '/', 'Inbox');

    await a.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
    await a.getByLabel('Agent Card URL').fill(agent.cardUrl('approver'));
    await a.getByRole('button', { name: 'Register' }).click();
    await hasText(a.locator('ul.agents > li'), 'Taskbay fixture: approver');

    await a.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await a.getByRole('button', { name: 'Start a task' }).click();
    await a.getByLabel('Agent', { exact: true }).selectOption({ label: 'Taskbay fixture: approver' });
    await a.getByLabel('Message').fill('approve');
    const started = Date.now();
    await a.getByRole('button', { name: 'Start', exact: true }).click();
    await a.getByRole('heading', { name: /Task with/ }).waitFor();
    await a.getByText('Please approve this action.').waitFor();

    const arrived = b.locator('ul.inbox > li', { hasText: 'Delete the staging cluster' });
    await arrived.waitFor(); // no reload: it arrives over the subscription
    console.log(`request visible in the second context ${Date.now() - started} ms after Start`);
    await hasText(arrived.locator('.risk'), '▲ HIGH');
  });

  it('sorts the inbox by urgency by default, counts per risk, and keeps the other orders one click away', async () => {
    // Seven live requests from the fixture agents, created out of urgency order.
    const low = await scripted({ title: 'Rotate the build cache', risk: 'low', expiresInSeconds: 300 });
    const high = await ask('showcase'); // high, 1 h
    const critical = await ask('rogue'); // critical, 10 min
    const medium = await ask('approver', 'approve data'); // medium, 1 h
    const criticalSoon = await scripted({ title: 'Drop the orders table', risk: 'critical', expiresInSeconds: 240 });
    const mediumNoRush = await scripted({ title: 'Tag release 1.4', risk: 'medium' }); // the 7-day default
    const highSoon = await scripted({ title: 'Force-push main', risk: 'high', expiresInSeconds: 420 });
    // And one task waiting for a person that cannot become an approval (listed below the requests).
    const ignored = await startTask('plain', { text: 'approve' });

    const page = await newPage('rita');
    await open(page, '/', 'Inbox');
    await expect.poll(() => rowIds(page), { timeout: WAIT }).toHaveLength(7);
    expect(await rowIds(page)).toEqual([criticalSoon.id, critical.id, highSoon.id, high.id, medium.id, mediumNoRush.id, low.id]);
    expect(await page.getByRole('button', { name: 'Most urgent first' }).getAttribute('aria-pressed')).toBe('true');

    // Counts per risk, each marked by a shape and a word as well as colour.
    const counts = page.getByTestId('risk-counts');
    expect(await counts.innerText()).toMatch(/‼ 2 critical\s+▲ 2 high\s+● 2 medium\s+○ 1 low/);
    await hasText(row(page, criticalSoon).locator('.risk'), '‼ CRITICAL');
    await hasText(row(page, high).locator('.risk'), '▲ HIGH');
    expect(await row(page, criticalSoon).getAttribute('class')).toContain('risk-row-critical');

    // Under ten minutes the countdown turns urgent, whatever the risk; the rest does not.
    for (const soon of [criticalSoon, critical, highSoon, low])
      await row(page, soon)
        .locator('[data-urgent]')
        .filter({ hasText: /Urgent: expires in \d+m/ })
        .waitFor();
    for (const later of [high, medium, mediumNoRush]) expect(await row(page, later).locator('[data-urgent]').count()).toBe(0);
    await page.locator(`ul[aria-label="Tasks waiting for input"] > li[data-task-id="${ignored}"]`).waitFor();
    await shot(page, 'inbox.png');

    // The other orders are one click away.
    await page.getByRole('button', { name: 'Newest first' }).click();
    expect(await rowIds(page)).toEqual([highSoon.id, mediumNoRush.id, criticalSoon.id, medium.id, critical.id, high.id, low.id]);
    await page.getByRole('button', { name: 'Expiring soonest' }).click();
    expect(await rowIds(page)).toEqual([criticalSoon.id, low.id, highSoon.id, critical.id, high.id, medium.id, mediumNoRush.id]);
    await page.getByRole('button', { name: /critical$/ }).click();
    expect(await rowIds(page)).toEqual([criticalSoon.id, critical.id]);

    // The approve button is styled by risk.
    await open(page, `/approvals/${criticalSoon.id}`, 'Drop the orders table');
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).getAttribute('class')).toContain('approve-critical');
    await open(page, `/approvals/${medium.id}`, 'Deploy to staging');
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).getAttribute('class')).toContain('approve-medium');
  });

  it("keeps a row's newer status when an inbox list read before its decision arrives after the decision was pushed (the older list is followed by a fresh read)", async () => {
    const decided = await scripted({ title: 'Drain node 7', risk: 'low' });
    const page = await newPage('rita');
    await open(page, '/', 'Inbox');
    const decidedRow = (status: string) => page.locator(`ul.inbox > li[data-id="${decided.id}"][data-status="${status}"]`);
    await decidedRow('PENDING').waitFor();
    // The next inbox list (asked again when a request arrives) is read while the request is still
    // pending, and reaches the page only after its decision was pushed live.
    let held = false;
    let heldRequest: Request | null = null;
    let delivered = false;
    let listRead!: () => void;
    const read = new Promise<void>((r) => (listRead = r));
    let release!: () => void;
    const releasedPromise = new Promise<void>((r) => (release = r));
    await page.route(
      (url) => url.pathname === '/graphql',
      async (route) => {
        if (held || operationOfRequest(route.request()) !== 'Inbox') return route.fallback();
        held = true;
        heldRequest = route.request();
        const response = await route.fetch();
        listRead();
        await releasedPromise;
        await route.fulfill({ response });
        delivered = true;
      },
    );
    // The list is asked again once the older one is written (web/src/lib/approval-freshness.ts: its
    // row version is older than the pushed one; graphcache sometimes re-reads it by itself, and
    // sometimes not: a CI run without the row version waited 20 s for it): the answer to a
    // request sent after the older list reached the page.
    const readAgain = page.waitForResponse((r) => delivered && r.request() !== heldRequest && operationOfRequest(r.request()) === 'Inbox');
    await scripted({ title: 'Drain node 8', risk: 'low' });
    await read;
    await gql(OPS.approve, { id: decided.id, revision: decided.revision, digest: decided.digest });
    await decidedRow('APPROVED').waitFor();
    release();
    await readAgain;
    await decidedRow('APPROVED').waitFor();
    expect(await page.locator(`ul.inbox > li[data-id="${decided.id}"]`).getAttribute('data-status')).toBe('APPROVED');
  });

  it('keeps the inbox selection on the same request when rows arrive, change and leave; a and r act on that id only', async () => {
    const critical = await ask('rogue');
    const medium = await scripted({ title: 'Tag release 1.5', risk: 'medium' });
    const a = await newPage('rita');
    const b = await newPage('sam');
    await open(a, '/', 'Inbox');
    await expect.poll(() => rowIds(a), { timeout: WAIT }).toEqual([critical.id, medium.id]);

    // Select the critical request with the keyboard.
    await a.keyboard.press('j');
    expect(await selection(a)).toEqual({ selected: [critical.id], current: [critical.id], focused: critical.id });

    // Rows arrive above and below it (a more urgent critical, a low one).
    const above = await scripted({ title: 'Drop the orders table', risk: 'critical', expiresInSeconds: 240 });
    const below = await scripted({ title: 'Rotate the build cache', risk: 'low' });
    await expect.poll(() => rowIds(a), { timeout: WAIT }).toEqual([above.id, critical.id, medium.id, below.id]);
    expect(await selection(a)).toEqual({ selected: [critical.id], current: [critical.id], focused: critical.id });

    // A row changes: another reviewer decides the medium one in a second browser.
    await open(b, `/approvals/${medium.id}`, 'Tag release 1.5');
    await b.getByRole('button', { name: 'Approve', exact: true }).click();
    await confirmBox(b).getByRole('button', { name: 'Approve revision 1' }).click();
    await b.getByTestId('approval-status').getByText('APPROVED').waitFor();
    await a.locator(`ul.inbox > li[data-id="${medium.id}"][data-status="APPROVED"]`).waitFor();
    expect(await selection(a)).toEqual({ selected: [critical.id], current: [critical.id], focused: critical.id });

    // A row leaves the list (filtered out): the selection stays with its request.
    await a.getByRole('button', { name: /low$/ }).click();
    await expect.poll(() => rowIds(a)).toEqual([below.id]);
    expect((await selection(a)).selected).toEqual([]);
    await a.getByRole('button', { name: /low$/ }).click();
    await expect.poll(() => rowIds(a)).toHaveLength(4);
    // Back in the list, still the only selected row (focus is on the filter button clicked).
    expect(await selection(a)).toEqual({ selected: [critical.id], current: [critical.id], focused: null });
    await a.keyboard.press('j');
    await a.keyboard.press('k');
    expect(await selection(a)).toEqual({ selected: [critical.id], current: [critical.id], focused: critical.id });

    // `a` proposes exactly the selected request, at the revision and digest on screen.
    await a.keyboard.press('a');
    const box = confirmBox(a);
    await hasText(box, 'Approve “Rotate the production database password”?');
    expect(await box.getByTestId('confirm-revision').innerText()).toBe('1');
    expect(await box.getByTestId('confirm-digest').innerText()).toBe(critical.digest);
    // Critical: the confirm button waits for the first characters of the digest.
    const go = box.getByRole('button', { name: 'Approve revision 1' });
    expect(await go.isDisabled()).toBe(true);
    await a.keyboard.type(critical.digest.slice(0, 6));
    expect(await go.isEnabled()).toBe(true);
    await a.keyboard.press('Enter');
    await a.getByRole('status').filter({ hasText: 'Approved “Rotate the production database password” (revision 1).' }).waitFor();
    expect((await approval(critical.id)).status).toBe('APPROVED');
    expect((await approval(above.id)).status).toBe('PENDING');
    expect((await approval(below.id)).status).toBe('PENDING');

    // `r` on a critical request asks for a reason and the digest.
    await a.locator(`ul.inbox > li[data-id="${above.id}"]`).focus();
    await a.keyboard.press('r');
    const rejectGo = confirmBox(a).getByRole('button', { name: 'Reject revision 1' });
    await confirmBox(a)
      .getByLabel(/Type the first 6 characters/)
      .fill(above.digest.slice(0, 6));
    expect(await rejectGo.isDisabled()).toBe(true);
    await confirmBox(a).getByLabel('Reason (required)').fill('Not during business hours.');
    await rejectGo.click();
    await confirmBox(a).waitFor({ state: 'detached' });
    expect(await a.locator('p.status-msg').innerText()).toBe('Rejected “Drop the orders table” (revision 1).');
    const rejected = await approval(above.id);
    expect(rejected.status).toBe('REJECTED');
    expect(rejected.decisions[0].comment).toBe('Not during business hours.');
    expect((await approval(below.id)).status).toBe('PENDING');
  });

  it('renders every part of the approval page from one revision, and a live revision replaces it all at once in both browsers', async () => {
    const req = await ask('approver', 'approve data'); // send_data: { environment: staging, replicas: 2 }
    const a = await newPage('rita');
    const b = await newPage('sam');
    for (const p of [a, b]) await open(p, `/approvals/${req.id}`, 'Deploy to staging');
    const preview = (p: Page) => p.locator('section[data-revision]').getByRole('form', { name: 'Deploy request' });
    expect(await preview(b).getByLabel('Replicas').inputValue()).toBe('2');
    // An absent field is shown as absent, not as its default or an unticked box.
    expect(await preview(b).getByLabel('Dry run').getAttribute('data-unset')).toBe('true');

    // The watcher has a confirmation open for revision 1 while the editor decides.
    await b.getByRole('button', { name: 'Approve', exact: true }).click();
    await hasText(confirmBox(b).getByTestId('confirm-revision'), '1');

    // Edit then approve: change Replicas only.
    await a.getByRole('button', { name: 'Edit then approve' }).click();
    const editor = a.getByLabel('Edit the values');
    await editor.getByLabel('Replicas').fill('4');
    await editor.getByRole('button', { name: 'Review these values' }).click();
    const box = confirmBox(a);
    await hasText(box.locator('.d-del'), '"replicas": 2');
    await hasText(box.locator('.d-add'), '"replicas": 4');
    expect(await box.locator('.d-add, .d-del').count()).toBe(2); // nothing else changes
    await box.getByRole('button', { name: 'Approve edited action revision 1' }).click();
    await a.getByTestId('decision-result').getByText('Edited and approved.').waitFor();

    const now = await approval(req.id);
    expect(now.revision).toBe(2);
    expect(now.action.values).toEqual({ environment: 'staging', replicas: 4 }); // no dryRun, no note
    for (const p of [a, b]) {
      await p.getByTestId('revision').getByText('revision 2').waitFor();
      expect(await p.getByTestId('digest').innerText()).toBe(now.digest);
      expect(await preview(p).getByLabel('Replicas').inputValue()).toBe('4');
      expect(await preview(p).getByLabel('Dry run').getAttribute('data-unset')).toBe('true');
      const sent = await p.getByRole('tree', { name: 'Values' }).innerText();
      expect(sent).toMatch(/replicas:\s*4/);
      expect(sent).not.toContain('dryRun');
      expect(await p.locator('section[data-revision]').getAttribute('data-revision')).toBe('2');
      await p.getByTestId('approval-status').getByText('APPROVED').waitFor();
    }
    // In the watching browser the confirmation for revision 1 stays, says what happened, and confirms nothing.
    await hasText(
      confirmBox(b).getByTestId('confirm-changed'),
      `This request was approved by ${PEOPLE.rita.name} while you were confirming. Nothing was decided.`,
    );
    expect(await confirmBox(b).getByRole('button', { name: 'Approve revision 1' }).isDisabled()).toBe(true);
    await b.getByTestId('revision-changed').getByText('Now showing revision 2; you opened this page at revision 1.').waitFor();

    // The agent receives exactly the approved values and verifies the digest.
    await a
      .getByTestId('observed-state')
      .getByText(/COMPLETED/)
      .waitFor();
    const delivered = agent.received.filter((m) => m.message.metadata?.approval).at(-1)!;
    expect(delivered.message.parts).toEqual([{ data: { environment: 'staging', replicas: 4 }, mediaType: 'application/json' }]);
    expect((delivered.message.metadata!.approval as { revisionDigest: string }).revisionDigest).toBe(now.digest);
  });

  it('edit then approve of a message: the confirmation shows the change, delivery and audit follow, a stale view is refused', async () => {
    const req = await ask('showcase'); // high
    const a = await newPage('rita');
    const watcher = await newPage('sam');
    const stale = await newPage('sam', { live: 'blocked' });
    for (const p of [a, watcher, stale]) await open(p, `/approvals/${req.id}`, 'Delete the staging cluster');
    await hasText(a.getByLabel('Message text'), 'Approved. Delete the staging cluster.');

    await a.getByRole('button', { name: 'Edit then approve' }).click();
    await a.locator('#edit-text').fill('Approved. Delete the staging cluster, but keep the backups.');
    await a.getByRole('button', { name: 'Review edited action' }).click();
    const box = confirmBox(a);
    await hasText(box.locator('.d-add'), 'keep the backups');
    const go = box.getByRole('button', { name: 'Approve edited action revision 1' });
    expect(await go.isDisabled()).toBe(true); // high: type the digest first
    await box.getByLabel(/Type the first 6 characters/).fill(req.digest.slice(0, 6));
    await go.click();
    await a.getByTestId('decision-result').getByText('Edited and approved.').waitFor();
    await a.getByTestId('execution-status').getByText('DELIVERED').waitFor();
    await a
      .getByTestId('observed-state')
      .getByText(/COMPLETED/)
      .waitFor();
    await hasText(a.getByTestId('revision'), 'revision 2');
    await hasText(a.locator('.revisions .diff .d-add').first(), 'keep the backups');
    await hasText(a.getByTestId('chain-status'), "This request's audit trail is intact");
    await shot(a, 'approval.png');

    // The watching reviewer sees the decision live.
    await watcher.getByTestId('approval-status').getByText('APPROVED').waitFor();
    await watcher.getByTestId('revision').getByText('revision 2').waitFor();

    // The stale view decides on revision 1 and is refused, clearly.
    await stale.getByRole('button', { name: 'Approve', exact: true }).click();
    await confirmBox(stale)
      .getByLabel(/Type the first 6 characters/)
      .fill(req.digest.slice(0, 6));
    await confirmBox(stale).getByRole('button', { name: 'Approve revision 1' }).click();
    const refusal = stale.getByTestId('decision-result');
    await hasText(refusal, 'Refused');
    await hasText(refusal, 'revision 1');
    await stale.getByTestId('revision').getByText('revision 2').waitFor();
  });

  it('edit then approve of a message: clearing the Data box removes the data', async () => {
    const req = await scripted({
      title: 'Scale the staging cluster',
      risk: 'medium',
      action: { kind: 'send_message', text: 'Approved. Scale staging.', data: { cluster: 'staging', nodes: 5 } },
    });
    const page = await newPage('rita');
    await open(page, `/approvals/${req.id}`, 'Scale the staging cluster');
    await page.getByRole('button', { name: 'Edit then approve' }).click();
    expect(await page.locator('#edit-data').inputValue()).toContain('"nodes": 5');
    await page.locator('#edit-data').fill('');
    await page.getByRole('button', { name: 'Review edited action' }).click();
    const box = confirmBox(page);
    await hasText(box.locator('.d-del'), '"nodes": 5');
    expect(await box.locator('.d-add').count()).toBe(0);
    await box.getByRole('button', { name: 'Approve edited action revision 1' }).click();
    await page.getByTestId('decision-result').getByText('Edited and approved.').waitFor();
    await page
      .getByTestId('observed-state')
      .getByText(/COMPLETED/)
      .waitFor();

    const now = await approval(req.id);
    expect(now.action).toEqual({ kind: 'send_message', text: 'Approved. Scale staging.' });
    const delivered = agent.received.filter((m) => m.taskId && m.message.metadata?.approval).at(-1)!;
    expect(delivered.message.parts).toEqual([{ text: 'Approved. Scale staging.' }]);
    expect(delivered.message.metadata).not.toHaveProperty('decision');
  });

  it('asks for every final decision in proportion to risk, naming title, revision and digest', async () => {
    const medium = await scripted({ title: 'Tag release 1.6', risk: 'medium' });
    const critical = await ask('rogue');
    const page = await newPage('rita');

    // Medium: one confirmation naming what is decided; nothing happens before it.
    await open(page, `/approvals/${medium.id}`, 'Tag release 1.6');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const box = confirmBox(page);
    await hasText(box, 'Approve “Tag release 1.6”?');
    expect(await box.getByTestId('confirm-digest').innerText()).toBe(medium.digest);
    expect((await approval(medium.id)).status).toBe('PENDING');
    await box.getByRole('button', { name: 'Cancel' }).click();
    expect(await box.count()).toBe(0);
    expect((await approval(medium.id)).status).toBe('PENDING');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await box.getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByTestId('approval-status').getByText('APPROVED').waitFor();

    // Critical: the comment box comes before the buttons; approving needs the digest typed.
    await open(page, `/approvals/${critical.id}`, 'Rotate the production database password');
    const commentBeforeButtons = await page.evaluate(() => {
      const comment = document.getElementById('comment')!;
      const approve = [...document.querySelectorAll('button')].find((b) => b.textContent?.trim().endsWith('Approve'))!;
      return !!(comment.compareDocumentPosition(approve) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    expect(commentBeforeButtons).toBe(true);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const go = box.getByRole('button', { name: 'Approve revision 1' });
    expect(await go.isDisabled()).toBe(true);
    const typed = box.getByLabel('This is a critical risk decision. Type the first 6 characters of the digest to confirm');
    await typed.fill('000000');
    expect(await go.isDisabled()).toBe(true);
    await page.keyboard.press('Enter');
    expect((await approval(critical.id)).status).toBe('PENDING');
    await typed.fill(critical.digest.slice(0, 6));
    expect(await go.isEnabled()).toBe(true);
    await shot(page, 'approval-confirm.png', false);
    await box.getByRole('button', { name: 'Cancel' }).click();

    // Rejecting a critical request needs a reason as well.
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    const reject = box.getByRole('button', { name: 'Reject revision 1' });
    await box.getByLabel(/Type the first 6 characters/).fill(critical.digest.slice(0, 6));
    expect(await reject.isDisabled()).toBe(true);
    await box.getByLabel('Reason (required)').fill('Rotate it in the maintenance window.');
    await reject.click();
    await page.getByTestId('approval-status').getByText('REJECTED').waitFor();
    const decided = await approval(critical.id);
    expect(decided.decisions.map((d: { outcome: string; comment: string }) => [d.outcome, d.comment])).toEqual([
      ['REJECT', 'Rotate it in the maintenance window.'],
    ]);
  });

  it('delegates a request to another reviewer, who then decides it', async () => {
    const req = await scripted({ title: 'Restart the queue workers', risk: 'medium' });
    const rita = await newPage('rita');
    const sam = await newPage('sam');
    await open(rita, `/approvals/${req.id}`, 'Restart the queue workers');
    await rita.getByRole('button', { name: 'Delegate', exact: true }).click();
    await rita.getByLabel('Delegate to').selectOption({ label: `${PEOPLE.sam.name} <${PEOPLE.sam.email}>` });
    await rita.locator('.decide .field').getByRole('button', { name: 'Delegate' }).click();
    await rita.getByTestId('decision-result').getByText('Delegated.').waitFor();
    await rita.getByText(`Delegated to ${PEOPLE.sam.name}`).first().waitFor();
    expect((await approval(req.id)).status).toBe('PENDING');

    await open(sam, '/', 'Inbox');
    await sam.getByLabel('Assigned to me').check();
    await hasText(row(sam, req), 'delegated to you');
    await row(sam, req).getByRole('link', { name: 'Restart the queue workers' }).click();
    await sam.getByRole('heading', { name: 'Restart the queue workers' }).waitFor();
    await sam.getByRole('button', { name: 'Approve', exact: true }).click();
    await confirmBox(sam).getByRole('button', { name: 'Approve revision 1' }).click();
    await sam.getByTestId('approval-status').getByText('APPROVED').waitFor();
    const decided = await approval(req.id);
    expect(decided.assignee.id).toBe(PEOPLE.sam.id);
    expect(decided.decisions.map((d: { outcome: string; reviewer: { id: string } }) => [d.outcome, d.reviewer.id]).sort()).toEqual(
      [
        ['APPROVE', PEOPLE.sam.id],
        ['DELEGATE', PEOPLE.rita.id],
      ].sort(),
    );
  });

  it('requests changes with a reason and sends nothing to the agent', async () => {
    const req = await ask('showcase'); // high
    const before = agent.received.length;
    const page = await newPage('rita');
    await open(page, `/approvals/${req.id}`, 'Delete the staging cluster');
    await page.getByRole('button', { name: 'Request changes' }).click();
    const box = confirmBox(page);
    await hasText(box, 'Send back for changes “Delete the staging cluster”?');
    const go = box.getByRole('button', { name: 'Request changes revision 1' });
    await box.getByLabel(/Type the first 6 characters/).fill(req.digest.slice(0, 6));
    expect(await go.isDisabled()).toBe(true);
    await box.getByLabel('Reason (required)').fill('Keep the volumes; delete only the nodes.');
    await go.click();
    await page.getByTestId('approval-status').getByText('CHANGES REQUESTED').waitFor();
    await hasText(page.getByTestId('delivery-note'), 'Nothing is sent unless the request is approved.');
    const decided = await approval(req.id);
    expect(decided.decisions[0]).toMatchObject({ outcome: 'REQUEST_CHANGES', comment: 'Keep the volumes; delete only the nodes.' });
    expect(decided.execution).toBeNull();
    expect(agent.received.length).toBe(before);
  });

  it('lists human work that is not an approval under "Waiting for input", with the reason, live, opening nothing', async () => {
    const ignored = await startTask('plain', { text: 'approve' });
    const unknownKind = await startTask('unknown', { text: 'approve' });
    const form = await startTask('form', { text: 'deploy' });
    const page = await newPage('rita');
    await open(page, '/', 'Inbox');
    const waiting = page.getByRole('list', { name: 'Tasks waiting for input' });
    const item = (taskId: string) => waiting.locator(`li[data-task-id="${taskId}"]`);
    await hasText(item(ignored), "Approval request ignored: the agent's card does not advertise the approval-request extension.");
    await hasText(item(ignored).locator('.badge'), 'Ignored request');
    await hasText(item(unknownKind), 'action.kind must be "send_message" or "send_data", got "run_tool"');
    await hasText(item(form), 'Asks for a form: “Deploy request”.');
    // A task that starts waiting while the page is open appears without a reload.
    const asks = await startTask('showcase', { text: 'hello' });
    await hasText(item(asks), 'Asks: You said: hello.');
    // Nothing became an approval.
    await page.getByTestId('inbox-empty').waitFor();
    for (const id of [ignored, unknownKind, form, asks]) {
      const r = await gql(`query($t: ID!) { approvals(taskId: $t, first: 5) { edges { node { id } } } }`, { t: id });
      expect(r.approvals.edges).toEqual([]);
    }
    await item(form).getByRole('link').click();
    await page.getByRole('form', { name: 'Deploy request' }).waitFor();
  });

  it('labels honestly: a request without an agent sends nothing; a command request names its hook and token owner and shows its grant state', async () => {
    const hook = await createMember(t, { email: 'hook@example.test' });
    const created = await t.gql(
      `mutation { createApproval(input: { title: "Rotate the signing key", risk: MEDIUM, action: { kind: "send_message", text: "Rotate it." } }) { id } }`,
    );
    const agentless = await approval(created.data.createApproval.id);
    const command = 'rm -rf build';
    const asked = await t.gql(
      `mutation($i: RequestCommandApprovalInput!) { requestCommandApproval(input: $i) { approvalId approval { id } } }`,
      {
        i: {
          agentId: 'a1b2c3d4',
          payload: {
            operation: 'MUTATIVE command intercepted: rm',
            exact_content: command,
            scope: 'rm',
            risk_level: 'high',
            rollback: null,
            rationale: 'clean build',
            verification: 'ls build fails',
          },
        },
      },
      hook.token,
    );
    expect(asked.errors).toBeUndefined();
    const cmd = await approval(asked.data.requestCommandApproval.approval.id);
    const page = await newPage('rita');

    await open(page, '/', 'Inbox');
    await hasText(row(page, agentless), 'no agent: approving sends nothing');
    await hasText(row(page, cmd), `coding agent a1b2c3d4 · token of ${hook.email}`);

    await open(page, `/approvals/${agentless.id}`, 'Rotate the signing key');
    await hasText(page.getByTestId('no-agent'), 'This request has no agent: approving records the decision and sends nothing to anyone.');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByTestId('approval-status').getByText('APPROVED').waitFor();
    await hasText(page.getByTestId('delivery-note'), 'Nothing is sent: this request has no agent.');

    await open(page, `/approvals/${cmd.id}`, `Run: ${command}`);
    await hasText(page.getByTestId('who-asks'), `Coding agent a1b2c3d4 · token of ${hook.email} (${hook.email})`);
    // Seed 002: the command is never edited or sent back, and the Approve button carries the
    // nonce label (P- and its first eight hex digits) that the SHOWN event records as seen.
    expect(await page.getByRole('button', { name: 'Edit then approve' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Request changes' }).count()).toBe(0);
    const pid = asked.data.requestCommandApproval.approvalId as string;
    const nonceLabel = `Approve [${pid.slice(0, 10)}]`;
    expect(nonceLabel).toMatch(/^Approve \[P-[0-9a-f]{8}\]$/);
    await page.getByRole('button', { name: nonceLabel, exact: true }).click();
    await confirmBox(page)
      .getByLabel(/Type the first 6 characters/)
      .fill(cmd.digest.slice(0, 6));
    await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).click();
    await hasText(page.getByTestId('grant-status'), 'APPROVED');
    expect(await page.getByText('Queued…').count()).toBe(0);
    const [shown] = await t.sql(`select data->>'label' as label from audit_event where type = 'SHOWN' and data->>'approval_id' = $1`, [pid]);
    expect(shown.label).toBe(nonceLabel);

    expect((await t.gql(`mutation($p: String!) { consumeCommandGrant(approvalId: $p) { grant { status } } }`, { p: pid }, hook.token)).errors).toBeUndefined();
    await open(page, `/approvals/${cmd.id}`, `Run: ${command}`);
    await hasText(page.getByTestId('grant-status'), 'CONSUMED');
    expect(
      (await t.gql(`mutation($p: String!) { reportCommandOutcome(input: { approvalId: $p, exitCode: 0 }) { status } }`, { p: pid }, hook.token)).errors,
    ).toBeUndefined();
    await open(page, `/approvals/${cmd.id}`, `Run: ${command}`);
    await hasText(page.getByTestId('grant-status'), 'EXECUTED');
  });

  it('links a request to the one it replaced and shows what changed; the digest is whole and copyable', async () => {
    const first = await scripted({ title: 'Deploy 1.4 to staging', risk: 'medium', action: { kind: 'send_message', text: 'Deploy 1.4 to staging.' } });
    const reply = {
      state: 'TASK_STATE_INPUT_REQUIRED',
      parts: [
        { text: 'Changed my mind.' },
        {
          data: { title: 'Deploy 1.5 to staging', risk: 'medium', action: { kind: 'send_message', text: 'Deploy 1.5 to staging.' } },
          mediaType: MEDIA_TYPE.approvalRequest,
        },
      ],
    };
    await gql(`mutation($t: ID!, $d: JSON) { sendTaskMessage(input: { taskId: $t, data: $d }) { id } }`, { t: first.task.id, d: { reply } });
    const [newer] = (
      await gql(`query($t: ID!) { approvals(taskId: $t, first: 5) { edges { node { ${OPS.approvalFields} } } } }`, { t: first.task.id })
    ).approvals.edges.map((e: { node: Approval }) => e.node);
    expect(newer.id).not.toBe(first.id);
    const page = await newPage('rita');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.instance.url });
    await open(page, `/approvals/${newer.id}`, 'Deploy 1.5 to staging');
    const box = page.getByTestId('supersedes');
    await hasText(box, 'Replaces “Deploy 1.4 to staging” (revision 1, now superseded)');
    await hasText(box.getByTestId('changed-paths'), 'Changed: text');
    await hasText(box.locator('.d-del'), 'Deploy 1.4 to staging.');
    await hasText(box.locator('.d-add'), 'Deploy 1.5 to staging.');

    expect(await page.getByTestId('digest').innerText()).toBe(newer.digest);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(newer.digest);
    await hasText(page.locator('.digest-line'), 'the agent can recompute it');

    await box.getByRole('link', { name: '“Deploy 1.4 to staging”' }).click();
    await page.getByRole('heading', { name: 'Deploy 1.4 to staging', level: 1 }).waitFor();
    await hasText(page.getByRole('status'), 'Superseded by Deploy 1.5 to staging');
  });

  it("keeps the newer view when the decision's answer arrives after the delivery it started (the older answer is followed by a fresh read)", async () => {
    const req = await scripted({ title: 'Rotate the signing key', risk: 'low' });
    const page = await newPage('rita');
    await open(page, `/approvals/${req.id}`, 'Rotate the signing key');
    const delivered = page.locator('span[data-type="delivery.delivered"]');
    // Every change of "the delivery is on the page", in order.
    await page.evaluate(() => {
      const shown: boolean[] = [];
      (window as unknown as { deliveredShown: boolean[] }).deliveredShown = shown;
      const note = () => {
        const now = !!document.querySelector('span[data-type="delivery.delivered"]');
        if (shown.at(-1) !== now) shown.push(now);
      };
      note();
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    // The answer is read while the agent holds its reply (no delivery recorded yet), and reaches
    // the page only after the delivery, recorded once the agent replies, was pushed live.
    let agentReplies!: () => void;
    agentHolds = new Promise<void>((r) => (agentReplies = r));
    let answered = false;
    await page.route('**/graphql', async (route) => {
      if (route.request().method() !== 'POST' || route.request().postDataJSON()?.operationName !== 'Approve') return route.fallback();
      const response = await route.fetch();
      expect(await response.text()).not.toContain('delivery.delivered');
      agentReplies();
      await delivered.waitFor();
      answered = true;
      await route.fulfill({ response });
    });
    const readAgain = page.waitForResponse((r) => answered && operationOfRequest(r.request()) === 'ApprovalPage');
    try {
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).click();
      await page.getByTestId('decision-result').getByText('Approved.').waitFor();
      // The older answer is followed by a fresh read of the page, and the delivery stays shown.
      await readAgain;
      await delivered.waitFor();
      expect(await page.evaluate(() => (window as unknown as { deliveredShown: boolean[] }).deliveredShown.at(-1))).toBe(true);
      await page.getByTestId('approval-status').getByText('APPROVED').waitFor();
      expect(await delivered.count()).toBe(1);
    } finally {
      agentHolds = null;
      agentReplies();
    }
  });

  it("shows this request's audit trail with names and readable events, and this stream's own status", async () => {
    const req = await scripted({ title: 'Purge the CDN cache', risk: 'low' });
    const page = await newPage('rita');
    await open(page, `/approvals/${req.id}`, 'Purge the CDN cache');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByTestId('approval-status').getByText('APPROVED').waitFor();
    await page.locator('span[data-type="delivery.delivered"]').waitFor();
    const rows = await page
      .locator('section[aria-labelledby="audit-h"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 3).map((td) => td.textContent)));
    expect(rows).toEqual([
      ['Request opened', 'Taskbay fixture: scripted'],
      ['Approved', PEOPLE.rita.name],
      ['Delivery queued', PEOPLE.rita.name],
      ['Delivered to the agent', 'Taskbay'],
    ]);
    expect(await page.locator('span[data-type="approval.decided"]').getAttribute('title')).toBe('approval.decided');
    expect(await page.getByTestId('chain-status').innerText()).toBe(
      `This request's audit trail is intact: 4 events, each linked to the one before and matching its hash.`,
    );
  });

  it('explains empty pages to a member without grants; grants are listed and revocable on People', async () => {
    const mia = await newPage('mia');
    for (const [path, heading, what] of [
      ['/tasks', 'Tasks', 'tasks'],
      ['/agents', 'Agents', 'agents'],
      ['/', 'Inbox', 'requests'],
    ] as const) {
      await open(mia, path, heading);
      await hasText(mia.getByTestId('no-access'), `You hold no grant on any agent yet, so there are no ${what} to show.`);
    }

    await agentId('form');
    const rita = await newPage('rita');
    await open(rita, '/people', 'People');
    const grantForm = rita.getByRole('form', { name: 'Grant agent access' });
    await grantForm.getByLabel('Person').selectOption({ label: PEOPLE.mia.email });
    await grantForm.getByLabel('Agent').selectOption({ label: 'Taskbay fixture: form' });
    await grantForm.getByRole('button', { name: 'Grant' }).click();
    const revoke = rita.getByRole('button', { name: `Revoke ${PEOPLE.mia.email} on Taskbay fixture: form` });
    await revoke.waitFor();
    await open(mia, '/agents', 'Agents');
    await hasText(mia.locator('ul.agents > li'), 'Taskbay fixture: form');
    expect(await mia.getByTestId('no-access').count()).toBe(0);

    await revoke.click();
    await revoke.waitFor({ state: 'detached' });
    await hasText(rita.getByRole('status'), `Revoked ${PEOPLE.mia.email}'s access to Taskbay fixture: form.`);
    expect((await gql(`{ agentGrants { id } }`)).agentGrants).toEqual([]);
    await open(mia, '/agents', 'Agents');
    await mia.getByTestId('no-access').waitFor();
  });

  it('disables the composer on a finished task and says why', async () => {
    const taskId = await startTask('showcase', { text: 'surface' });
    const page = await newPage('rita');
    await open(page, `/tasks/${taskId}`, /Task with/);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await hasText(page.getByTestId('task-state'), 'COMPLETED');
    await hasText(page.getByTestId('composer-note'), 'This task is completed: the agent takes no more messages on it. Start a new task to continue.');
    expect(await page.getByLabel('Message').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    expect(await page.getByText('BAD_USER_INPUT').count()).toBe(0);
  });

  // Docs/CONFORMANCE.md G1: lengths as the server counts them (code points), nothing cut.
  it('counts the composer and the comment in characters as the server does, keeps what was typed, and says why Send or a decision is disabled', async () => {
    const rocket = '\u{1F680}'; // one code point, two UTF-16 units
    const codePoints = (loc: Locator) => loc.evaluate((el) => [...(el as HTMLTextAreaElement).value].length);
    const taskId = await startTask('showcase', { text: 'hello' });
    const page = await newPage('rita');
    await open(page, `/tasks/${taskId}`, /Task with/);
    const message = page.getByLabel('Message');
    const send = page.getByRole('button', { name: 'Send' });
    await message.fill(rocket.repeat(MESSAGE_LIMITS.textMax) + 'a');
    expect(await codePoints(message)).toBe(MESSAGE_LIMITS.textMax + 1);
    await hasText(
      page.getByTestId('too-long'),
      `The message is too long to send: ${MESSAGE_LIMITS.textMax + 1} characters, at most ${MESSAGE_LIMITS.textMax}. Remove 1.`,
    );
    expect(await send.isDisabled()).toBe(true);
    await message.fill(rocket.repeat(MESSAGE_LIMITS.textMax));
    expect(await codePoints(message)).toBe(MESSAGE_LIMITS.textMax);
    expect(await page.getByTestId('too-long').count()).toBe(0);
    await send.click();
    // The server takes what the page allowed: the box empties once the message is sent.
    await page.waitForFunction(() => (document.getElementById('composer') as HTMLTextAreaElement | null)?.value === '', null, { timeout: WAIT });
    expect(await page.locator('.error').count()).toBe(0);

    const req = await scripted({ title: 'Archive the old logs', risk: 'medium' });
    await open(page, `/approvals/${req.id}`, 'Archive the old logs');
    const comment = page.locator('#comment');
    const approve = page.getByRole('button', { name: 'Approve', exact: true });
    await comment.fill(rocket.repeat(DECISION_LIMITS.commentMax + 1));
    expect(await codePoints(comment)).toBe(DECISION_LIMITS.commentMax + 1);
    await hasText(
      page.getByTestId('too-long'),
      `The comment is too long to send: ${DECISION_LIMITS.commentMax + 1} characters, at most ${DECISION_LIMITS.commentMax}. Remove 1.`,
    );
    expect(await approve.isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Reject', exact: true }).isDisabled()).toBe(true);
    await comment.fill(rocket.repeat(DECISION_LIMITS.commentMax));
    await approve.click();
    await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByTestId('approval-status').getByText('APPROVED').waitFor();
    const decided = await approval(req.id);
    expect(decided.decisions.map((d: { comment: string }) => [...d.comment].length)).toEqual([DECISION_LIMITS.commentMax]);
  });

  it('sends a message once when Send is pressed again after its answer was lost', async () => {
    const taskId = await startTask('showcase', { text: 'hello' });
    const page = await newPage('rita');
    await open(page, `/tasks/${taskId}`, /Task with/);
    const text = 'Use the blue-green rollout.';
    // The first SendTaskMessage reaches the server, which sends it to the agent; its answer is
    // then lost on the way back to the page.
    let dropped = 0;
    await page.route('**/graphql**', async (route) => {
      const body = (() => {
        try {
          return route.request().postDataJSON() as { operationName?: string } | null;
        } catch {
          return null;
        }
      })();
      if (body?.operationName === 'SendTaskMessage' && dropped === 0) {
        dropped += 1;
        await route.fetch();
        await route.abort('connectionreset');
        return;
      }
      await route.continue();
    });
    const toAgent = () => agent.received.filter((m) => m.message.parts.some((p) => 'text' in p && p.text === text));
    await page.getByLabel('Message').fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('alert').waitFor({ timeout: WAIT });
    expect(toAgent()).toHaveLength(1);
    expect(await page.getByLabel('Message').inputValue()).toBe(text);
    // The person sends again: the same message, so the agent does not get it twice.
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction(() => (document.getElementById('composer') as HTMLTextAreaElement | null)?.value === '', null, { timeout: WAIT });
    expect(dropped).toBe(1);
    expect(toAgent()).toHaveLength(1);
  });

  it('shows loading while the first page loads, not "Nothing here"', async () => {
    await scripted({ title: 'Renew the TLS certificate', risk: 'low' });
    const page = await newPage('rita');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // urql sends a query as GET while its URL is short enough, else as POST: hold either.
    const isInbox = (r: import('playwright-core').Request) => {
      if (new URL(r.url()).searchParams.get('operationName') === 'Inbox') return true;
      try {
        return (r.postDataJSON() as { operationName?: string } | null)?.operationName === 'Inbox';
      } catch {
        return false;
      }
    };
    await page.route('**/graphql**', async (route) => {
      if (isInbox(route.request())) await held;
      await route.continue();
    });
    await open(page, '/', 'Inbox');
    await page.getByTestId('inbox-loading').getByText('Loading requests…').waitFor();
    expect(await page.getByText('Nothing here').count()).toBe(0);
    expect(await page.getByTestId('inbox-empty').count()).toBe(0);
    release();
    await hasText(inboxRows(page), 'Renew the TLS certificate');
    expect(await page.getByTestId('inbox-loading').count()).toBe(0);
  });

  it('renders hostile A2UI and text content as text, loads nothing, and answers the agent from its event button', async () => {
    const page = await newPage('rita');
    await agentId('showcase');
    await open(page, '/tasks', 'Tasks');
    await page.getByRole('button', { name: 'Start a task' }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Taskbay fixture: showcase' });
    await page.getByLabel('Message').fill('surface');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByText('Not rendered: Image component').waitFor();
    await page.getByText('<img src=x onerror="alert(1)"><b>Not bold</b> **not markdown**').waitFor();
    await page.getByText('(action openUrl not run)').waitFor();
    expect(await page.locator('img, iframe, object, embed').count()).toBe(0);
    expect(await page.locator('.a2ui b').count()).toBe(0);
    await shot(page, 'task.png');
    // The phishing button stays inert; the event button answers the agent with its context.
    expect(await page.getByRole('button', { name: /Verify your account/ }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.getByText(/Received confirm_deploy with context/).waitFor();
    await hasText(page.getByTestId('task-state'), 'COMPLETED');
  });

  it("validates an agent's form in the page and answers with typed values", async () => {
    const page = await newPage('rita');
    const taskId = await startTask('showcase', { text: 'form' });
    await open(page, `/tasks/${taskId}`, /Task with/);
    await page.getByText('Where should I deploy?').waitFor();
    const form = page.getByRole('form', { name: 'Deploy request' });
    await form.getByLabel('Environment').selectOption('production');
    await form.getByLabel('Replicas').fill('two');
    await form.getByRole('button').click();
    await form.getByText('A whole number.').waitFor();
    await form.getByLabel('Replicas').fill('3');
    await form.getByRole('button').click();
    await hasText(page.getByTestId('task-state'), 'COMPLETED');
    const sent = agent.received.filter((m) => m.taskId).at(-1)!;
    // A fresh answer sends what is on screen, the unticked box included.
    expect(sent.message.parts).toEqual([{ data: { environment: 'production', replicas: 3, dryRun: false }, mediaType: 'application/json' }]);
  });

  it('reconnects a dropped live connection and catches up on what arrived meanwhile', async () => {
    const page = await newPage('sam', { live: 'droppable' });
    // Drop the connection only once the inbox's three subscriptions (requested, changed,
    // waiting for input) are registered on it.
    let subscribed = 0;
    page.on('websocket', (ws) => ws.on('framesent', (f) => void (String(f.payload).includes('"type":"subscribe"') && subscribed++)));
    await open(page, '/', 'Inbox');
    await page.getByTestId('inbox-empty').waitFor();
    await expect.poll(() => subscribed, { timeout: WAIT }).toBe(3);
    liveLink.refuse = true;
    await liveLink.route!.close({ code: 1001, reason: 'test: network down' });
    await page.getByText('Live updates disconnected').waitFor();
    const req = await ask('showcase');
    liveLink.refuse = false;
    await page.locator(`ul.inbox > li[data-id="${req.id}"][data-status="PENDING"]`).waitFor();
    await page.getByText('Live updates disconnected').waitFor({ state: 'detached' });
  });

  it('is served compressed: hashed assets in brotli cached for a year, index.html not cached', async () => {
    const page = await newPage('rita');
    const responses: import('playwright-core').Response[] = [];
    page.on('response', (r) => responses.push(r));
    await open(page, '/', 'Inbox');
    const script = responses.find((r) => /^\/assets\/index-[\w-]+\.js$/.test(new URL(r.url()).pathname))!;
    const headers = await script.allHeaders();
    expect(headers['content-encoding']).toBe('br');
    expect(headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(headers.vary).toBe('Accept-Encoding');
    const sent = (await script.request().sizes()).responseBodySize;
    const size = (await script.body()).length;
    console.log(`console script: ${size} bytes, ${sent} sent`);
    expect(sent).toBeLessThan(size / 3);
    const html = responses.find((r) => new URL(r.url()).pathname === '/')!;
    expect((await html.allHeaders())['cache-control']).toBe('no-cache');
  });

  it('fits a phone: inbox, approval page and confirmation without horizontal scrolling', async () => {
    await ask('rogue');
    const high = await ask('showcase');
    await scripted({ title: 'Rotate the build cache', risk: 'low', expiresInSeconds: 300 });
    const page = await newPage('rita', { width: 390, height: 844 });
    await open(page, '/', 'Inbox');
    await expect.poll(() => rowIds(page), { timeout: WAIT }).toHaveLength(3);
    await noHorizontalScroll(page);
    await shot(page, 'inbox-phone.png', false);
    await open(page, `/approvals/${high.id}`, 'Delete the staging cluster');
    await noHorizontalScroll(page);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await confirmBox(page).waitFor();
    await noHorizontalScroll(page);
    await shot(page, 'approval-confirm-phone.png', false);
  });

  it('an admin adds a webhook endpoint, copies its secret once, sends a test event and reads the attempt in the delivery log', async () => {
    // A receiver on loopback that keeps what it got; the test verifies it with the secret the page showed.
    const got: { headers: Record<string, string>; body: string }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204, { connection: 'close' }).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/taskbay`;
      const page = await newPage('rita');
      await open(page, '/', 'Inbox');
      await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await page.getByLabel('Endpoint URL').fill(url);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = (await page.getByRole('status', { name: 'New signing secret' }).locator('code').textContent())!;
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();

      const endpoint = page.getByRole('listitem', { name: `Webhook ${url}` });
      await endpoint.getByRole('button', { name: 'Send test event' }).click();
      await page.getByText('Test event queued').waitFor();
      await expect.poll(() => got.length, { timeout: WAIT }).toBe(1);
      expect(new Webhook(secret).verify(got[0]!.body, got[0]!.headers)).toMatchObject({ type: 'webhook.test' });
      await expect
        .poll(
          async () => {
            await endpoint.getByRole('button', { name: 'Refresh log' }).click();
            return endpoint.getByRole('table', { name: `Delivery log of ${url}` }).textContent();
          },
          { timeout: WAIT },
        )
        .toContain('DELIVERED');
      await endpoint.getByText(/^webhook\.test · /).click();
      await hasText(endpoint.getByRole('list', { name: 'Attempts' }), '204');
      await shot(page, 'webhooks.png');
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
