import { print } from 'graphql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InboxDocument, InboxItemFragmentDoc, InboxRowFragmentDoc } from '../../../../web/src/gql/graphql.js';
import { appendEvents, stream, type AuditEventInput } from '../../../src/audit/log.js';
import { isEventListenerConnection } from '../../../src/events/listener.js';
import { DEFAULT_POLICY } from '../../../src/policies/snapshot.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { createMember, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';

// Issue 11: "inbox >= 0.25 of { __typename } at 30,000 approvals, with or without a filter
// (indexes for the orders the console uses); constant statements per request." At 30,000
// approvals, each list query the console sends (its Inbox document under each filter it offers,
// the task page's, the next page) is planned as a scan of an index in the list's order that stops
// after the page, never a sort of the tenant's approvals (EXPLAIN of the very statement the
// server sent, with its parameters). And a page costs the same statements whatever it holds.

const APPROVALS = 30_000;
const INBOX = print(InboxDocument);
/** The inbox's own selection (its item and row fragments), with the page size as a variable. */
const SIZED = `query($first: Int, $status: [ApprovalStatus!]) { approvals(first: $first, status: $status) { edges { node { id ...InboxItem ...InboxRow } } } agents { id name } }
${print(InboxItemFragmentDoc)}
${print(InboxRowFragmentDoc)}`;

let t: TestInstance;
let agent: FixtureAgent;
let agentGid: string;
let taskGid: string;
let recording = false;
let statements: { text: string; values: unknown[] }[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  agent = await startFixtureAgent();
  // No job worker and no LISTEN loop reads in the count: only the request's statements.
  t = await startTestInstance({ worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } });
  const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
  expect(reg.errors).toBeUndefined();
  agentGid = reg.data.registerAgent.id;
  const tasks: string[] = [];
  for (let i = 0; i < 3; i++) {
    const st = await t.gql(OPS.startTask, { agentId: agentGid, text: 'approve' });
    expect(st.errors).toBeUndefined();
    tasks.push(st.data.startTask.id);
  }
  taskGid = tasks[0]!;
  const [admin] = await t.sql(`select id from app_user where email = 'admin@localhost'`);
  const people: string[] = [admin.id];
  for (let i = 0; i < 6; i++) {
    const { email } = await createMember(t);
    people.push((await t.sql(`select id from app_user where email = $1`, [email]))[0].id);
  }
  const [{ tenant_id, agent_id }] = await t.sql(`select tenant_id, agent_id from task limit 1`);
  const taskIds = (await t.sql(`select id from task order by id`)).map((r) => r.id);
  // Two reviewer groups: the first counts for a quorum, both take escalated requests.
  const groups: string[] = [];
  for (const [name, members] of [
    ['on-call', [people[2], people[3]]],
    ['security', [people[4]]],
  ] as const) {
    const [g] = await t.sql(`insert into reviewer_group (id, tenant_id, name) values (gen_random_uuid(), $1, $2) returning id`, [tenant_id, name]);
    groups.push(g.id);
    for (const m of members) await t.sql(`insert into reviewer_group_member (id, group_id, user_id) values (gen_random_uuid(), $1, $2)`, [g.id, m]);
  }
  const policy = (quorum: Partial<typeof DEFAULT_POLICY.quorum>) => JSON.stringify({ ...DEFAULT_POLICY, quorum: { ...DEFAULT_POLICY.quorum, ...quorum } });
  // Statuses as an inbox has them; every relation and field the inbox shows, spread over several
  // rows (period 120, so any 30 newest rows hold each kind): one request in 25 assigned to the
  // admin; quorum policies (two approvals from the first group, three from anyone) on two rows in
  // five; escalated to a group on one row in six; command requests on one in eight. Dated after
  // the three the agent opened, so the newest pages hold these rows only.
  await t.sql(
    `insert into approval (id, tenant_id, source, status, title, risk, revision, digest, action, policy, created_at,
                           requester_id, assignee_id, agent_id, task_id, assignee_group_id, escalated_at)
     select gen_random_uuid(), $1, case when i % 8 = 5 then 'COMMAND' else 'USER' end, (array['PENDING','APPROVED','REJECTED','EXPIRED'])[1 + (i % 4)],
            'bulk ' || i, 'LOW', 1, md5(i::text) || md5(i::text), '{"kind":"send_message","text":"x"}'::jsonb,
            case i % 5 when 1 then $6::jsonb when 2 then $7::jsonb else $8::jsonb end,
            now() + interval '1 hour' - make_interval(secs => i), ($3::uuid[])[1 + (i % 7)],
            case when i % 25 = 1 then ($3::uuid[])[1] else ($3::uuid[])[2 + (i % 6)] end, $2,
            case when i % 4 = 0 then null else ($4::uuid[])[1 + (i % 3)] end,
            case when i % 6 = 3 then ($9::uuid[])[1 + (i / 6) % 2] end,
            case when i % 6 = 3 then now() + interval '1 hour' - make_interval(secs => i) + interval '1 second' end
       from generate_series(1, $5::int) as i`,
    [
      tenant_id,
      agent_id,
      people,
      taskIds,
      APPROVALS,
      policy({ approvals: 2, fromGroupIds: [groups[0]!] }),
      policy({ approvals: 3 }),
      JSON.stringify(DEFAULT_POLICY),
      groups,
    ],
  );
  // Two votes on each quorum request: one by a member of the first group, one by someone in no group.
  await t.sql(
    `insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote, decided_at)
     select gen_random_uuid(), a.id, 'APPROVE', 1, a.digest, r.reviewer, true, a.created_at + interval '1 second'
       from approval a cross join unnest($1::uuid[]) as r(reviewer)
      where (a.policy #>> '{quorum,approvals}')::int > 1`,
    [[people[2], people[5]]],
  );
  // Each vote with its signed approval.voted event, as decide() writes it: a decision row counts
  // only with its signed record (audit/decision-record.ts). Appended through the product's writer,
  // a few hundred streams per transaction (each stream takes a lock until the commit).
  const votes = await t.sql<{ id: string; approval_id: string; reviewer_id: string; digest: string; agent_id: string | null; task_id: string | null }>(
    `select d.id, d.approval_id, d.reviewer_id, d.digest, a.agent_id, a.task_id from decision d join approval a on a.id = d.approval_id where d.vote order by d.approval_id`,
  );
  for (let i = 0; i < votes.length; i += 1000) {
    const inputs: AuditEventInput[] = votes.slice(i, i + 1000).map((v) => ({
      tenantId: tenant_id,
      stream: stream.approval(v.approval_id),
      type: 'approval.voted',
      actor: { type: 'user', id: v.reviewer_id },
      data: {
        approvalId: v.approval_id,
        agentId: v.agent_id,
        taskId: v.task_id,
        decisionId: v.id,
        outcome: 'APPROVE',
        revision: 1,
        digest: v.digest,
        seenRevision: 1,
        seenDigest: v.digest,
        comment: null,
        delegatedToId: null,
        status: 'PENDING',
      },
    }));
    await t.instance.orm.em.fork().transactional((tem) => appendEvents(tem, inputs));
  }
  await t.sql('analyze approval');
  pg.Client.prototype.query = function (this: pg.Client & { connectionParameters?: { application_name?: string } }, ...args: any[]) {
    if (recording && !isEventListenerConnection(this.connectionParameters?.application_name)) {
      const q = args[0];
      statements.push(typeof q === 'string' ? { text: q, values: Array.isArray(args[1]) ? args[1] : [] } : { text: String(q?.text), values: q?.values ?? [] });
    }
    return (originalQuery as any).apply(this, args);
  } as typeof pg.Client.prototype.query;
});

afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await t?.stop();
  await agent?.close();
});

/** A GraphQL request and the statements the server ran for it. */
async function recorded(query: string, variables: Record<string, unknown>) {
  statements = [];
  recording = true;
  try {
    const r = await t.gql(query, variables);
    expect(r.errors).toBeUndefined();
    return { data: r.data, statements: [...statements] };
  } finally {
    recording = false;
  }
}

type PlanNode = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; Plans?: PlanNode[] };
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** The plan of the statement that reads the page of approvals. */
async function pagePlan(list: { text: string; values: unknown[] }[]): Promise<PlanNode[]> {
  const page = list.filter((s) => /from "approval"/.test(s.text) && /order by/i.test(s.text));
  expect(page).toHaveLength(1);
  const [row] = await t.sql(`explain (format json) ${page[0]!.text}`, page[0]!.values);
  return nodes(row['QUERY PLAN'][0].Plan);
}

/** Read in order from one of these indexes: no sort, no scan of the table. */
function expectIndexOrder(plan: PlanNode[], ...indexes: string[]) {
  const shown = JSON.stringify(plan.map((n) => [n['Node Type'], n['Index Name']]));
  expect(
    plan.map((n) => n['Node Type']),
    shown,
  ).not.toContain('Sort');
  expect(
    plan.map((n) => n['Node Type']),
    shown,
  ).not.toContain('Seq Scan');
  expect(
    plan.some((n) => /^Index (Only )?Scan$/.test(n['Node Type']) && indexes.includes(n['Index Name']!)),
    shown,
  ).toBe(true);
}

