import { type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { launchChromium } from '../support/chromium.js';
import { eventually, OPS, startTestInstance, type TestInstance, rawId } from '../support/harness.js';
import { createPolicy } from '../support/policies.js';
import { gqlData, sessionCookie, createPasswordUser, SessionPages } from '../support/console-session.js';
import { openAgentRequest } from '../support/fixture-agent.js';

// A 2-approval quorum in the console (issue 12, item 1; decisions/quorum.ts), in Debian's
// Chromium with two reviewers in two browser contexts (setup as console.e2e.ts): the first sees
// "1 of 2" live after approving, then the request turn APPROVED live when the second approves;
// the agent receives the approved message once. The request's quorum comes from a policy the
// admin created (createPolicy) whose condition matches its title, chosen when it opens.

const PASSWORD = 'correct horse battery staple';
const WAIT = 20_000;
const PEOPLE = {
  rita: { email: 'rita@example.test', name: 'Rita Reviewer', id: '', cookie: '' },
  sam: { email: 'sam@example.test', name: 'Sam Second', id: '', cookie: '' },
};
type Who = keyof typeof PEOPLE;

let t: TestInstance;
let agent: FixtureAgent;
let browser: Browser;
let scriptedId: string;

const gql = <T = any>(query: string, variables?: Record<string, unknown>) => gqlData<T>(t, query, variables);

const signInCookie = (who: Who) => sessionCookie(t, PEOPLE[who].email, PASSWORD);

const pages = new SessionPages(
  () => browser,
  () => t,
);
const newPage = (who: Who): Promise<Page> => pages.open(PEOPLE[who].cookie, { timeout: WAIT });

/** The scripted agent asks for approval of this request (medium risk: no digest to type). */
const scripted = (title: string) => openAgentRequest(t, scriptedId, { title, risk: 'medium', action: { kind: 'send_message', text: `Approved: ${title}` } });

beforeAll(async () => {
  t = await startTestInstance();
  for (const p of Object.values(PEOPLE)) {
    p.id = await createPasswordUser(t, { ...p, password: PASSWORD, role: 'ADMIN' });
  }
  PEOPLE.rita.cookie = await signInCookie('rita');
  PEOPLE.sam.cookie = await signInCookie('sam');
  agent = await startFixtureAgent({ port: 0, host: '127.0.0.1' });
  scriptedId = (await gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
  browser = await launchChromium();
});

afterEach(() => pages.closeAll());

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await t?.stop();
});

describe('a 2-approval quorum in the console', () => {
  it('two reviewers complete it: the first sees "1 of 2" live and cannot approve again, then APPROVED live; the agent receives the message once', async () => {
    await createPolicy(t, { name: 'two keys', condition: 'title == "Rotate the signing keys"', quorum: { approvals: 2 } });
    const req = await scripted('Rotate the signing keys');

    const rita = await newPage('rita');
    const sam = await newPage('sam');
    const ritaInbox = await newPage('rita');
    for (const p of [rita, sam]) {
      await p.goto(`${t.instance.url}/approvals/${req.id}`);
      await p.getByRole('heading', { name: 'Rotate the signing keys', level: 1 }).waitFor();
      await p.getByTestId('quorum-progress').getByText('0 of 2 approvals').waitFor();
    }
    await ritaInbox.goto(`${t.instance.url}/`);
    const row = ritaInbox.locator(`ul.inbox > li[data-id="${req.id}"]`);
    await row.getByTestId('quorum-badge').getByText('0 of 2 approvals').waitFor();

    // Rita approves: a vote, the request stays pending.
    await rita.getByRole('button', { name: 'Approve', exact: true }).click();
    await rita.getByTestId('confirm-decision').getByRole('button', { name: 'Approve revision 1' }).click();
    await rita
      .getByTestId('decision-result')
      .getByText(/approval counts toward the quorum; the request stays pending/)
      .waitFor();
    await rita.getByTestId('quorum-progress').getByText('1 of 2 approvals').waitFor();
    await rita
      .getByTestId('quorum-approvers')
      .getByText(/You approved/)
      .waitFor();
    expect(await rita.getByTestId('approval-status').innerText()).toBe('PENDING');
    // One say per revision: her Approve is disabled, with the reason.
    await rita
      .getByTestId('already-voted')
      .getByText(/You approved revision 1 \(1 of 2 approvals so far\)/)
      .waitFor();
    expect(await rita.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(true);
    expect(await rita.getByRole('button', { name: 'Approve', exact: true }).getAttribute('aria-describedby')).toBe('already-voted');

    // Sam, who did nothing, and the inbox see the vote live.
    await sam.getByTestId('quorum-progress').getByText('1 of 2 approvals').waitFor();
    await sam
      .getByTestId('quorum-approvers')
      .getByText(/Rita Reviewer approved/)
      .waitFor();
    await row.getByTestId('quorum-badge').getByText('1 of 2 approvals').waitFor();
    expect(await sam.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(false);
    expect(agent.received.filter((m) => (m.message.metadata as any)?.approval?.requestId === rawId(req.id))).toEqual([]);

    // Sam approves: the quorum is met; Rita's page turns APPROVED live.
    await sam.getByRole('button', { name: 'Approve', exact: true }).click();
    await sam.getByTestId('confirm-decision').getByRole('button', { name: 'Approve revision 1' }).click();
    await sam.getByTestId('decision-result').getByText('Approved.').waitFor();
    await rita.getByTestId('approval-status').getByText('APPROVED').waitFor();
    await rita.getByTestId('quorum-progress').getByText('2 of 2 approvals').waitFor();
    await rita.getByTestId('execution-status').getByText('DELIVERED').waitFor();

    const sent = await eventually(async () => {
      const got = agent.received.filter((m) => (m.message.metadata as any)?.approval?.requestId === rawId(req.id));
      return got.length ? got : null;
    });
    const final = (await gql(`query($id: ID!) { approval(id: $id) { decisions { id vote reviewer { id } } } }`, { id: req.id })).approval.decisions;
    expect(final.map((d: any) => [d.reviewer.id, d.vote])).toEqual([
      [PEOPLE.rita.id, true],
      [PEOPLE.sam.id, false],
    ]);
    expect(sent).toHaveLength(1);
    expect((sent[0]!.message.metadata as any).approval.decisionId).toBe(final[1].id);
    expect(sent[0]!.message.parts).toEqual([{ text: 'Approved: Rotate the signing keys' }]);
  });
});
