import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { seriousViolations } from '../support/axe.js';
import { launchChromium } from '../support/chromium.js';
import { createPasswordUser, gqlData, sessionCookie, SessionPages } from '../support/console-session.js';
import { askingForApproval } from '../support/fixture-agent.js';
import { OPS, startTestInstance, type TestInstance } from '../support/harness.js';

// Accessibility of every console page (issue 26 item 6), in Debian's Chromium (set-up as
// console.e2e.ts): axe-core injected into the page (support/axe.ts) finds no serious or critical
// violation on the sign-in and set-password pages, the inbox with open and closed rows, approval
// pages (a JSON tree, a tool call, a revision's diff, a confirmation open), a task, and each
// admin page; each inbox row is one tab stop.

const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;
const ADA = { email: 'ada@example.test', name: 'Ada Admin', role: 'ADMIN' };

let t: TestInstance;
let agent: FixtureAgent;
let browser: Browser;
let cookie: string;
let scriptedId: string;
const pages = new SessionPages(
  () => browser,
  () => t,
);

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

type Request = { id: string; title: string; revision: number; digest: string; task: { id: string } };

/** The scripted agent asks for this request. */
async function scripted(request: { title: string; risk: string; action?: unknown }): Promise<Request> {
  const data = { action: { kind: 'send_message', text: `Approved: ${request.title}` }, ...request };
  const task = (await gql(OPS.startTask, { agentId: scriptedId, data: askingForApproval(data) })).startTask;
  const r = await gql(`query($t: ID!) { approvals(taskId: $t, first: 1) { edges { node { id title revision digest task { id } } } } }`, { t: task.id });
  return r.approvals.edges[0].node;
}

