import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { when } from '../../lib/time';

// The request's escalation (docs/ESCALATION.md): to whom it goes and when, and once it has
// escalated, to whom it went, when, and the risk it raised. Spread in the page's query and its
// live subscription, so it changes in place when the request escalates.

export const EscalationFields = graphql(`
  fragment ApprovalEscalation on Approval {
    id
    status
    risk
    assigneeGroup {
      id
      name
    }
    escalation {
      dueAt
      escalatedAt
      toGroup {
        id
        name
      }
      toUser {
        id
        name
      }
      raiseRiskTo
      riskRaisedFrom
    }
  }
`);

/** "the on-call group and Alice", or null when the rule names nobody (it only raises the risk). */
export function escalationTarget(e: { toGroup?: { name: string } | null; toUser?: { name: string } | null }): string | null {
  const names = [...(e.toGroup ? [`the ${e.toGroup.name} group`] : []), ...(e.toUser ? [e.toUser.name] : [])];
  return names.length ? names.join(' and ') : null;
}

export function EscalationView(props: { approval: FragmentType<typeof EscalationFields> }) {
  const a = getFragmentData(EscalationFields, props.approval);
  const e = a.escalation;
  if (!e) return null;
  const target = escalationTarget(e);
  if (e.escalatedAt) {
    return (
      <p className="banner warn" role="status" data-testid="escalation">
        {`Escalated${target ? ` to ${target}` : ''} at ${when(e.escalatedAt)}`}
        {e.riskRaisedFrom && ` · risk raised from ${e.riskRaisedFrom.toLowerCase()} to ${a.risk.toLowerCase()}`}
        {a.assigneeGroup && a.status === 'PENDING' && ` · only members of ${a.assigneeGroup.name} (or admins) decide it`}
      </p>
    );
  }
  if (a.status !== 'PENDING') return null;
  return (
    <p className="banner" data-testid="escalation">
      {`Escalates${target ? ` to ${target}` : ''} at ${when(e.dueAt)} if still undecided`}
      {e.raiseRiskTo && `, raising the risk to ${e.raiseRiskTo.toLowerCase()}`}
    </p>
  );
}
