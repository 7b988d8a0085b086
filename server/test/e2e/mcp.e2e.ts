import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalSha256 } from '../../src/lib/hashing.js';
import { launchChromium } from '../support/chromium.js';
import { gqlData, sessionCookie, sessionPage } from '../support/console-session.js';
import { createMember, startTestInstance, type TestInstance } from '../support/harness.js';
import { connectWith, REQUEST_ID } from '../support/mcp.js';
import { type RunningUpstream, startServerEverything } from '../support/mcp-upstream.js';

// The MCP gateway in the console (issue 25), in Debian's Chromium (setup as console.e2e.ts): an
// admin registers an MCP server on the MCP servers page (a rule that does not compile is refused
// next to its field and nothing is saved), edits its rules; a tools/call held by the real gateway
// in front of @modelcontextprotocol/server-everything (on loopback) shows on its approval page as
// the tool, the server and the arguments, with whether the caller is waiting, on a desktop and a
// phone; approved in the page, it is forwarded once and the page says so with the result's digest.

const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;
const ADA = { email: 'ada@example.test', name: 'Ada Admin', role: 'ADMIN' };

let t: TestInstance;
let upstream: RunningUpstream;
let browser: Browser;
let cookie: string;
let member: { id: string; token: string };
let contexts: BrowserContext[] = [];
let clients: Client[] = [];

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

async function newPage(size: { width?: number; height?: number } = {}): Promise<Page> {
  const { context, page } = await sessionPage(browser, t, cookie, { timeout: WAIT, noDialogs: true, ...size });
  contexts.push(context);
  return page;
}

const servers = async () =>
  (await gql(`{ mcpServers { name url gatewayPath holdSeconds rules { condition outcome reason } } }`)).mcpServers as {
    name: string;
    url: string;
    gatewayPath: string;
    holdSeconds: number | null;
    rules: { condition: string; outcome: string; reason: string | null }[];
  }[];

const text = async (l: Locator) => (await l.innerText()).trim();
const noHorizontalScroll = async (page: Page) =>
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width);

/** "everything", as the first test registers it (echo passes; no rule matches get-sum, so it is held), when that test did not. */
async function ensureServer() {
  if ((await servers()).some((s) => s.name === 'everything')) return;
  await gql(
    `mutation($url: String!) { registerMcpServer(name: "everything", url: $url, rules: [{ condition: "mcp.tool == \\"echo\\"", outcome: PASS }]) { id } }`,
    {
      url: upstream.url,
    },
  );
}

/** An MCP client of the member's token on the gateway of `name`. */
async function gatewayClient(name: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${t.instance.url}/mcp/servers/${name}`), {
    requestInit: { headers: { authorization: `Bearer ${member.token}` } },
  });
  const client = await connectWith(transport, 'e2e-host');
  clients.push(client);
  return client;
}

/** A tools/call the gateway holds: its request id (from the first progress notification) and the call's eventual result. */
async function heldCall(client: Client, tool: string, args: Record<string, unknown>) {
  let heard!: (id: string) => void;
  const id = new Promise<string>((resolve) => (heard = resolve));
  const result = client.callTool({ name: tool, arguments: args }, undefined, {
    timeout: 120_000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => {
      const m = p.message?.match(REQUEST_ID)?.[1];
      if (m) heard(m);
    },
  });
  result.catch(() => {});
  return { id: await id, result };
}

/** The request's page shows the held get-sum call of "everything": the tool, the server, these arguments, and that its caller waits. */
async function showsHeldCall(page: Page, id: string, args: string[]) {
  await page.goto(`${t.instance.url}/approvals/${encodeURIComponent(id)}`);
  expect(await text(page.getByTestId('tool-call'))).toBe('Tool get-sum on MCP server everything');
  expect(await page.getByRole('tree', { name: 'Tool arguments' }).getByRole('treeitem').allInnerTexts()).toEqual(expect.arrayContaining(args));
  expect(await text(page.getByTestId('mcp-waiting'))).toBe('The caller is waiting');
}

/** get-sum of "everything" with these arguments, held by the gateway, and its page showing it (desktop). */
async function heldOnPage(args: { a: number; b: number }) {
  await ensureServer();
  const client = await gatewayClient('everything');
  const call = await heldCall(client, 'get-sum', args);
  const page = await newPage();
  await showsHeldCall(page, call.id, [`a: ${args.a}`, `b: ${args.b}`]);
  return { client, call, page };
}

beforeAll(async () => {
  upstream = await startServerEverything();
  t = await startTestInstance();
  await gql(`mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, { i: { ...ADA, password: PASSWORD } });
  cookie = await sessionCookie(t, ADA.email, PASSWORD);
  member = await createMember(t);
  browser = await launchChromium();
});

