// A JSON value as an inert tree: every key and string is React text, never HTML; URLs are not
// links. Objects and arrays fold with <details>; the first levels start open.

export function JsonTree({ value, label, openDepth = 2 }: { value: unknown; label?: string; openDepth?: number }) {
  return (
    <div className="json-tree" role="tree" aria-label={label ?? 'JSON'}>
      <Node value={value} name={null} depth={0} openDepth={openDepth} />
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span className="j-null">null</span>;
  switch (typeof value) {
    case 'string':
      return <span className="j-str">{JSON.stringify(value)}</span>;
    case 'number':
      return <span className="j-num">{String(value)}</span>;
    case 'boolean':
      return <span className="j-bool">{String(value)}</span>;
    default:
      return <span className="j-other">{String(value)}</span>;
  }
}

function Node({ value, name, depth, openDepth }: { value: unknown; name: string | null; depth: number; openDepth: number }) {
  const key = name === null ? null : <span className="j-key">{name}: </span>;
  if (value === null || typeof value !== 'object') {
    return (
      <div role="treeitem" className="j-leaf">
        {key}
        <Scalar value={value} />
      </div>
    );
  }
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value as object);
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    return (
      <div role="treeitem" className="j-leaf">
        {key}
        <span className="j-punct">{brackets.join('')}</span>
      </div>
    );
  }
  return (
    <details role="treeitem" open={depth < openDepth} className="j-branch">
      <summary>
        {key}
        <span className="j-punct">{brackets[0]}</span>
        <span className="j-count">{` ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'} `}</span>
        <span className="j-punct">{brackets[1]}</span>
      </summary>
      <div role="group" className="j-children">
        {entries.map(([k, v]) => (
          <Node key={k} value={v} name={k} depth={depth + 1} openDepth={openDepth} />
        ))}
      </div>
    </details>
  );
}
