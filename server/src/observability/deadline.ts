/** p, or a rejection naming `what` once ms have passed (p itself is not cancelled). */
export function withDeadline<T>(p: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  const settled = Promise.resolve(p);
  // A rejection of p after the deadline has nobody waiting on it.
  settled.catch(() => {});
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
