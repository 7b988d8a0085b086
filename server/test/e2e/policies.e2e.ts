import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { launchChromium } from '../support/chromium.js';
import { OPS, startTestInstance, type TestInstance } from '../support/harness.js';
import { gqlData, sessionCookie, createPasswordUser, SessionPages } from '../support/console-session.js';
import { firstLoadFiles } from '../../scripts/console-bytes.js';
import { WEB_DIST } from '../../src/http/console.js';

// Policies and groups in the console (issue 12, item 1; docs/POLICIES.md), in Debian's Chromium
// (setup as console.e2e.ts): an admin creates a reviewer group and a policy on the Groups and
// Policies pages; a request the deployer agent opens then shows "Policy: <name> (version 1)", the
// quorum panel and no Delegate or Edit (the policy leaves them out), and its escalation to the
// group appears live on the approval page and in the inbox.

const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;
const PEOPLE = {
  ada: { email: 'ada@example.test', name: 'Ada Admin', role: 'ADMIN', id: '', cookie: '' },
  rita: { email: 'rita@example.test', name: 'Rita Reviewer', role: 'MEMBER', id: '', cookie: '' },
  sam: { email: 'sam@example.test', name: 'Sam Second', role: 'MEMBER', id: '', cookie: '' },
};
type Who = keyof typeof PEOPLE;

let t: TestInstance;
let agent: FixtureAgent;
let browser: Browser;
let deployerId: string;

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

const signInCookie = (who: Who) => sessionCookie(t, PEOPLE[who].email, PASSWORD);

const pages = new SessionPages(
  () => browser,
  () => t,
);

// A native dialog (prompt, confirm) would block the page: none may appear.
const newPage = (who: Who): Promise<Page> => pages.open(PEOPLE[who].cookie, { timeout: WAIT, noDialogs: true });

/** The console's scripts a page fetches (paths under /assets/), each with the coding it came in. */
function scriptsFetched(page: Page): { path: string; coding: string | undefined }[] {
  const fetched: { path: string; coding: string | undefined }[] = [];
  page.on('response', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/assets/') && path.endsWith('.js')) fetched.push({ path, coding: r.headers()['content-encoding'] });
  });
  return fetched;
}

beforeAll(async () => {
  t = await startTestInstance();
  agent = await startFixtureAgent({ port: 0, host: '127.0.0.1' });
  deployerId = (await gql(OPS.register, { url: agent.cardUrl('deployer') })).registerAgent.id;
  for (const [who, p] of Object.entries(PEOPLE)) {
    p.id = await createPasswordUser(t, { ...p, password: PASSWORD });
    if (p.role === 'MEMBER') await gql(OPS.grant, { userId: p.id, agentId: deployerId, permission: 'OPERATE' });
    p.cookie = await signInCookie(who as Who);
  }
  browser = await launchChromium();
});

