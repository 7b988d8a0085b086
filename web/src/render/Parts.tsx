import { MEDIA_TYPE } from '../../../server/src/a2a/extensions.js';
import { A2uiSurfaces, type A2uiEvent } from './A2ui';
import { FormView } from './FormView';
import { JsonTree } from './JsonTree';
import { readForm } from './form';

/**
 * The server's choice for one message (TaskMessage form/formPartIndex, a2ui/a2uiPartIndex): the
 * form and the A2UI envelopes it offers, each with the index of the part it was read from.
 */
export interface MessageOffers {
  form: unknown;
  formPartIndex: number | null | undefined;
  a2ui: unknown;
  a2uiPartIndex: number | null | undefined;
}

/**
 * The parts of one A2A message. Text is text; data is a JSON tree, except the one part the
 * server chose as the message's form and the one it chose as its A2UI surface, each rendered
 * once, at its own index. Every other part, a second form or surface included, is ordinary
 * data (seed 003: what Taskbay does not offer is "shown as such"). File parts show their name
 * and media type only, the URL as text, never fetched.
 */
export function MessageParts({
  parts,
  offers,
  onFormSubmit,
  onA2uiEvent,
  a2uiRemoved,
  busy,
}: {
  parts: unknown;
  /** What the server offers from this message; absent: nothing (a person's message). */
  offers?: MessageOffers | null;
  onFormSubmit?: (values: Record<string, unknown>) => void;
  onA2uiEvent?: (e: A2uiEvent) => void;
  /** Surfaces a later message deletes (deleteSurface): shown as removed. */
  a2uiRemoved?: ReadonlySet<string>;
  busy?: boolean;
}) {
  if (!Array.isArray(parts)) return <JsonTree value={parts} label="Message" />;
  return (
    <div className="parts">
      {parts.map((p, i) => {
        const part = (p ?? {}) as Record<string, unknown>;
        if (typeof part.text === 'string') {
          return (
            <pre className="part-text" key={i}>
              {part.text}
            </pre>
          );
        }
        if ('data' in part) {
          const mt = typeof part.mediaType === 'string' ? part.mediaType : MEDIA_TYPE.json;
          if (offers && mt === MEDIA_TYPE.form && i === offers.formPartIndex) {
            const f = readForm(offers.form);
            if (f) return <FormView key={i} form={f} readOnly={!onFormSubmit} onSubmit={onFormSubmit} busy={busy} />;
          }
          if (offers && mt === MEDIA_TYPE.a2ui && i === offers.a2uiPartIndex && offers.a2ui != null) {
            return <A2uiSurfaces key={i} envelopes={offers.a2ui} onEvent={onA2uiEvent} removedLater={a2uiRemoved} />;
          }
          if (mt === MEDIA_TYPE.malformedPart) {
            const meta = (part.metadata ?? {}) as Record<string, unknown>;
            const sentAs = typeof meta.taskbaySentAs === 'string' ? ` (sent as ${meta.taskbaySentAs})` : '';
            const why = typeof meta.taskbayMalformed === 'string' ? meta.taskbayMalformed : 'it could not be read';
            return (
              <div key={i} className="part-data part-malformed">
                <div className="muted">{`Part not read${sentAs}: ${why}`}</div>
                {part.data !== null && <JsonTree value={part.data} label="Malformed part" openDepth={0} />}
              </div>
            );
          }
          return (
            <div key={i} className="part-data">
              <div className="muted">{mt === MEDIA_TYPE.approvalRequest ? 'Approval request' : `Data (${mt})`}</div>
              <JsonTree value={part.data} label={mt} openDepth={1} />
            </div>
          );
        }
        if ('url' in part || 'raw' in part || 'file' in part) {
          return (
            <div key={i} className="part-file muted">
              {`File ${String(part.filename ?? part.name ?? '')} (${String(part.mediaType ?? 'unknown type')}) — not loaded`}
            </div>
          );
        }
        return <JsonTree key={i} value={part} label="Unknown part" openDepth={1} />;
      })}
    </div>
  );
}