afterEach(async () => {
  for (const c of clients) await c.close().catch(() => {});
  clients = [];
  for (const c of contexts) await c.close().catch(() => {});
  contexts = [];
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await upstream?.stop();
});

describe('MCP servers in the console', () => {
  it('an admin registers a server: a bad condition is refused next to its field and nothing is saved; fixed, it is listed with its gateway URL; its rules are edited', async () => {
    const page = await newPage();
    await page.goto(`${t.instance.url}/`);
    await page.getByRole('navigation').getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers', level: 1 }).waitFor();
    await page.getByText('No MCP server registered yet.').waitFor();
    await page.getByText('No rule matching holds the call').first().waitFor();

    const form = page.getByRole('form', { name: 'Register an MCP server' });
    await form.getByLabel('Name').fill('everything');
    await form.getByLabel('Streamable HTTP URL').fill(upstream.url);
    await form.getByLabel('Hold time in seconds').fill('600');
    // Two rules, the bad one added second and moved first: the refusal names rules[0].
    await form.getByRole('button', { name: 'Add rule' }).click();
    await form.getByLabel('Condition of rule 1').fill('mcp.tool == "get-env"');
    await form.getByLabel('Outcome of rule 1').selectOption('REFUSE');
    await form.getByLabel('Reason of rule 1').fill('the environment holds secrets');
    await form.getByRole('button', { name: 'Add rule' }).click();
    await form.getByLabel('Condition of rule 2').fill('mcp.tool = "echo"');
    await form.getByLabel('Outcome of rule 2').selectOption('PASS');
    await form.getByRole('button', { name: 'Move rule 2 up' }).click();
    expect(await form.getByLabel('Condition of rule 1').inputValue()).toBe('mcp.tool = "echo"');
    await form.getByRole('button', { name: 'Register server' }).click();

    const condition = form.getByLabel('Condition of rule 1');
    const refusal = form.locator('li[data-rule="1"]').getByRole('alert');
    await refusal.waitFor();
    expect(await text(refusal)).toMatch(/^rules\[0\]\.condition: /);
    expect(await condition.getAttribute('aria-invalid')).toBe('true');
    expect(await condition.getAttribute('aria-describedby')).toBe(await refusal.getAttribute('id'));
    expect(await form.locator('li[data-rule="2"]').getByRole('alert').count()).toBe(0);
    expect(await servers()).toEqual([]);

    await condition.fill('mcp.tool == "echo"');
    await form.getByRole('button', { name: 'Register server' }).click();
    const card = page.getByRole('listitem', { name: 'MCP server everything' });
    await card.waitFor();
    expect(await text(card.getByTestId('gateway-url'))).toBe(`${t.instance.url}/mcp/servers/everything`);
    expect(await text(card.getByTestId('mcp-url'))).toBe(upstream.url);
    // Where the server is, and everything else of it, is text: no link anywhere on the card.
    expect(await card.locator('a').count()).toBe(0);
    await card.getByText('A held call waits up to 10m 0s for a decision.').waitFor();
    const listed = card.getByRole('list', { name: 'Call rules of everything' }).getByRole('listitem');
    expect(await listed.allInnerTexts()).toEqual(['mcp.tool == "echo" → pass', 'mcp.tool == "get-env" → refuse: the environment holds secrets']);
    expect(await servers()).toEqual([
      {
        name: 'everything',
        url: upstream.url,
        gatewayPath: '/mcp/servers/everything',
        holdSeconds: 600,
        rules: [
          { condition: 'mcp.tool == "echo"', outcome: 'PASS', reason: null },
          { condition: 'mcp.tool == "get-env"', outcome: 'REFUSE', reason: 'the environment holds secrets' },
        ],
      },
    ]);
    // The form is empty again for the next server.
    expect(await form.getByLabel('Name').inputValue()).toBe('');
    expect(await form.getByLabel('Condition of rule 1').count()).toBe(0);

    // Editing the rules: a bad condition is refused next to it and nothing is saved; then rule 2 is removed.
    await card.getByRole('button', { name: 'Edit rules' }).click();
    const edit = card.getByRole('form', { name: 'Edit the rules of everything' });
    await edit.getByLabel('Condition of rule 2').fill('mcp.tool == ');
    await edit.getByRole('button', { name: 'Save rules' }).click();
    await edit
      .locator('li[data-rule="2"]')
      .getByRole('alert')
      .getByText(/^rules\[1\]\.condition: /)
      .waitFor();
    expect((await servers())[0]!.rules).toHaveLength(2);
    await edit.getByRole('button', { name: 'Remove rule 2' }).click();
    expect(await edit.getByRole('alert').count()).toBe(0);
    await edit.getByRole('button', { name: 'Save rules' }).click();
    await edit.waitFor({ state: 'detached' });
    expect(await listed.allInnerTexts()).toEqual(['mcp.tool == "echo" → pass']);
    expect((await servers())[0]!.rules).toEqual([{ condition: 'mcp.tool == "echo"', outcome: 'PASS', reason: null }]);

    // The page fits a phone, the long gateway URL included.
    const phone = await newPage({ width: 390, height: 844 });
    await phone.goto(`${t.instance.url}/mcp-servers`);
    await phone.getByRole('listitem', { name: 'MCP server everything' }).getByTestId('gateway-url').waitFor();
    await noHorizontalScroll(phone);
  });

  it("a held tool call's page shows the tool, the server, the arguments and that the caller waits; approved there, it is forwarded once", async () => {
    const { call, page } = await heldOnPage({ a: 2, b: 3 });
    expect(await text(page.getByTestId('no-agent'))).toMatch(
      /^This request is from the MCP client e2e-host \(MCP\) of .+, on no task: the decision is the client's answer/,
    );
    // On a phone, the same, without horizontal scrolling.
    const phone = await newPage({ width: 390, height: 844 });
    await showsHeldCall(phone, call.id, ['a: 2', 'b: 3']);
    await noHorizontalScroll(phone);

    // Approved in the page: the caller gets the server's result, and the page says it was forwarded, with the result's digest.
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByTestId('confirm-decision').getByRole('button', { name: 'Approve revision 1' }).click();
    const result = await call.result;
    expect(JSON.stringify(result.content)).toContain('5');
    const digest = canonicalSha256(result);
    await page
      .getByTestId('mcp-outcome')
      .getByText(new RegExp(`^Forwarded to everything once, .*; its result has digest ${digest.slice(0, 16)}…$`))
      .waitFor();
    expect(await page.getByTestId('mcp-waiting').count()).toBe(0);
  });

  it('the caller gone while held: the page says it no longer waits and that approving forwards nothing until it calls again', async () => {
    const { client, page } = await heldOnPage({ a: 4, b: 4 });
    await client.close();
    // No event says so (a heartbeat, not an audit event): the page asks again every progress interval.
    await page
      .getByTestId('mcp-waiting')
      .getByText('The caller is no longer waiting: approving forwards nothing until it calls again')
      .waitFor({ timeout: 30_000 });
    expect(await text(page.getByTestId('approval-status'))).toBe('PENDING');
  });

  it("a server's tools show the rule that decides each, its held calls link to their requests, and removing it (on a phone) keeps its requests readable", async () => {
    await ensureServer();
    const client = await gatewayClient('everything');
    const call = await heldCall(client, 'get-sum', { a: 5, b: 6 });
    const page = await newPage({ width: 390, height: 844 });
    await page.goto(`${t.instance.url}/mcp-servers`);
    const card = page.getByRole('listitem', { name: 'MCP server everything' });
    await card.getByRole('button', { name: 'Show tools and recent calls' }).click();
    const tools = card.getByRole('list', { name: 'Tools of everything' });
    await tools.waitFor();
    expect(await text(tools.locator('[data-tool="echo"] .rule'))).toBe('passes (by rule 1)');
    expect(await text(tools.locator('[data-tool="get-sum"] .rule'))).toBe('held for a person (no rule matches)');
    const recent = card.getByRole('list', { name: 'Recent held calls of everything' });
    const link = recent.getByRole('link').first();
    expect(await link.getAttribute('href')).toBe(`/approvals/${encodeURIComponent(call.id)}`);
    expect(await text(recent.getByRole('listitem').first())).toMatch(/^get-sum .* · pending · /);
    await noHorizontalScroll(page);

    await card.getByRole('button', { name: 'Remove server' }).click();
    await card.getByRole('button', { name: 'Remove everything' }).click();
    await page.getByText('No MCP server registered yet.').waitFor();
    expect(await servers()).toEqual([]);
    // The held call's request is still there to read.
    await page.goto(`${t.instance.url}/approvals/${encodeURIComponent(call.id)}`);
    expect(await text(page.getByTestId('tool-call'))).toBe('Tool get-sum on MCP server everything');
  });
});