/** Opens the path and waits for the page's main heading. */
async function open(page: Page, path: string, heading: string | RegExp) {
  await page.goto(t.instance.url + path);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

/** No serious or critical axe violation on the page as shown (the list printed when there is one). */
async function accessible(page: Page, what: string) {
  const found = await seriousViolations(page);
  expect(found, `${what}: ${JSON.stringify(found, null, 2)}`).toEqual([]);
}

const admin = () => pages.open(cookie, { timeout: WAIT, noDialogs: true });

beforeAll(async () => {
  t = await startTestInstance();
  agent = await startFixtureAgent({ port: 0, host: '127.0.0.1' });
  scriptedId = (await gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
  await createPasswordUser(t, { ...ADA, password: PASSWORD });
  cookie = await sessionCookie(t, ADA.email, PASSWORD);
  browser = await launchChromium();
});

afterEach(() => pages.closeAll());

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('accessibility (axe-core, serious and critical)', () => {
  it('the sign-in page and the set-password page of a one-time link', async () => {
    const out = await pages.open(null, { timeout: WAIT, noDialogs: true });
    await out.goto(`${t.instance.url}/`);
    await out.getByRole('form', { name: 'Sign in' }).waitFor();
    await accessible(out, 'sign-in');

    const nopass = (
      await gql(`mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, { i: { email: 'nopass@example.test', name: 'No Password', role: 'MEMBER' } })
    ).createUser.id;
    const link: string = (await gql(`mutation($u: ID!) { createSignInLink(userId: $u) { url } }`, { u: nopass })).createSignInLink.url;
    const person = await pages.open(null, { timeout: WAIT, noDialogs: true });
    await person.goto(t.instance.url + link.slice(link.indexOf('/set-password')));
    await person.getByText('For No Password (nopass@example.test).').waitFor();
    await accessible(person, 'set-password');
  });

  it('the inbox with open and closed rows, each row one tab stop; an open quick confirmation', async () => {
    const open1 = await scripted({ title: 'Rotate the build cache', risk: 'low' });
    const open2 = await scripted({
      title: 'Restart the fleet',
      risk: 'critical',
      action: { kind: 'send_message', text: 'Restart.', data: { nodes: [1, 2, 3] } },
    });
    const closed1 = await scripted({ title: 'Drop the orders table', risk: 'high' });
    const closed2 = await scripted({ title: 'Tag release 2.3', risk: 'medium' });
    await gql(OPS.approve, { id: closed1.id, revision: closed1.revision, digest: closed1.digest });
    await gql(OPS.reject, { id: closed2.id, revision: closed2.revision, digest: closed2.digest, comment: 'not now' });
    const page = await admin();
    await open(page, '/?status=', 'Inbox');
    for (const r of [open1, open2, closed1, closed2]) await page.locator(`ul.inbox > li[data-id="${r.id}"]`).waitFor();
    expect(await page.locator('ul.inbox > li.closed').count()).toBe(2);
    await accessible(page, 'inbox, open and closed rows');

    // Each row is one tab stop: from a row, Tab and Shift+Tab leave it, and no element inside a row is reachable by Tab.
    expect(
      await page
        .locator('ul.inbox > li [tabindex]:not([tabindex="-1"]), ul.inbox > li a[href]:not([tabindex="-1"]), ul.inbox > li button:not([tabindex="-1"])')
        .count(),
    ).toBe(0);
    const first = page.locator('ul.inbox > li').first();
    await first.focus();
    const inRow = () => page.evaluate(() => document.activeElement?.closest('ul.inbox > li')?.getAttribute('data-id') ?? null);
    const firstId = await first.getAttribute('data-id');
    expect(await inRow()).toBe(firstId);
    await page.keyboard.press('Tab');
    expect(await inRow()).not.toBe(firstId);
    await first.focus();
    await page.keyboard.press('Shift+Tab');
    expect(await inRow()).not.toBe(firstId);
    // Arrow keys move between rows as j/k do, the focus with the selection.
    await first.focus();
    await page.keyboard.press('ArrowDown');
    const secondId = await page.locator('ul.inbox > li').nth(1).getAttribute('data-id');
    await expect.poll(inRow).toBe(secondId);

    // A quick confirmation open on a pending row (the exact action beside the digest).
    await page.locator(`ul.inbox > li[data-id="${open2.id}"]`).focus();
    await page.keyboard.press('a');
    await page.getByTestId('confirm-decision').waitFor();
    await accessible(page, 'inbox, quick confirmation open');
    await page.keyboard.press('Escape');
    await page.getByTestId('confirm-decision').waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement !== document.body)).toBe(true);
  });

  it('approval pages: a message with a JSON tree, a tool call, a revision diff after edit then approve, a confirmation open', async () => {
    const data = await scripted({
      title: 'Scale the staging cluster',
      risk: 'high',
      action: { kind: 'send_message', text: 'Scale staging.', data: { cluster: 'staging', nodes: 5, zones: ['a', 'b'], options: { drain: true, note: null } } },
    });
    const page = await admin();
    await open(page, `/approvals/${data.id}`, 'Scale the staging cluster');
    await page.getByRole('list', { name: 'Message data' }).waitFor();
    await accessible(page, 'approval, message with data');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByTestId('confirm-decision').waitFor();
    await accessible(page, 'approval, confirmation open');
    await page.keyboard.press('Escape');
    await page.getByTestId('confirm-decision').waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement !== document.body)).toBe(true);

    // Edit then approve: the page shows the revisions and their diff.
    await gql(OPS.editAndApprove, {
      id: data.id,
      revision: data.revision,
      digest: data.digest,
      action: {
        kind: 'send_message',
        text: 'Scale staging, keep the backups.',
        data: { cluster: 'staging', nodes: 4, zones: ['a', 'b'], options: { drain: true, note: null } },
      },
    });
    await page.reload();
    await page.locator('.revisions .diff .d-add').first().waitFor();
    await accessible(page, 'approval, edited and approved, revision diff');

    const call = await scripted({
      title: 'Call get-sum',
      risk: 'medium',
      action: { kind: 'send_message', text: 'Call the tool "get-sum"', data: { server: 'everything', tool: 'get-sum', arguments: { a: 2, b: 3 } } },
    });
    await open(page, `/approvals/${call.id}`, 'Call get-sum');
    await page.getByTestId('tool-call').waitFor();
    await accessible(page, 'approval, tool call');
  });

  it('tasks, a task, agents, people, groups, policies, webhooks, MCP servers, not found', async () => {
    const req = await scripted({ title: 'Send the report', risk: 'low' });
    await gql(`mutation($i: CreateReviewerGroupInput!) { createReviewerGroup(input: $i) { id } }`, { i: { name: 'release team' } });
    await gql(`mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { id } }`, { i: { name: 'production deploys', condition: 'risk == "high"' } });
    await gql(`mutation($url: String!) { createWebhookEndpoint(input: { url: $url, eventTypes: [APPROVAL_REQUESTED] }) { secret } }`, {
      url: 'http://127.0.0.1:9/hook',
    }).catch(() => {}); // a webhook the network policy refuses: the page is checked with none
    await gql(`mutation($url: String!) { registerMcpServer(name: "everything", url: $url) { id } }`, { url: 'http://127.0.0.1:9/mcp' }).catch(() => {});
    const page = await admin();
    const visits: [string, string | RegExp][] = [
      ['/tasks', 'Tasks'],
      [`/tasks/${req.task.id}`, /Task with/],
      ['/agents', 'Agents'],
      ['/people', 'People'],
      ['/groups', /groups/i],
      ['/policies', /Policies/],
      ['/webhooks', /Webhooks/],
      ['/mcp-servers', 'MCP servers'],
    ];
    for (const [path, heading] of visits) {
      await open(page, path, heading);
      await page.locator('.loading').first().waitFor({ state: 'detached' });
      await accessible(page, path);
    }
    // Navigation within the console leaves the focus on the new page, never the body.
    await page.getByRole('navigation').getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await page.goto(`${t.instance.url}/no-such-page`);
    await page.getByText('Not found.').waitFor();
    await accessible(page, 'not found');
  });
});
