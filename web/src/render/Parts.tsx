import { A2uiSurfaces, type A2uiEvent } from './A2ui';
import { FormView } from './FormView';
import { JsonTree } from './JsonTree';
import { readForm } from './form';

export const MEDIA = {
  approvalRequest: 'application/vnd.agent-taskbay.approval-request+json',
  form: 'application/vnd.agent-taskbay.form+json',
  a2ui: 'application/a2ui+json',
  /** A part the server could not read (server/src/a2a/client.ts MALFORMED_PART_MEDIA_TYPE). */
  malformed: 'application/vnd.agent-taskbay.malformed-part+json',
} as const;

/**
 * The parts of one A2A message. Text is text; data is a JSON tree unless it is a form (the
 * structured-form subset) or an A2UI message; file parts show their name and media type only,
 * the URL as text, never fetched.
 */
export function MessageParts({
  parts,
  form,
  a2ui,
  onFormSubmit,
  onA2uiEvent,
  a2uiRemoved,
  busy,
}: {
  parts: unknown;
  /** The server's view of this message's form / A2UI (null: not advertised or invalid). Absent: judge the part. */
  form?: unknown;
  a2ui?: unknown;
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
          const mt = typeof part.mediaType === 'string' ? part.mediaType : 'application/json';
          if (mt === MEDIA.form) {
            const f = readForm(form !== undefined ? form : part.data);
            if (f) return <FormView key={i} form={f} readOnly={!onFormSubmit} onSubmit={onFormSubmit} busy={busy} />;
          }
          if (mt === MEDIA.a2ui && (a2ui === undefined || a2ui !== null)) {
            return <A2uiSurfaces key={i} envelopes={a2ui !== undefined ? a2ui : part.data} onEvent={onA2uiEvent} removedLater={a2uiRemoved} />;
          }
          if (mt === MEDIA.malformed) {
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
              <div className="muted">{mt === MEDIA.approvalRequest ? 'Approval request' : `Data (${mt})`}</div>
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
