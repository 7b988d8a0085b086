import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import type { DecisionOutcome, PoliciesQuery as PoliciesData, Risk } from '../gql/graphql';
import { errorInfo } from '../lib/errors';
import { when } from '../lib/time';

// Approval policies (admins; docs/POLICIES.md): the list in the order they are tried, each with
// its CEL condition, rules and versions; create, edit (a new version), enable, disable, reorder,
// delete. The server checks everything (a bad condition comes back with the parser's message).

const PoliciesQuery = graphql(`
  query Policies {
    policies {
      id
      name
      position
      enabled
      currentVersion {
        version
        condition
        allowedOutcomes
        excludeTaskStarter
        quorum {
          approvals
          fromGroupIds
          rejectionRejects
        }
        escalation {
          afterSeconds
          toGroup {
            id
          }
          toUser {
            id
          }
          raiseRiskTo
        }
      }
      versions {
        version
        condition
        allowedOutcomes
        createdAt
        createdBy {
          name
        }
      }
    }
    reviewerGroups {
      id
      name
    }
    users {
      id
      name
      email
    }
  }
`);

const Create = graphql(`
  mutation CreatePolicy($input: CreatePolicyInput!) {
    createPolicy(input: $input) {
      id
    }
  }
`);
const Update = graphql(`
  mutation UpdatePolicy($input: UpdatePolicyInput!) {
    updatePolicy(input: $input) {
      id
    }
  }
`);
const SetEnabled = graphql(`
  mutation SetPolicyEnabled($id: ID!, $enabled: Boolean!) {
    setPolicyEnabled(id: $id, enabled: $enabled) {
      id
      enabled
    }
  }
`);
const Reorder = graphql(`
  mutation ReorderPolicies($ids: [ID!]!) {
    reorderPolicies(ids: $ids) {
      id
      position
    }
  }
`);
const Delete = graphql(`
  mutation DeletePolicy($id: ID!) {
    deletePolicy(id: $id)
  }
`);

const OUTCOMES: DecisionOutcome[] = ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'] as DecisionOutcome[];
const RISKS: Risk[] = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as Risk[];
const words = (o: string) => o.replace(/_/g, ' ').toLowerCase();

type PolicyData = PoliciesData['policies'][number];

interface Draft {
  id: string | null;
  name: string;
  condition: string;
  allowedOutcomes: DecisionOutcome[];
  excludeTaskStarter: boolean;
  approvals: number;
  fromGroupIds: string[];
  rejectionRejects: boolean;
  escalate: boolean;
  afterSeconds: number;
  toGroupId: string;
  toUserId: string;
  raiseRiskTo: string;
}

const EMPTY: Draft = {
  id: null,
  name: '',
  condition: '',
  allowedOutcomes: [...OUTCOMES],
  excludeTaskStarter: false,
  approvals: 1,
  fromGroupIds: [],
  rejectionRejects: true,
  escalate: false,
  afterSeconds: 3600,
  toGroupId: '',
  toUserId: '',
  raiseRiskTo: '',
};

function draftOf(p: PolicyData): Draft {
  const v = p.currentVersion;
  return {
    id: p.id,
    name: p.name,
    condition: v.condition,
    allowedOutcomes: v.allowedOutcomes,
    excludeTaskStarter: v.excludeTaskStarter,
    approvals: v.quorum.approvals,
    fromGroupIds: v.quorum.fromGroupIds,
    rejectionRejects: v.quorum.rejectionRejects,
    escalate: !!v.escalation,
    afterSeconds: v.escalation?.afterSeconds ?? 3600,
    toGroupId: v.escalation?.toGroup?.id ?? '',
    toUserId: v.escalation?.toUser?.id ?? '',
    raiseRiskTo: v.escalation?.raiseRiskTo ?? '',
  };
}

