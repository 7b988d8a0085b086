import type { TestInstance } from './harness.js';

// What the tests of command approvals (seed 002) send as a coding agent's hook does: calls of
// the REST surface under /api/command-approvals, and the sealed payload of a command.

/** A call of Taskbay's REST surface as a hook makes it: JSON in and out, the token as Bearer (none when null). */
export async function rest(t: TestInstance, token: string | null, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${t.instance.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

/**
 * The sealed payload (seed 002's seven fields) a hook sends for one command line: the operation
 * and scope of its first word, high risk, no rollback; `over` replaces any field.
 */
export function sealedPayload(command: string, over: Record<string, unknown> = {}) {
  return {
    operation: `MUTATIVE command intercepted: ${command.split(' ')[0]}`,
    exact_content: command,
    scope: command.split(' ')[0],
    risk_level: 'high',
    rollback: null,
    rationale: 'deletes build output',
    verification: 'ls build fails',
    ...over,
  };
}
