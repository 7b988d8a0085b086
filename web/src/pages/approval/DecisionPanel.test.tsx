import { randomUUID } from 'node:crypto';
import { renderToStaticMarkup } from 'react-dom/server';
import { Client, Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeFragmentData } from '../../gql';
import type { ApprovalRow } from '../../../../server/src/approvals/entities.js';
import { approvalContract } from '../../../../server/src/contract/agents-approval.js';
import { ActionEditorFields } from './ActionEditor';
import { DecisionPanel, DecisionPanelFields } from './DecisionPanel';

// Docs/CONFORMANCE.md G5 (seed 001 OPTIONS, "the words a person reads", "in the order to show
// them"): the agents.approval@1 export lists exactly the decision buttons the console shows,
// with the same words, in the same order. Rendered with react-dom/server; the urql client is
// never asked anything (no button is pressed).

const client = new Client({ url: 'http://127.0.0.1:9/graphql', exchanges: [] });
const ACTION = { kind: 'send_message', text: 'Delete the staging cluster.' };

const ALL = ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'] as const;
type Outcome = (typeof ALL)[number];

function buttons(
  source: 'AGENT' | 'COMMAND',
  commandApprovalId: string | null,
  allowedOutcomes: Outcome[] = [...ALL],
  editable = source !== 'COMMAND',
  opts: { viewerCannotDecide?: string; offline?: string } = {},
) {
  const approval = makeFragmentData(
    {
      id: randomUUID(),
      title: 'Delete it',
      risk: 'HIGH',
      status: 'PENDING',
      source,
      editable,
      command: commandApprovalId ? { approvalId: commandApprovalId } : null,
      policy: { name: 'p', version: 1, isDefault: false, allowedOutcomes, conditionError: null },
      assignee: null,
      viewerCannotDecide: opts.viewerCannotDecide ?? null,
      supersededBy: null,
      quorum: { required: 1, count: 0 },
      decisions: [],
    },
    DecisionPanelFields,
  );
  const shown = { number: 1, digest: 'ab'.repeat(32), action: ACTION, editor: makeFragmentData({ action: ACTION }, ActionEditorFields) };
  const out = renderToStaticMarkup(
    <Provider value={client}>
      <DecisionPanel approval={approval} shown={shown} viewerId="me" onRefused={() => {}} onResult={() => {}} offline={opts.offline ?? null} />
    </Provider>,
  );
  const group = (label: string) => {
    const html = out.match(new RegExp(`<fieldset class="buttons" aria-label="${label}">(.*?)</fieldset>`))?.[1] ?? '';
    return [...html.matchAll(/<button[^>]*>(.*?)<\/button>/g)].map((m) => m[1]!.replace(/<span aria-hidden="true">.*?<\/span>/, ''));
  };
  return { options: group('Decide'), handOver: group('Hand over'), out };
}

function exported(source: 'AGENT' | 'COMMAND', commandApprovalId: string | null, allowedOutcomes: Outcome[] = [...ALL], editable = source !== 'COMMAND') {
  const row = {
    id: randomUUID(),
    policy: { allowedOutcomes },
    source,
    editable,
    title: 'Delete it',
    taskId: source === 'AGENT' ? randomUUID() : null,
    stepSeq: 1,
    action: source === 'COMMAND' ? { kind: 'run_command', agent_id: 'a0c0ffee', commands: ['rm -rf build'], payload: {} } : ACTION,
  } as unknown as ApprovalRow;
  return approvalContract(row, null, 'Agent', 1, commandApprovalId ? { approvalId: commandApprovalId } : null).options;
}

describe('the export options are the console buttons', () => {
  it("an agent's request: Approve, Edit then approve, Request changes, Reject; Delegate apart", () => {
    const shown = buttons('AGENT', null);
    expect(shown.options).toEqual(exported('AGENT', null).map((o) => o.label));
    expect(shown.options).toHaveLength(4);
    expect(shown.handOver).toEqual(['Delegate']);
  });

  it('a command (seed 002): Approve [P-xxxxxxxx] and Reject; Delegate apart', () => {
    const id = `P-${randomUUID().replace(/-/g, '')}`;
    const shown = buttons('COMMAND', id);
    expect(shown.options).toEqual(exported('COMMAND', id).map((o) => o.label));
    expect(shown.options[0]).toBe(`Approve [${id.slice(0, 10)}]`);
    expect(shown.handOver).toEqual(['Delegate']);
  });

  it("a policy's allowed outcomes (policies/enforce.ts): only those buttons, in the export too; no Delegate unless allowed", () => {
    const allowed: Outcome[] = ['APPROVE', 'REJECT'];
    const shown = buttons('AGENT', null, allowed);
    expect(shown.options).toEqual(['Approve', 'Reject']);
    expect(shown.options).toEqual(exported('AGENT', null, allowed).map((o) => o.label));
    expect(shown.handOver).toEqual([]);
  });

  it('a request opened with editable: false (edit-rules.ts editOffered): no Edit then approve, even where its policy allows it; the export says the same', () => {
    const shown = buttons('AGENT', null, [...ALL], false);
    expect(shown.options).toEqual(['Approve', 'Request changes', 'Reject']);
    expect(shown.options).toEqual(exported('AGENT', null, [...ALL], false).map((o) => o.label));
    expect(shown.handOver).toEqual(['Delegate']);
  });
});

describe('what the viewer cannot use is disabled, with the reason beside it (issue 26, item 3)', () => {
  const disabledWith = (out: string, id: string) => {
    const tags = [...out.matchAll(/<button[^>]*>/g)].map((m) => m[0]).filter((b) => !b.includes('class="small"'));
    expect(tags.length).toBeGreaterThan(0);
    for (const b of tags) {
      expect(b).toContain('disabled=""');
      expect(b).toContain(`aria-describedby="${id}"`);
    }
  };

  it("the server's reason (here: no OPERATE): every decision and the delegation", () => {
    const { out } = buttons('AGENT', null, [...ALL], true, { viewerCannotDecide: 'you need OPERATE on this agent to decide' });
    expect(out).toContain('id="decide-blocked" data-testid="decide-blocked">You cannot decide this request: you need OPERATE on this agent to decide.</p>');
    disabledWith(out, 'decide-blocked');
  });

  it('offline: the same, saying so', () => {
    const { out } = buttons('AGENT', null, [...ALL], true, { offline: 'You are offline: decisions are disabled until the connection is back.' });
    expect(out).toContain('data-testid="decide-blocked">You are offline: decisions are disabled until the connection is back.</p>');
    disabledWith(out, 'decide-blocked');
  });

  it('nothing in the way: every button enabled', () => {
    const { out } = buttons('AGENT', null);
    expect(out).not.toContain('decide-blocked');
    expect(out).not.toMatch(/<button[^>]*disabled/);
  });
});
