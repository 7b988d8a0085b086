// How much a decision asks of the reviewer, and how urgent a request looks, by its risk and
// expiry. One place for the console's urgency and confirmation policy.

export type Risk = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';
export const RISKS_DESC: readonly Risk[] = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'];

const RANK: Record<string, number> = { CRITICAL: 0, HIGH: 1, MEDIUM: 2, LOW: 3 };
export const riskRank = (risk: string) => RANK[risk] ?? 4;

/** High and critical decisions take a deliberate second step (typing the digest's start). */
export const needsDeliberateStep = (risk: string) => riskRank(risk) <= 1;
/** How many leading digest characters the deliberate step asks for. */
export const DIGEST_CONFIRM_CHARS = 6;

/** Rejecting a high or critical request needs a reason. */
export const rejectNeedsReason = (risk: string) => riskRank(risk) <= 1;

/** Under ten minutes to expiry a countdown turns urgent. */
export const URGENT_MS = 10 * 60 * 1000;

/** A marker that does not rely on colour: a shape and the word. */
export function riskMark(risk: string): string {
  if (risk === 'CRITICAL') return '‼';
  if (risk === 'HIGH') return '▲';
  if (risk === 'MEDIUM') return '●';
  return '○';
}

export type Sortable = { risk: string; expiresAt?: string | null; createdAt: string; status: string };

export const SORTS = {
  urgency: 'Most urgent first',
  newest: 'Newest first',
  oldest: 'Oldest first',
  expiry: 'Expiring soonest',
} as const;
export type SortKey = keyof typeof SORTS;

const expiry = (x: Sortable) => (x.expiresAt ? Date.parse(x.expiresAt) : Number.POSITIVE_INFINITY);

/**
 * Urgency: pending before closed, then risk (critical first), then time to expiry (soonest
 * first; no expiry last), then oldest first. Ties never depend on arrival order on screen.
 */
export function compareBy(sort: SortKey): (a: Sortable & { id: string }, b: Sortable & { id: string }) => number {
  return (a, b) => {
    const open = Number(a.status !== 'PENDING') - Number(b.status !== 'PENDING');
    let c = 0;
    if (sort === 'urgency') c = open || riskRank(a.risk) - riskRank(b.risk) || expiry(a) - expiry(b) || Date.parse(a.createdAt) - Date.parse(b.createdAt);
    else if (sort === 'expiry') c = open || expiry(a) - expiry(b);
    else if (sort === 'newest') c = Date.parse(b.createdAt) - Date.parse(a.createdAt);
    else c = Date.parse(a.createdAt) - Date.parse(b.createdAt);
    return c || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  };
}