describe(`the console's approval lists at ${APPROVALS.toLocaleString('en')} approvals`, () => {
  it('the inbox, unfiltered and under each filter it offers, reads a page from an index in its order', async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{}, ['approval_tenant_created']],
      [{ status: ['PENDING'] }, ['approval_tenant_status']],
      // Every row here has that agent: reading the tenant's order and checking the agent is as good.
      [{ agentId: agentGid }, ['approval_tenant_agent', 'approval_tenant_created']],
      [{ status: ['APPROVED'], agentId: agentGid }, ['approval_tenant_status', 'approval_tenant_agent']],
      [{ assignedToMe: true }, ['approval_assignee']],
    ];
    for (const [variables, indexes] of cases) {
      const r = await recorded(INBOX, variables);
      expect(r.data.approvals.edges).toHaveLength(100);
      expectIndexOrder(await pagePlan(r.statements), ...indexes);
    }
  });

  it("the next page (after a cursor) and the task page's list do too", async () => {
    const first = await recorded(`{ approvals(first: 50) { pageInfo { endCursor } } }`, {});
    const next = await recorded(`query($after: String) { approvals(first: 50, after: $after) { edges { node { id } } } }`, {
      after: first.data.approvals.pageInfo.endCursor,
    });
    expect(next.data.approvals.edges).toHaveLength(50);
    expectIndexOrder(await pagePlan(next.statements), 'approval_tenant_created');
    const task = await recorded(`query($t: ID!) { approvals(taskId: $t, first: 50) { edges { node { id } } } }`, { t: taskGid });
    // A quarter of the rows belong to it: either order serves.
    expectIndexOrder(await pagePlan(task.statements), 'approval_task', 'approval_tenant_created');
  });

  it('a page of 100 costs the statements a page of 30 costs (relations are batched, not read per row)', async () => {
    const full = await recorded(SIZED, { first: 100 });
    const shown = full.data.approvals.edges.map((e: any) => e.node);
    expect(shown).toHaveLength(100);
    // The page shows every relation, each with several different rows behind it.
    expect(new Set(shown.map((n: any) => n.requester.id)).size).toBe(7);
    expect(new Set(shown.map((n: any) => n.assignee.id)).size).toBeGreaterThan(2);
    expect(new Set(shown.map((n: any) => n.task?.id).filter(Boolean)).size).toBe(3);
    expect(shown.every((n: any) => n.agent.id === agentGid)).toBe(true);
    // Quorum requests with their counts (only the group member's vote counts for the group's
    // quorum), requests escalated to either group, command requests (no command row: null).
    const quorum = (n: any) => [n.quorumRequired, n.quorumCount];
    expect(shown.filter((n: any) => n.quorumRequired === 2).map(quorum)).toEqual(Array(20).fill([2, 1]));
    expect(shown.filter((n: any) => n.quorumRequired === 3).map(quorum)).toEqual(Array(20).fill([3, 2]));
    expect(shown.filter((n: any) => n.quorumRequired === 1).map(quorum)).toEqual(Array(60).fill([1, 0]));
    const escalated = shown.filter((n: any) => n.escalatedAt);
    expect(escalated).toHaveLength(17);
    expect(new Set(escalated.map((n: any) => n.assigneeGroup.name))).toEqual(new Set(['on-call', 'security']));
    expect(shown.filter((n: any) => !n.escalatedAt).every((n: any) => n.assigneeGroup === null && n.riskRaisedFrom === null)).toBe(true);
    const part = await recorded(SIZED, { first: 30 });
    const fewer = part.data.approvals.edges.map((e: any) => e.node);
    expect(fewer.filter((n: any) => n.quorumCount > 0 && n.escalatedAt).length).toBeGreaterThan(0);
    // The same statements, but for the values the server writes into them (ids, the page's limit).
    const shape = (list: { text: string }[]) =>
      list
        .map((x) =>
          x.text
            .replace(/'[^']*'/g, '?')
            .replace(/\(\?(, \?)*\)/g, '(?)')
            .replace(/limit \d+/g, 'limit ?'),
        )
        .sort();
    expect(shape(full.statements)).toEqual(shape(part.statements));
    // The page, the agents list; agents, tasks, users, reviewer groups, decisions, the voters'
    // group memberships, the events of the escalated and the quorum requests (one batch: the votes'
    // signed records), command requests and their grants (the token is cached: auth/viewer-cache.ts).
    expect(full.statements, shape(full.statements).join('\n')).toHaveLength(11);
  });
});
