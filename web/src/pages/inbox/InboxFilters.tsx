import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { RISKS_DESC, riskMark, SORTS, type SortKey } from '../../lib/risk';

// The bar above the list: the pending requests by risk (each a filter), the order, and the
// filters the query takes (status, agent, assigned to me) beside the risk filter it does not.

export const InboxFiltersFields = graphql(`
  fragment InboxFilters on Query {
    agents {
      id
      name
    }
  }
`);

export const STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED'] as const;

export type Filters = { status: string; agentId: string; risk: string; mine: boolean; sort: SortKey };

export function InboxFilters(props: {
  /** The page query's answer, once there (the agents to filter by). */
  query: FragmentType<typeof InboxFiltersFields> | undefined;
  filters: Filters;
  onChange: (change: Partial<Filters>) => void;
  /** Pending requests by risk, of everything on screen. */
  counts: Record<string, number>;
}) {
  const agents = getFragmentData(InboxFiltersFields, props.query)?.agents;
  const { filters: f, onChange, counts } = props;
  return (
    <>
      <fieldset className="risk-counts" aria-label="Pending by risk (click to filter)" data-testid="risk-counts">
        {RISKS_DESC.map((r) => (
          <button
            key={r}
            type="button"
            className={`count risk-${r.toLowerCase()}`}
            aria-pressed={f.risk === r}
            onClick={() => onChange({ risk: f.risk === r ? '' : r })}
            data-risk={r}
          >
            {`${riskMark(r)} ${counts[r]} ${r.toLowerCase()}`}
          </button>
        ))}
      </fieldset>
      <fieldset className="sorts" aria-label="Order">
        {(Object.keys(SORTS) as SortKey[]).map((k) => (
          <button key={k} type="button" className="sort" aria-pressed={f.sort === k} onClick={() => onChange({ sort: k })}>
            {SORTS[k]}
          </button>
        ))}
      </fieldset>
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status{' '}
          <select value={f.status} onChange={(e) => onChange({ status: e.target.value })}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase().replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent{' '}
          <select value={f.agentId} onChange={(e) => onChange({ agentId: e.target.value })}>
            <option value="">Any</option>
            {agents?.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Risk{' '}
          <select value={f.risk} onChange={(e) => onChange({ risk: e.target.value })}>
            <option value="">Any</option>
            {RISKS_DESC.map((r) => (
              <option key={r} value={r}>
                {r.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={f.mine} onChange={(e) => onChange({ mine: e.target.checked })} /> Assigned to me
        </label>
      </form>
    </>
  );
}
