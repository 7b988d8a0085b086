import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { launchChromium } from '../support/chromium.js';
import { createPasswordUser, gqlData, sessionCookie } from '../support/console-session.js';
import { askingForApproval } from '../support/fixture-agent.js';
import { OPS, startTestInstance, type TestInstance } from '../support/harness.js';

// A reviewer's day in the console (issue 26, items 1-3), in Debian's Chromium (set-up as
// console.e2e.ts): the exact action in every confirmation, the reviewer's place kept through
// decisions and back, results beside their controls, and what cannot be done said before the
// ritual (no OPERATE, delegated elsewhere, superseded while confirming, offline). One behaviour
// per test; each leaves no pending request behind.

const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;

type Who = 'rita' | 'sam' | 'mia' | 'vic';
const PEOPLE: Record<Who, { email: string; name: string; role: 'ADMIN' | 'MEMBER'; grant?: 'OPERATE' | 'VIEW'; id?: string; cookie?: string }> = {
  rita: { email: 'rita@example.test', name: 'Rita Reviewer', role: 'ADMIN' },
  sam: { email: 'sam@example.test', name: 'Sam Second', role: 'ADMIN' },
  mia: { email: 'mia@example.test', name: 'Mia Member', role: 'MEMBER', grant: 'OPERATE' },
  vic: { email: 'vic@example.test', name: 'Vic Viewer', role: 'MEMBER', grant: 'VIEW' },
};

let t: TestInstance;
let agent: FixtureAgent;
let browser: Browser;
let scriptedId: string;
let contexts: BrowserContext[] = [];

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

type Request = { id: string; title: string; revision: number; digest: string; status: string; task: { id: string } };

/** The scripted agent asks for this request; returns it with its task. */
async function scripted(request: { title: string; risk: string; action?: unknown }): Promise<Request> {
  const data = { action: { kind: 'send_message', text: `Approved: ${request.title}` }, ...request };
  const task = (await gql(OPS.startTask, { agentId: scriptedId, data: askingForApproval(data) })).startTask;
  const r = await gql(`query($t: ID!) { approvals(taskId: $t, first: 1) { edges { node { id title revision digest status task { id } } } } }`, { t: task.id });
  return r.approvals.edges[0].node;
}

const statusOf = async (id: string) =>
  (await gql<{ approval: { status: string; decisions: unknown[] } }>(`query($id: ID!) { approval(id: $id) { status decisions { id } } }`, { id })).approval;

/** A page in a new browser context signed in as `who`; `live: 'blocked'` never opens its live connection (a stale view). */
async function newPage(who: Who, opts: { live?: 'blocked' } = {}): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(ctx);
  await ctx.addCookies([{ name: 'taskbay_session', value: PEOPLE[who].cookie!, url: t.instance.url, httpOnly: true, sameSite: 'Lax' }]);
  if (opts.live === 'blocked') await ctx.routeWebSocket(/\/graphql/, () => {});
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT);
  return page;
}

async function open(page: Page, path: string, heading: string) {
  await page.goto(t.instance.url + path);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

const row = (page: Page, a: { id: string }) => page.locator(`ul.inbox > li[data-id="${a.id}"]`);
const rowIds = (page: Page) => page.locator('ul.inbox > li').evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? ''));
const confirmBox = (page: Page) => page.getByTestId('confirm-decision');
const hasText = (loc: Locator, text: string | RegExp) => loc.filter({ hasText: text }).first().waitFor();

/** The selected row, the row marked current and the focused row. */
const selection = (page: Page) =>
  page.evaluate(() => ({
    selected: [...document.querySelectorAll('ul.inbox > li.selected')].map((e) => e.getAttribute('data-id')),
    focused: document.activeElement?.closest('ul.inbox > li')?.getAttribute('data-id') ?? null,
  }));
const only = (id: string) => ({ selected: [id], focused: id });

/** What has the focus: its tag and text (never the body, when focus is managed). */
const focused = (page: Page) =>
  page.evaluate(() => ({ tag: document.activeElement?.tagName ?? null, text: document.activeElement?.textContent?.trim() ?? '' }));