export function PoliciesPage() {
  const [{ data, error }, refetch] = useQuery({ query: PoliciesQuery, requestPolicy: 'cache-and-network' });
  const [, create] = useMutation(Create);
  const [, update] = useMutation(Update);
  const [, setEnabled] = useMutation(SetEnabled);
  const [, reorder] = useMutation(Reorder);
  const [, remove] = useMutation(Delete);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const run = async (p: Promise<{ error?: any }>) => {
    const r = await p;
    setProblem(r.error ? (errorInfo(r.error)?.message ?? 'failed') : null);
    if (!r.error) refetch({ requestPolicy: 'network-only' });
    return !r.error;
  };
  const policies = data?.policies ?? [];
  const move = (i: number, by: number) => {
    const ids = policies.map((p) => p.id);
    const [id] = ids.splice(i, 1);
    ids.splice(i + by, 0, id!);
    void run(reorder({ ids }));
  };
  const save = async (d: Draft) => {
    const rules = {
      condition: d.condition,
      allowedOutcomes: d.allowedOutcomes,
      excludeTaskStarter: d.excludeTaskStarter,
      quorum: { approvals: d.approvals, fromGroupIds: d.fromGroupIds, rejectionRejects: d.rejectionRejects },
      escalation: d.escalate
        ? { afterSeconds: d.afterSeconds, toGroupId: d.toGroupId || null, toUserId: d.toUserId || null, raiseRiskTo: (d.raiseRiskTo || null) as Risk | null }
        : null,
    };
    const ok = await run(d.id ? update({ input: { id: d.id, name: d.name, ...rules } }) : create({ input: { name: d.name, ...rules } }));
    if (ok) setDraft(null);
  };

  return (
    <section aria-labelledby="policies-h">
      <h1 id="policies-h">Policies</h1>
      <p className="muted">
        A request opening gets the first enabled policy, in this order, whose condition (CEL) is true; otherwise the default. Editing a policy writes a new
        version; open requests keep theirs.
      </p>
      {error && <p className="error">{error.message}</p>}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ol className="policies" aria-label="Policies in order">
        {policies.map((p, i) => (
          <li key={p.id} data-policy={p.name}>
            <h2>{`${p.name} (version ${p.currentVersion.version})${p.enabled ? '' : ' — disabled'}`}</h2>
            <code>{p.currentVersion.condition || '(every request)'}</code>
            <p>{`Allows: ${p.currentVersion.allowedOutcomes.map(words).join(', ')}. ${p.currentVersion.quorum.approvals} approval(s)${p.currentVersion.excludeTaskStarter ? "; the task's starter may not decide" : ''}.`}</p>
            <button type="button" disabled={i === 0} onClick={() => move(i, -1)}>
              Up
            </button>
            <button type="button" disabled={i === policies.length - 1} onClick={() => move(i, 1)}>
              Down
            </button>
            <button type="button" onClick={() => void run(setEnabled({ id: p.id, enabled: !p.enabled }))}>
              {p.enabled ? 'Disable' : 'Enable'}
            </button>
            <button type="button" onClick={() => setDraft(draftOf(p))}>
              Edit
            </button>
            <button type="button" className="danger" onClick={() => confirm(`Delete the policy ${p.name}?`) && void run(remove({ id: p.id }))}>
              Delete
            </button>
            <details>
              <summary>{`Versions (${p.versions.length})`}</summary>
              <ol>
                {p.versions.map((v) => (
                  <li
                    key={v.version}
                  >{`${v.version}: ${v.condition || '(every request)'} — ${v.allowedOutcomes.map(words).join(', ')}, ${when(v.createdAt)}${v.createdBy ? ` by ${v.createdBy.name}` : ''}`}</li>
                ))}
              </ol>
            </details>
          </li>
        ))}
      </ol>
      {!draft && (
        <button type="button" onClick={() => setDraft({ ...EMPTY })}>
          New policy
        </button>
      )}
      {draft && data && (
        <PolicyEditor draft={draft} onChange={setDraft} onSave={save} onCancel={() => setDraft(null)} groups={data.reviewerGroups} users={data.users} />
      )}
    </section>
  );
}

