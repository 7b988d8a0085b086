import { actionLines, diffLines } from './diff';

/** The change between two revisions' actions, line by line, as text. */
export function ActionDiff({ before, after, label }: { before: unknown; after: unknown; label: string }) {
  const lines = diffLines(actionLines(before), actionLines(after));
  const changed = lines.some((l) => l.op !== '=');
  return (
    <figure className="diff">
      <figcaption>{label}</figcaption>
      {!changed && <p className="muted">No change.</p>}
      <pre aria-label={label}>
        {lines.map((l, i) => (
          <div key={i} className={l.op === '+' ? 'd-add' : l.op === '-' ? 'd-del' : 'd-same'}>
            <span className="d-op" aria-label={l.op === '+' ? 'added' : l.op === '-' ? 'removed' : 'unchanged'}>
              {l.op === '=' ? ' ' : l.op}
            </span>
            {` ${l.text}`}
          </div>
        ))}
      </pre>
    </figure>
  );
}
