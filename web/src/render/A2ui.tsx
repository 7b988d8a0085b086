import { A2UI_COMPONENTS, foldA2ui, resolveValue, type A2uiComponent, type A2uiSurface } from './a2ui';

// A2UI surfaces rendered by a closed set of components as inert React elements. Strings are
// text (never HTML or Markdown); no URL is loaded or linked; functionCall actions (openUrl, ...)
// never run. Buttons with an `event` action call onEvent (when given) with the resolved context.
// Every other component is a labelled placeholder.

export interface A2uiEvent {
  name: string;
  surfaceId: string;
  sourceComponentId: string;
  context: Record<string, unknown>;
}

const KNOWN = new Set<string>(A2UI_COMPONENTS);

export function A2uiSurfaces({
  envelopes,
  onEvent,
  removedLater,
}: {
  envelopes: unknown;
  onEvent?: (e: A2uiEvent) => void;
  /** Surfaces a later message of the transcript deletes (deletedLater): shown as removed. */
  removedLater?: ReadonlySet<string>;
}) {
  const fold = foldA2ui(envelopes);
  const surfaces = fold.surfaces.filter((s) => !removedLater?.has(s.surfaceId));
  const removed = [...fold.removed, ...fold.surfaces.filter((s) => removedLater?.has(s.surfaceId)).map((s) => s.surfaceId)];
  if (!surfaces.length && !removed.length) return <p className="muted">Empty A2UI message.</p>;
  return (
    <>
      {removed.map((id) => (
        <p className="muted a2ui-removed" key={`removed:${id}`}>
          {`The agent removed surface ${id}.`}
        </p>
      ))}
      {surfaces.map((s) => (
        <section className="a2ui" key={s.surfaceId} aria-label={`Agent surface ${s.surfaceId}`}>
          <C s={s} id={s.components.has('root') ? 'root' : [...s.components.keys()][0]} seen={new Set()} onEvent={onEvent} />
        </section>
      ))}
    </>
  );
}

function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function C({ s, id, seen, onEvent }: { s: A2uiSurface; id: string | undefined; seen: Set<string>; onEvent?: (e: A2uiEvent) => void }) {
  if (!id) return null;
  const c = s.components.get(id);
  if (!c) return <span className="a2ui-placeholder">{`[missing component ${id}]`}</span>;
  if (seen.has(id) || seen.size > 300) return <span className="a2ui-placeholder">{`[cycle at ${id}]`}</span>;
  const next = new Set(seen).add(id);
  const kids = (list: unknown) =>
    (Array.isArray(list) ? list : []).filter((x): x is string => typeof x === 'string').map((k) => <C key={k} s={s} id={k} seen={next} onEvent={onEvent} />);
  const child = typeof c.child === 'string' ? <C s={s} id={c.child} seen={next} onEvent={onEvent} /> : null;
  const val = (k: string) => resolveValue(c[k], s.data);
  if (!KNOWN.has(c.component)) {
    return (
      <div className="a2ui-placeholder" role="note" data-component={c.component}>
        {`Not rendered: ${c.component} component`}
      </div>
    );
  }
  switch (c.component as (typeof A2UI_COMPONENTS)[number]) {
    case 'Text': {
      const t = text(val('text'));
      return c.variant === 'h1' || c.variant === 'h2' || c.variant === 'h3' ? (
        <strong className="a2ui-heading">{t}</strong>
      ) : (
        <span className="a2ui-text">{t}</span>
      );
    }
    case 'Row':
      return (
        <div className="a2ui-row">
          {kids(c.children)}
          {child}
        </div>
      );
    case 'Column':
      return (
        <div className="a2ui-column">
          {kids(c.children)}
          {child}
        </div>
      );
    case 'Card':
      return (
        <div className="a2ui-card">
          {child}
          {kids(c.children)}
        </div>
      );
    case 'Divider':
      return <hr className="a2ui-divider" />;
    case 'TextField':
      return (
        <label className="a2ui-field">
          <span>{text(val('label'))}</span>
          <input type="text" readOnly value={text(val('value'))} />
        </label>
      );
    case 'CheckBox':
      return (
        <label className="a2ui-field">
          <input type="checkbox" readOnly disabled checked={val('value') === true} />
          <span>{text(val('label'))}</span>
        </label>
      );
    case 'ChoicePicker': {
      const options = Array.isArray(c.options) ? (c.options as { label?: unknown; value?: unknown }[]) : [];
      const current = val('value');
      return (
        <label className="a2ui-field">
          <span>{text(val('label'))}</span>
          <select disabled value={text(Array.isArray(current) ? current[0] : current)}>
            {options.map((o, i) => (
              <option key={i} value={text(o?.value)}>
                {text(o?.label ?? o?.value)}
              </option>
            ))}
          </select>
        </label>
      );
    }
    case 'Button': {
      const action = (c.action ?? {}) as { event?: { name?: unknown; context?: Record<string, unknown> }; functionCall?: { call?: unknown } };
      const ev = action.event && typeof action.event.name === 'string' ? action.event : null;
      const fn = action.functionCall ? text(action.functionCall.call) : null;
      return (
        <button
          type="button"
          className="a2ui-button"
          disabled={!ev || !onEvent}
          title={fn ? `Not run: ${fn}` : undefined}
          onClick={() => {
            if (!ev || !onEvent) return;
            const context: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(ev.context ?? {})) context[k] = resolveValue(v, s.data);
            onEvent({ name: ev.name as string, surfaceId: s.surfaceId, sourceComponentId: c.id, context });
          }}
        >
          {child}
          {fn && <span className="a2ui-note">{` (action ${fn} not run)`}</span>}
        </button>
      );
    }
  }
}

export type { A2uiComponent };