afterEach(() => pages.closeAll());

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('an admin defines a group and a policy in the console; a request shows them', () => {
  it('creates, fills and renames a group; creates a 2-approval escalating policy; the deployer request shows its policy, quorum and escalation live', async () => {
    const ada = await newPage('ada');

    // Groups page: create, add two members, rename (inline). It is its own chunk (web/src/App.tsx),
    // fetched when the page is first shown, precompressed like the rest.
    const adaScripts = scriptsFetched(ada);
    await ada.goto(`${t.instance.url}/groups`);
    await ada.getByRole('heading', { name: 'Reviewer groups', level: 1 }).waitFor();
    const pageChunk = (name: string) => adaScripts.filter((s) => new RegExp(`^/assets/${name}-[\\w-]+\\.js$`).test(s.path));
    expect(pageChunk('Groups')).toHaveLength(1);
    expect(['br', 'gzip']).toContain(pageChunk('Groups')[0]!.coding);
    expect(pageChunk('Policies')).toEqual([]);
    await ada.getByLabel('New group').fill('release managers');
    await ada.getByRole('button', { name: 'Create group' }).click();
    const group = ada.locator('li[data-group="release managers"]');
    await group.waitFor();
    for (const who of ['rita', 'sam'] as const) {
      const p = PEOPLE[who];
      await group.getByLabel('Add a member to release managers').selectOption({ label: `${p.name} <${p.email}>` });
      await group.getByRole('button', { name: 'Add member' }).click();
      await group.getByRole('list', { name: 'Members of release managers' }).getByText(p.name).waitFor();
    }
    await group.getByRole('button', { name: 'Rename' }).click();
    await group.getByLabel('New name').fill('release team');
    await group.getByRole('button', { name: 'Save name' }).click();
    const renamed = ada.locator('li[data-group="release team"]');
    await renamed.getByRole('list', { name: 'Members of release team' }).getByText('Sam Second').waitFor();
    const groups = (await gql(`{ reviewerGroups { id name members { id } } }`)).reviewerGroups;
    expect(groups).toHaveLength(1);
    expect(groups[0].name).toBe('release team');
    expect(groups[0].members.map((m: any) => m.id).sort()).toEqual([PEOPLE.rita.id, PEOPLE.sam.id].sort());

    // Policies page: a new policy for the deploy skill.
    await ada.goto(`${t.instance.url}/policies`);
    await ada.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
    expect(pageChunk('Policies')).toHaveLength(1);
    await ada.getByRole('button', { name: 'New policy' }).click();
    const form = ada.getByRole('form', { name: 'New policy' });
    await form.getByLabel('Name').fill('production deploys');
    await form.getByLabel('Condition (CEL; empty matches every request)').fill('skill == "deploy"');
    await form.getByLabel('edit and approve').uncheck();
    await form.getByLabel('Approvals needed').fill('2');
    await form.getByLabel('Escalate when undecided').check();
    await form.getByLabel('After (seconds)').fill('8');
    await form.getByLabel('Assign to group').selectOption({ label: 'release team' });
    await form.getByLabel('Raise risk to').selectOption({ label: 'critical' });
    await form.getByRole('button', { name: 'Create policy' }).click();
    const listed = ada.locator('li[data-policy="production deploys"]');
    await listed.getByRole('heading', { name: 'production deploys (version 1)' }).waitFor();
    await listed.locator('code').getByText('skill == "deploy"', { exact: true }).waitFor();
    const [policy] = (
      await gql(
        `{ policies { name currentVersion { version condition allowedOutcomes quorum { approvals } escalation { afterSeconds toGroup { name } raiseRiskTo } } } }`,
      )
    ).policies;
    expect(policy).toEqual({
      name: 'production deploys',
      currentVersion: {
        version: 1,
        condition: 'skill == "deploy"',
        // A quorum of two is never delegated (docs/POLICIES.md): the saved version leaves DELEGATE out.
        allowedOutcomes: ['APPROVE', 'REJECT', 'REQUEST_CHANGES'],
        quorum: { approvals: 2 },
        escalation: { afterSeconds: 8, toGroup: { name: 'release team' }, raiseRiskTo: 'CRITICAL' },
      },
    });

    // The deployer asks; Rita opens the request and her inbox before it escalates.
    const task = (await gql(OPS.startTask, { agentId: deployerId, skillId: 'deploy', text: 'approve' })).startTask;
    const req = (await gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges[0].node;
    const rita = await newPage('rita');
    const inbox = await newPage('rita');
    await rita.goto(`${t.instance.url}/approvals/${req.id}`);
    await rita.getByRole('heading', { name: 'Deploy checkout v2.4 to production', level: 1 }).waitFor();
    const inboxScripts = scriptsFetched(inbox);
    await inbox.goto(`${t.instance.url}/`);
    const row = inbox.locator(`ul.inbox > li[data-id="${req.id}"]`);
    await row.getByTestId('quorum-badge').getByText('0 of 2 approvals').waitFor();
    // The inbox fetched exactly the first load the bench counts (server/scripts/console-bytes.ts).
    const manifest = JSON.parse(readFileSync(join(WEB_DIST, '.vite/manifest.json'), 'utf8'));
    expect(inboxScripts.map((s) => s.path.slice(1)).sort()).toEqual(firstLoadFiles(manifest).sort());

    expect(await rita.getByTestId('policy').innerText()).toBe('Policy: production deploys (version 1)');
    await rita.getByTestId('quorum-progress').getByText('0 of 2 approvals').waitFor();
    // Not yet escalated: the page says when it will, and to whom.
    await rita
      .getByTestId('escalation')
      .getByText(/^Escalates to the release team group at .* if still undecided, raising the risk to critical/)
      .waitFor();
    expect(await row.getByTestId('escalated').count()).toBe(0);
    // The policy's outcomes: no edit-then-approve, and no delegation on a quorum request.
    await rita.getByRole('button', { name: 'Approve', exact: true }).waitFor();
    expect(await rita.locator('button[data-option="edit_and_approve"]').count()).toBe(0);
    expect(await rita.getByRole('button', { name: 'Delegate' }).count()).toBe(0);

    // Sam approves (with an API token): a vote; Rita's page and inbox show "1 of 2" live.
    const samToken = (await gql(OPS.createToken, { userId: PEOPLE.sam.id, label: 'e2e' })).createApiToken.token;
    const vote = await t.gql(OPS.approve, { id: req.id, revision: req.revision, digest: req.digest }, samToken);
    expect(vote.errors).toBeUndefined();
    await rita.getByTestId('quorum-progress').getByText('1 of 2 approvals').waitFor();
    await rita
      .getByTestId('quorum-approvers')
      .getByText(/Sam Second approved/)
      .waitFor();
    await row.getByTestId('quorum-badge').getByText('1 of 2 approvals').waitFor();

    // It escalates: both pages change in place.
    await rita
      .getByTestId('escalation')
      .getByText(/^Escalated to the release team group at .* · risk raised from high to critical · only members of release team \(or admins\) decide it/)
      .waitFor();
    await row
      .getByTestId('escalated')
      .getByText(/escalated to the release team group at .* \(risk raised from high\)/)
      .waitFor();
    expect(await rita.getByTestId('approval-status').innerText()).toBe('PENDING');
  }, 60_000);
});
