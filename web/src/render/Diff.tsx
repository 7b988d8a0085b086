import { actionLines, changedPaths, collapseUnchanged, diffLines, type DiffLine } from './diff';

const Line = ({ l }: { l: DiffLine }) => (
  <div className={l.op === '+' ? 'd-add' : l.op === '-' ? 'd-del' : 'd-same'}>
    <span className="d-op" aria-label={l.op === '+' ? 'added' : l.op === '-' ? 'removed' : 'unchanged'}>
      {l.op === '=' ? ' ' : l.op}
    </span>
    {` ${l.text}`}
  </div>
);

/**
 * The change between two actions, as text: the changed paths first (values.replicas, text,
 * data.nodes), then the lines, with long unchanged stretches folded away.
 */
export function ActionDiff({ before, after, label }: { before: unknown; after: unknown; label: string }) {
  const lines = diffLines(actionLines(before), actionLines(after));
  const paths = changedPaths(before, after);
  return (
    <figure className="diff">
      <figcaption>{label}</figcaption>
      {paths.length === 0 ? (
        <p className="muted">No change.</p>
      ) : (
        <p className="changed-paths" data-testid="changed-paths">
          {'Changed: '}
          {paths.map((p, i) => (
            <span key={p.path}>
              {i > 0 && ', '}
              <code>{p.path}</code>
              {p.op !== 'changed' && ` (${p.op})`}
            </span>
          ))}
        </p>
      )}
      <div className="diff-lines" role="group" aria-label={label}>
        {collapseUnchanged(lines).map((c, i) =>
          c.op === 'skip' ? (
            <details key={i} className="d-skip">
              <summary>{`${c.lines.length} unchanged line${c.lines.length === 1 ? '' : 's'}`}</summary>
              {c.lines.map((l, k) => (
                <Line key={k} l={l} />
              ))}
            </details>
          ) : (
            <Line key={i} l={c} />
          ),
        )}
      </div>
    </figure>
  );
}
