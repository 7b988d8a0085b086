import { fileURLToPath } from 'node:url';

/** The repository's root directory, ending in a slash: what tests read docs, samples and packages from and run commands in. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