beforeAll(async () => {
  t = await startTestInstance();
  agent = await startFixtureAgent({ port: 0, host: '127.0.0.1' });
  scriptedId = (await gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
  for (const p of Object.values(PEOPLE)) {
    p.id = await createPasswordUser(t, { ...p, password: PASSWORD });
    if (p.grant) await gql(OPS.grant, { userId: p.id, agentId: scriptedId, permission: p.grant });
    p.cookie = await sessionCookie(t, p.email, PASSWORD);
  }
  browser = await launchChromium();
});

afterEach(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  contexts = [];
  const r = await gql(`{ approvals(first: 100, status: [PENDING]) { edges { node { id revision digest } } } }`);
  for (const { node } of r.approvals.edges) await t.gql(OPS.reject, { id: node.id, revision: node.revision, digest: node.digest, comment: 'test cleanup' });
});

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe("a reviewer's day in the console", () => {
  it('the keyboard confirmation shows the exact action next to the digest, clipped with a way to see all; the row previews it; a pasted digest confirms', async () => {
    const lines = Array.from({ length: 14 }, (_, i) => `step ${i + 1}: drain node-${i + 1} and restart it`);
    const req = await scripted({ title: 'Restart the fleet', risk: 'critical', action: { kind: 'send_message', text: lines.join('\n') } });
    const page = await newPage('rita');
    await open(page, '/', 'Inbox');

    // The row: the action in one line.
    const preview = row(page, req).getByTestId('row-preview');
    await hasText(preview, 'Message: step 1: drain node-1 and restart it step 2: drain node-2');
    const previewText = await preview.innerText();
    expect(previewText).not.toContain('\n');
    expect(previewText.length).toBeLessThanOrEqual(140);
    expect(previewText.endsWith('…')).toBe(true);

    // `a` on a critical request: the digest and, beside it, the action (clipped).
    await page.keyboard.press('j');
    await page.keyboard.press('a');
    const box = confirmBox(page);
    expect(await box.getByTestId('confirm-digest').innerText()).toBe(req.digest);
    const action = box.getByTestId('confirm-action');
    expect(await action.getAttribute('data-clipped')).toBe('true');
    const clipped = await action.innerText();
    expect(clipped.startsWith(`Send this message to the agent:\n${lines.slice(0, 7).join('\n')}`)).toBe(true);
    expect(clipped).not.toContain('step 14');
    // The action is the entry right after the digest in the confirmation's facts.
    expect(await box.locator('dl.confirm-facts > dt').allInnerTexts()).toEqual(['Risk', 'Revision', 'Digest', 'Action']);
    await box.getByRole('button', { name: 'Show all of the action (15 lines)' }).click();
    expect(await action.innerText()).toBe(`Send this message to the agent:\n${lines.join('\n')}`);

    // The whole digest pasted where its first characters are asked for confirms too.
    const go = box.getByRole('button', { name: 'Approve revision 1' });
    expect(await go.isDisabled()).toBe(true);
    await box.getByLabel(/Type the first 6 characters of the digest/).fill(req.digest);
    expect(await go.isEnabled()).toBe(true);
    await go.click();
    await hasText(row(page, req).getByTestId('row-result'), 'Approved “Restart the fleet” (revision 1).');
    expect((await statusOf(req.id)).status).toBe('APPROVED');
  });

  it('decide then `j` reaches the next request: the decided row keeps its place, the next is selected; filters and selection live in the URL and come back with back', async () => {
    const one = await scripted({ title: 'Tag release 2.1', risk: 'medium' });
    const two = await scripted({ title: 'Tag release 2.2', risk: 'medium' });
    const three = await scripted({ title: 'Tag release 2.3', risk: 'medium' });
    const low = await scripted({ title: 'Rotate the build cache', risk: 'low' });
    const page = await newPage('rita');
    await open(page, '/', 'Inbox');
    await expect.poll(() => rowIds(page), { timeout: WAIT }).toEqual([one.id, two.id, three.id, low.id]);

    // A filter: in the URL.
    await page.getByRole('button', { name: /medium$/ }).click();
    await expect.poll(() => rowIds(page)).toEqual([one.id, two.id, three.id]);
    expect(new URL(page.url()).searchParams.get('risk')).toBe('MEDIUM');

    // Approve the first from the keyboard: its result in its row, which stays where it was; the next is selected.
    await page.keyboard.press('j');
    expect(await selection(page)).toEqual(only(one.id));
    await page.keyboard.press('a');
    await confirmBox(page).waitFor();
    await page.keyboard.press('y');
    await hasText(row(page, one).getByTestId('row-result'), 'Approved “Tag release 2.1” (revision 1).');
    await row(page, one).and(page.locator('[data-status="APPROVED"]')).waitFor();
    await expect.poll(() => selection(page)).toEqual(only(two.id));
    expect(await rowIds(page)).toEqual([one.id, two.id, three.id]);
    await page.keyboard.press('j');
    expect(await selection(page)).toEqual(only(three.id));
    expect(new URL(page.url()).searchParams.get('sel')).toBe(three.id);

    // Open it: the focus is on the new page's heading; back restores filter, selection and focus.
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tag release 2.3', level: 1 }).waitFor();
    await expect.poll(() => focused(page)).toEqual({ tag: 'H1', text: 'Tag release 2.3' });
    await page.goBack();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: /medium$/ }).getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => selection(page)).toEqual(only(three.id));

    // The approval page has the keys too: k walks the inbox's order, a asks, Escape gives the focus back to the button, u returns to the inbox.
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tag release 2.3', level: 1 }).waitFor();
    await page.keyboard.press('k');
    await page.getByRole('heading', { name: 'Tag release 2.2', level: 1 }).waitFor();
    await page.keyboard.press('a');
    await hasText(confirmBox(page), 'Approve “Tag release 2.2”?');
    await page.keyboard.press('Escape');
    await confirmBox(page).waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toEqual({ tag: 'BUTTON', text: '● Approve' });
    await page.keyboard.press('u');
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    await expect.poll(() => selection(page)).toEqual(only(two.id));
    expect(new URL(page.url()).searchParams.get('risk')).toBe('MEDIUM');
  });

  it('a refusal is shown next to its button, in view and focused; then the buttons are disabled with the reason', async () => {
    const req = await scripted({ title: 'Scale the workers to 12', risk: 'medium' });
    // Mia (OPERATE) has the page open without live updates while an admin delegates it to Sam.
    const page = await newPage('mia', { live: 'blocked' });
    await open(page, `/approvals/${req.id}`, 'Scale the workers to 12');
    await gql(OPS.delegate, { id: req.id, revision: req.revision, digest: req.digest, to: PEOPLE.sam.id });

    const approve = page.getByRole('button', { name: 'Approve', exact: true });
    await approve.click();
    await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).click();
    const refusal = page.getByTestId('decision-result');
    await hasText(refusal, 'Refused (FORBIDDEN): this request is delegated to someone else');
    // Right below the buttons of the decision panel, within the window, with the focus.
    const where = await page.evaluate(() => {
      const r = document.querySelector('[data-testid="decision-result"]')!;
      const buttons = document.querySelector('section.decide .decide-buttons')!;
      return {
        inPanel: !!r.closest('section.decide'),
        gap: r.getBoundingClientRect().top - buttons.getBoundingClientRect().bottom,
        top: r.getBoundingClientRect().top,
        bottom: r.getBoundingClientRect().bottom,
        height: innerHeight,
        focused: document.activeElement === r,
      };
    });
    expect(where.inPanel).toBe(true);
    expect(where.gap).toBeGreaterThanOrEqual(0);
    expect(where.gap).toBeLessThan(60);
    expect(where.top).toBeGreaterThanOrEqual(0);
    expect(where.bottom).toBeLessThanOrEqual(where.height);
    expect(where.focused).toBe(true);

    // The page read the request again: what she cannot use is disabled, and says why.
    await hasText(page.getByTestId('decide-blocked'), 'You cannot decide this request: this request is delegated to someone else.');
    expect(await approve.isDisabled()).toBe(true);
    expect(await approve.getAttribute('aria-describedby')).toBe('decide-blocked');
    expect((await statusOf(req.id)).status).toBe('PENDING');
  });

  it('says what cannot be done before the ritual: no OPERATE disables the buttons with the reason and `a` says it; delegate offers only people who can decide', async () => {
    const req = await scripted({ title: 'Purge the CDN cache', risk: 'high' });
    const vic = await newPage('vic');
    await open(vic, `/approvals/${req.id}`, 'Purge the CDN cache');
    await hasText(vic.getByTestId('decide-blocked'), 'You cannot decide this request: you need OPERATE on this agent to decide.');
    for (const name of ['Approve', 'Reject', 'Request changes', 'Edit then approve']) {
      expect(await vic.getByRole('button', { name, exact: true }).isDisabled(), name).toBe(true);
    }
    await vic.keyboard.press('a');
    expect(await confirmBox(vic).count()).toBe(0);

    await open(vic, '/', 'Inbox');
    await row(vic, req).waitFor();
    await vic.keyboard.press('j');
    await hasText(row(vic, req).getByTestId('row-cannot-decide'), 'You cannot decide this: you need OPERATE on this agent to decide.');
    await vic.keyboard.press('a');
    await hasText(row(vic, req).getByTestId('row-result'), 'You cannot decide this: you need OPERATE on this agent to decide.');
    expect(await confirmBox(vic).count()).toBe(0);

    const rita = await newPage('rita');
    await open(rita, `/approvals/${req.id}`, 'Purge the CDN cache');
    await rita.getByRole('button', { name: 'Delegate' }).click();
    const select = rita.getByLabel(/Delegate to/);
    await hasText(select, PEOPLE.sam.name);
    // Sam (admin) and Mia (OPERATE), not Vic (VIEW only), nor Rita herself.
    const offered = (await select.locator('option').allInnerTexts()).slice(1);
    expect(offered).toEqual(expect.arrayContaining([`${PEOPLE.mia.name} <${PEOPLE.mia.email}>`, `${PEOPLE.sam.name} <${PEOPLE.sam.email}>`]));
    expect(offered.filter((o) => o.includes(PEOPLE.vic.email) || o.includes(PEOPLE.rita.email))).toEqual([]);
  });

  it('a request superseded while confirming says so in place, in the approval page and in the inbox, and decides nothing', async () => {
    const old = await scripted({ title: 'Deploy 3.0 to staging', risk: 'medium', action: { kind: 'send_message', text: 'Deploy 3.0 to staging.' } });
    const page = await newPage('rita');
    const inbox = await newPage('sam');
    await open(page, `/approvals/${old.id}`, 'Deploy 3.0 to staging');
    await page.keyboard.press('a');
    await hasText(confirmBox(page), 'Approve “Deploy 3.0 to staging”?');
    await open(inbox, '/', 'Inbox');
    await row(inbox, old).waitFor();
    await inbox.keyboard.press('j');
    await inbox.keyboard.press('a');
    await confirmBox(inbox).waitFor();

    // The agent replaces the request.
    const reply = {
      state: 'TASK_STATE_INPUT_REQUIRED',
      parts: [
        { text: 'Changed my mind.' },
        {
          data: { title: 'Deploy 3.1 to staging', risk: 'medium', action: { kind: 'send_message', text: 'Deploy 3.1 to staging.' } },
          mediaType: MEDIA_TYPE.approvalRequest,
        },
      ],
    };
    await gql(`mutation($t: ID!, $d: JSON) { sendTaskMessage(input: { taskId: $t, data: $d }) { id } }`, { t: old.task.id, d: { reply } });

    const said = confirmBox(page).getByTestId('confirm-changed');
    await hasText(said, 'This request was superseded while you were confirming: its agent replaced it with “Deploy 3.1 to staging”. Nothing was decided.');
    expect(await confirmBox(page).getByRole('button', { name: 'Approve revision 1' }).isDisabled()).toBe(true);
    expect(await confirmBox(page).getByTestId('confirm-action').innerText()).toBe('Send this message to the agent:\nDeploy 3.0 to staging.');
    await expect.poll(() => focused(page)).toEqual({ tag: 'BUTTON', text: 'Close' });

    const inRow = row(inbox, old).getByTestId('confirm-changed');
    await hasText(inRow, '“Deploy 3.0 to staging” was superseded while you were confirming');
    expect(await row(inbox, old).getByRole('button', { name: 'Approve revision 1' }).isDisabled()).toBe(true);
    await inbox.keyboard.press('y'); // nothing happens

    // The link leads to the newer request; closing leaves the focus on the page, not the body.
    expect(await said.getByRole('link', { name: '“Deploy 3.1 to staging”' }).count()).toBe(1);
    await confirmBox(page).getByRole('button', { name: 'Close' }).click();
    await confirmBox(page).waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toEqual({ tag: 'H2', text: 'Decision' });
    const now = await statusOf(old.id);
    expect(now.status).toBe('SUPERSEDED');
    expect(now.decisions).toEqual([]);
  });

  it('offline then online: a banner and disabled decisions while the connection is down, caught up on return', async () => {
    const first = await scripted({ title: 'Renew the TLS certificate', risk: 'medium' });
    const inbox = await newPage('rita');
    const ctx = inbox.context();
    const approvalPage = await ctx.newPage();
    approvalPage.setDefaultTimeout(WAIT);
    await open(inbox, '/', 'Inbox');
    await row(inbox, first).waitFor();
    await open(approvalPage, `/approvals/${first.id}`, 'Renew the TLS certificate');
    const approve = approvalPage.getByRole('button', { name: 'Approve', exact: true });
    expect(await approve.isEnabled()).toBe(true);

    await ctx.setOffline(true);
    for (const p of [inbox, approvalPage]) await hasText(p.getByTestId('connection-banner'), 'You are offline.');
    await hasText(approvalPage.getByTestId('decide-blocked'), 'You are offline: decisions are disabled until the connection is back.');
    expect(await approve.isDisabled()).toBe(true);
    await inbox.keyboard.press('j');
    await inbox.keyboard.press('a');
    await hasText(row(inbox, first).getByTestId('row-result'), 'You are offline: decisions are disabled until the connection is back.');
    expect(await confirmBox(inbox).count()).toBe(0);

    // Meanwhile: someone else approves it, and a new request arrives.
    await gql(OPS.approve, { id: first.id, revision: first.revision, digest: first.digest });
    const second = await scripted({ title: 'Rotate the API keys', risk: 'medium' });

    await ctx.setOffline(false);
    for (const p of [inbox, approvalPage]) await p.getByTestId('connection-banner').waitFor({ state: 'detached' });
    await approvalPage.getByTestId('approval-status').getByText('APPROVED').waitFor();
    await row(inbox, first).and(inbox.locator('[data-status="APPROVED"]')).waitFor();
    await row(inbox, second).and(inbox.locator('[data-status="PENDING"]')).waitFor();
  });
});
