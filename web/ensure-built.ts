import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `npm start` runs this first: builds the console into web/dist when it is missing, so a fresh
// clone serves the console at / without a separate build step. It builds into a private folder
// and renames it into place, so two replicas starting on one checkout do not trip over each
// other. A failed build is reported and the server still starts (serving a placeholder at /).
const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
if (!existsSync(join(dist, 'index.html'))) {
  const tmp = join(here, `.dist-${process.pid}`);
  console.log('Building the reviewer console (web/dist is missing)...');
  try {
    const { build } = await import('vite');
    await build({ configFile: join(here, 'vite.config.ts'), logLevel: 'warn', build: { outDir: tmp, emptyOutDir: true } });
    if (!existsSync(join(dist, 'index.html'))) {
      rmSync(dist, { recursive: true, force: true });
      renameSync(tmp, dist);
    }
  } catch (e) {
    console.error(`Could not build the console (${e instanceof Error ? e.message : String(e)}); run \`npm run build\`.`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
