import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { when } from '../../lib/time';

// Rows of this request that Taskbay refused to act on because they have no valid signed record
// (server/src/audit/decision-record.ts): a decision, vote or grant written to the database behind
// Taskbay's back, or a request changed after its decision. Nothing was signed, delivered, counted
// or handed out for them; an administrator should find out who can write to the database. Shown
// as a plain warning at the top of the page, the server's words as text. Spread in the page's
// query and its live subscription (an alert is an event on the request's stream).

export const IntegrityAlertsFields = graphql(`
  fragment ApprovalIntegrityAlerts on Approval {
    id
    integrityAlerts {
      id
      at
      kind
      problem
      message
    }
  }
`);

const REFUSED: Record<string, string> = {
  delivery: 'Delivery to the agent refused',
  agui_resume: 'Resume of the AG-UI run refused',
  quorum_vote: 'Quorum vote not counted',
  command_grant: 'Command grant not handed out',
};

/** The words for one alert: what was refused, and why. */
export function alertWords(a: { kind: string; message: string }): string {
  return `${REFUSED[a.kind] ?? `Refused (${a.kind})`}: ${a.message}`;
}

export function IntegrityAlertsView(props: { approval: FragmentType<typeof IntegrityAlertsFields> }) {
  const { integrityAlerts } = getFragmentData(IntegrityAlertsFields, props.approval);
  if (!integrityAlerts.length) return null;
  return (
    <section className="error refusal" role="alert" data-testid="integrity-alerts">
      <p>
        Integrity alert: this request has rows Taskbay did not sign (written to the database behind its back). Nothing was sent, signed, counted or handed out
        for them.
      </p>
      <ul>
        {integrityAlerts.map((a) => (
          <li key={a.id}>{`${when(a.at)} · ${alertWords(a)}`}</li>
        ))}
      </ul>
    </section>
  );
}
