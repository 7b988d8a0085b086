import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { AUDIT_LIMITS } from '../../../server/src/limits.js';
import { errorInfo } from '../lib/errors';
import { tooLong, TooLongNote } from './TooLong';

// For admins, on every page: a failed verification of the audit log stays until an admin
// acknowledges it (audit/failures.ts), so it is shown until then, with what was found and a
// way to acknowledge it with a note. Acknowledging records a signed audit event; it does not
// make a broken log verify.

const AuditFailureQuery = graphql(`
  query AuditFailure {
    auditChain {
      ok
      failure {
        id
        foundAt
        reason
      }
    }
  }
`);

const AcknowledgeMutation = graphql(`
  mutation AcknowledgeAuditFailureInConsole($failureId: ID!, $note: String!) {
    acknowledgeAuditFailure(failureId: $failureId, note: $note) {
      ok
      failure {
        id
        foundAt
        reason
      }
    }
  }
`);

export function AuditAlert() {
  const [{ data }, reexecute] = useQuery({ query: AuditFailureQuery, requestPolicy: 'cache-and-network' });
  const [ack, acknowledge] = useMutation(AcknowledgeMutation);
  const [note, setNote] = useState('');
  const [open, setOpen] = useState(false);
  const failure = data?.auditChain.failure;
  if (!failure) return null;
  const refused = errorInfo(ack.error);
  const noteTooLong = tooLong('The note', note, AUDIT_LIMITS.acknowledgementNoteMax);
  return (
    <div className="banner alert" role="alert" data-testid="audit-alert">
      <p>
        <strong>The audit log failed verification</strong> on {new Date(failure.foundAt as string).toLocaleString()}: {failure.reason}
      </p>
      {open ? (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await acknowledge({ failureId: failure.id, note });
            if (r.error) return;
            setOpen(false);
            // auditChain has no id to update in the cache: read it again.
            reexecute({ requestPolicy: 'network-only' });
          }}
        >
          <label>
            Why is it acknowledged (kept in the signed audit log)?
            <textarea
              value={note}
              onChange={(e) => setNote(e.target.value)}
              required
              aria-invalid={noteTooLong ? true : undefined}
              aria-describedby={noteTooLong ? 'audit-note-too-long' : undefined}
            />
          </label>
          <TooLongNote id="audit-note-too-long" reason={noteTooLong} />
          <button type="submit" disabled={ack.fetching || !note.trim() || !!noteTooLong}>
            Acknowledge
          </button>
          <button type="button" className="link" onClick={() => setOpen(false)}>
            Cancel
          </button>
          {refused && <p className="error">{refused.message}</p>}
        </form>
      ) : (
        <button type="button" onClick={() => setOpen(true)}>
          Acknowledge…
        </button>
      )}
    </div>
  );
}
