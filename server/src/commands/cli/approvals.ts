import { parseArgs } from 'node:util';
import type { ResultOf } from '@graphql-typed-document-node/core';
import { env, gql, GUARD_EXIT, http, Unreachable, type Env } from './client.js';
import { graphql } from './gql/index.js';
import type { ApprovalStatus } from './gql/graphql.js';
import { sendKeptReports } from './outcomes.js';
import { isUuid } from '../../lib/untrusted.js';

// `taskbay approvals list|show|approve|reject|sweep|replay`: for reviewers who live in a
// terminal. A decision names the revision and digest the reviewer was shown.

graphql(`
  fragment CliApprovalFields on Approval {
    id
    status
    source
    title
    summary
    risk
    revision
    digest
    action
    createdAt
    expiresAt
    requester {
      email
    }
    decisions {
      outcome
      reviewer {
        email
      }
      comment
      decidedAt
    }
    command {
      approvalId
      kind
      agentId
      commands
      status
      fingerprint
      grant {
        status
        expiresAt
        consumedAt
      }
    }
    events {
      seq
      type
      actorType
      at
    }
  }
`);

const CommandApprovalById = graphql(`
  query CliCommandApproval($id: String!) {
    commandApproval(approvalId: $id) {
      approval {
        ...CliApprovalFields
      }
    }
  }
`);

const ApprovalById = graphql(`
  query CliApproval($id: ID!) {
    approval(id: $id) {
      ...CliApprovalFields
    }
  }
`);

const ApprovalList = graphql(`
  query CliApprovals($status: [ApprovalStatus!], $first: Int) {
    approvals(status: $status, first: $first) {
      edges {
        node {
          ...CliApprovalFields
        }
      }
    }
  }
`);

const DECIDE = {
  approve: graphql(`
    mutation CliApprove($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
      decision: approve(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {
        id
        outcome
        revision
        digest
      }
    }
  `),
  reject: graphql(`
    mutation CliReject($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
      decision: reject(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {
        id
        outcome
        revision
        digest
      }
    }
  `),
};

type Approval = NonNullable<ResultOf<typeof ApprovalById>['approval']>;

async function loadApproval(e: Env, id: string): Promise<Approval | null> {
  if (/^P-[0-9a-f]{32}$/.test(id)) {
    const d = await gql(e, CommandApprovalById, { id });
    return d.commandApproval?.approval ?? null;
  }
  const gid = isUuid(id) ? Buffer.from(`Approval:${id.toLowerCase()}`).toString('base64') : id;
  return (await gql(e, ApprovalById, { id: gid })).approval ?? null;
}

function line(a: Approval): string {
  const what = a.command ? `${a.command.approvalId}  ${a.command.commands.join(' ; ')}` : a.title;
  return `${a.id}  ${a.status.padEnd(17)} ${a.risk.padEnd(8)} ${a.source.padEnd(7)} ${what}`;
}

export async function approvals(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { status: { type: 'string', multiple: true }, all: { type: 'boolean' }, comment: { type: 'string' }, first: { type: 'string', default: '50' } },
  });
  const e = env();
  const out = (s: string) => process.stdout.write(s + '\n');
  if (!e.token) {
    process.stderr.write('set TASKBAY_TOKEN to an API token (and TASKBAY_URL, default http://localhost:4000)\n');
    return GUARD_EXIT.USAGE;
  }
  try {
    switch (sub) {
      case 'list': {
        // As typed; the server refuses a status it does not know (BAD_USER_INPUT).
        const status = values.all ? null : ((values.status?.map((s) => s.toUpperCase()) ?? ['PENDING']) as ApprovalStatus[]);
        const d = await gql(e, ApprovalList, { status, first: Number(values.first) });
        const rows = d.approvals.edges.map((x) => x.node);
        if (!rows.length) out('no approvals');
        for (const a of rows) out(line(a));
        return 0;
      }
      case 'show': {
        const a = positionals[0] ? await loadApproval(e, positionals[0]) : null;
        if (!a) {
          process.stderr.write('usage: taskbay approvals show <id | P-…>; not found\n');
          return positionals[0] ? 1 : GUARD_EXIT.USAGE;
        }
        out(JSON.stringify(a, null, 2));
        return 0;
      }
      case 'approve':
      case 'reject': {
        const a = positionals[0] ? await loadApproval(e, positionals[0]) : null;
        if (!a) {
          process.stderr.write(`usage: taskbay approvals ${sub} <id | P-…> [--comment TEXT]; not found\n`);
          return positionals[0] ? 1 : GUARD_EXIT.USAGE;
        }
        out(line(a));
        if (a.command) for (const c of a.command.commands) out(`  $ ${c}`);
        else out(JSON.stringify(a.action, null, 2));
        // The decision names the revision and digest shown above.
        const { decision } = await gql(e, DECIDE[sub], { id: a.id, revision: a.revision, digest: a.digest, comment: values.comment ?? null });
        out(`${decision.outcome} revision ${decision.revision} digest ${decision.digest}`);
        return 0;
      }
      case 'sweep': {
        // For a host's Stop hook: send the outcome reports guard runs kept.
        const r = await sendKeptReports(e, out);
        out(`sent ${r.sent}, still kept ${r.kept}`);
        return r.kept ? GUARD_EXIT.UNREACHABLE : 0;
      }
      case 'replay': {
        // Seed 002 `gaia approvals replay`: re-presents (prints, never runs) the commands that ran.
        const id = positionals[0];
        if (!id) {
          process.stderr.write('usage: taskbay approvals replay <P-… | id>\n');
          return GUARD_EXIT.USAGE;
        }
        const res = await http(e, 'GET', `/api/command-approvals/${encodeURIComponent(id)}/executed`);
        if (res.status !== 200) {
          process.stderr.write(`${res.json?.error ?? res.status}: ${res.json?.message ?? 'not found'}\n`);
          return 1;
        }
        out(`${res.json.approval_id} EXECUTED ${res.json.executed_at} exit ${res.json.exit_code}`);
        for (const c of res.json.commands as string[]) out(`  $ ${c}`);
        return 0;
      }
      default:
        process.stderr.write(
          'usage: taskbay approvals list [--status S ...|--all] | show <id> | approve <id> [--comment T] | reject <id> [--comment T] | sweep | replay <id>\n',
        );
        return GUARD_EXIT.USAGE;
    }
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return err instanceof Unreachable ? GUARD_EXIT.UNREACHABLE : 1;
  }
}
