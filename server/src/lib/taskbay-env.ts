// Where the command-line tools find Taskbay: TASKBAY_URL and TASKBAY_TOKEN, read in one place.

export interface Env {
  url: string;
  token: string | null;
}

export function env(from: NodeJS.ProcessEnv = process.env): Env {
  return { url: (from.TASKBAY_URL || 'http://localhost:4000').replace(/\/+$/, ''), token: from.TASKBAY_TOKEN || null };
}