function PolicyEditor(props: {
  draft: Draft;
  onChange: (d: Draft) => void;
  onSave: (d: Draft) => void;
  onCancel: () => void;
  groups: { id: string; name: string }[];
  users: { id: string; name: string; email: string }[];
}) {
  const d = props.draft;
  const set = (patch: Partial<Draft>) => props.onChange({ ...d, ...patch });
  return (
    <form
      aria-label={d.id ? 'Edit policy' : 'New policy'}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave(d);
      }}
    >
      <div className="field">
        <label htmlFor="policy-name">Name</label>
        <input id="policy-name" value={d.name} onChange={(e) => set({ name: e.target.value })} />
      </div>
      <div className="field">
        <label htmlFor="policy-condition">Condition (CEL; empty matches every request)</label>
        <textarea
          id="policy-condition"
          value={d.condition}
          placeholder='riskLevel >= 3 && agent.name == "deploy-bot"'
          onChange={(e) => set({ condition: e.target.value })}
        />
      </div>
      <fieldset>
        <legend>Allowed outcomes</legend>
        {OUTCOMES.map((o) => (
          <label key={o}>
            <input
              type="checkbox"
              checked={d.allowedOutcomes.includes(o)}
              onChange={(e) =>
                set({
                  allowedOutcomes: e.target.checked
                    ? OUTCOMES.filter((x) => x === o || d.allowedOutcomes.includes(x))
                    : d.allowedOutcomes.filter((x) => x !== o),
                })
              }
            />
            {words(o)}
          </label>
        ))}
      </fieldset>
      <label>
        <input type="checkbox" checked={d.excludeTaskStarter} onChange={(e) => set({ excludeTaskStarter: e.target.checked })} />
        The person who started the task may not decide (no self-review)
      </label>
      <fieldset>
        <legend>Quorum</legend>
        <label htmlFor="policy-approvals">Approvals needed</label>
        <input id="policy-approvals" type="number" min={1} max={20} value={d.approvals} onChange={(e) => set({ approvals: Number(e.target.value) })} />
        <label htmlFor="policy-groups">Only members of</label>
        <select id="policy-groups" multiple value={d.fromGroupIds} onChange={(e) => set({ fromGroupIds: [...e.target.selectedOptions].map((o) => o.value) })}>
          {props.groups.map((g) => (
            <option key={g.id} value={g.id}>
              {g.name}
            </option>
          ))}
        </select>
        <label>
          <input type="checkbox" checked={d.rejectionRejects} onChange={(e) => set({ rejectionRejects: e.target.checked })} />
          One rejection rejects
        </label>
        {d.approvals > 1 && (
          <p className="muted" data-testid="quorum-note">
            A request that needs more than one approval is never delegated, nor escalated to one person: escalate to a group.
          </p>
        )}
      </fieldset>
      <fieldset>
        <legend>
          <label>
            <input type="checkbox" checked={d.escalate} onChange={(e) => set({ escalate: e.target.checked })} />
            Escalate when undecided
          </label>
        </legend>
        {d.escalate && (
          <>
            <label htmlFor="policy-after">After (seconds)</label>
            <input id="policy-after" type="number" min={1} value={d.afterSeconds} onChange={(e) => set({ afterSeconds: Number(e.target.value) })} />
            <label htmlFor="policy-to-group">Assign to group</label>
            <select id="policy-to-group" value={d.toGroupId} onChange={(e) => set({ toGroupId: e.target.value, toUserId: '' })}>
              <option value="">—</option>
              {props.groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name}
                </option>
              ))}
            </select>
            <label htmlFor="policy-to-user">or to person</label>
            <select id="policy-to-user" value={d.toUserId} onChange={(e) => set({ toUserId: e.target.value, toGroupId: '' })}>
              <option value="">—</option>
              {props.users.map((u) => (
                <option key={u.id} value={u.id}>{`${u.name} <${u.email}>`}</option>
              ))}
            </select>
            <label htmlFor="policy-risk">Raise risk to</label>
            <select id="policy-risk" value={d.raiseRiskTo} onChange={(e) => set({ raiseRiskTo: e.target.value })}>
              <option value="">—</option>
              {RISKS.map((r) => (
                <option key={r} value={r}>
                  {r.toLowerCase()}
                </option>
              ))}
            </select>
          </>
        )}
      </fieldset>
      <button type="submit" disabled={!d.name.trim()}>
        {d.id ? 'Save (new version)' : 'Create policy'}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}
