import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { actorName, eventLabel } from '../../lib/audit';
import { when } from '../../lib/time';

// The approval's own audit stream and whether its hash chain holds.

export const AuditTrailFields = graphql(`
  fragment AuditTrail on Approval {
    agent {
      id
      name
    }
    events {
      seq
      type
      actorType
      actorId
      actor {
        id
        name
      }
      at
      hash
      prevHash
      data
    }
    chain {
      ok
      events
      firstBrokenSeq
      reason
    }
  }
`);

export function AuditTrailView(props: { approval: FragmentType<typeof AuditTrailFields> }) {
  const a = getFragmentData(AuditTrailFields, props.approval);
  const c = a.chain;
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit trail</h2>
      <p className={c.ok ? 'ok' : 'error'} data-testid="chain-status">
        {c.ok
          ? `This request's audit trail is intact: ${c.events} event${c.events === 1 ? '' : 's'}, each linked to the one before and matching its hash.`
          : `This request's audit trail is BROKEN${c.firstBrokenSeq ? ` at event ${c.firstBrokenSeq}` : ''}: ${c.reason ?? ''}`}
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Event</th>
              <th scope="col">By</th>
              <th scope="col">At</th>
              <th scope="col">Hash</th>
            </tr>
          </thead>
          <tbody>
            {a.events.map((e) => (
              <tr key={e.seq}>
                <td>{e.seq}</td>
                <td>
                  <span title={e.type} data-type={e.type}>
                    {eventLabel(e.type, e.data)}
                  </span>
                </td>
                <td title={e.actorId ? `${e.actorType} ${e.actorId}` : e.actorType}>{actorName(e, a.agent)}</td>
                <td>{when(e.at)}</td>
                <td>
                  <code title={`${e.hash} (previous ${e.prevHash ?? 'none'})`}>{e.hash.slice(0, 12)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
