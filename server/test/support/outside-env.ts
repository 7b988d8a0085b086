import { delimiter, dirname } from 'node:path';
import { REPO_ROOT } from './repo-root.js';

/**
 * This process's environment without anything pointing into the repository or at npm's run of
 * it, for programs run as an integrator runs them from an install directory outside the
 * repository (the packed packages' tests). The user's npm settings (cache, registry, config
 * files) stay; `npm test`'s view of the project goes. PATH starts with the Node running these
 * tests (bins are `#!/usr/bin/env node`) and keeps nothing inside the repository, no
 * node_modules/.bin.
 */
export function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const npmUserSettings = /^npm_config_(cache|registry|userconfig|globalconfig)$/i;
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|INIT_CWD$|NODE_PATH$|NODE_OPTIONS$|VITEST)/i.test(k) && !npmUserSettings.test(k)) continue;
    env[k] = v;
  }
  const kept = (process.env.PATH ?? '').split(delimiter).filter((p) => !/node_modules[\\/]\.bin$/.test(p) && !p.startsWith(REPO_ROOT));
  env.PATH = [dirname(process.execPath), ...kept].join(delimiter);
  return { ...env, ...extra };
}
