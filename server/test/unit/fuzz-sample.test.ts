import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { propertySeed, PURE_PROPERTIES, runPure } from '../fuzz/properties.js';

// The `npm test` sample of the hostile-input properties (server/test/fuzz/properties.ts; the
// long run is `npm run fuzz`): every pure reader, a few dozen generated cases per unit of
// weight, a fresh seed each run. A failure prints the seed and the command that replays it.

// CI samples one fixed seed, so a red run is a regression and not a new find by chance (new
// finds come from `npm run fuzz` and local runs, which take a fresh seed); TASKBAY_FUZZ_SEED
// replays any seed.
const SEED = Number(process.env.TASKBAY_FUZZ_SEED) || (process.env.CI ? 20261130 : randomInt(2 ** 31 - 1));
const SCALE = 30;

describe(`hostile input, generated (sample, seed ${SEED})`, () => {
  PURE_PROPERTIES.forEach((p, i) => {
    it(p.name, () => {
      const r = runPure(p, Math.max(1, Math.round(p.weight * SCALE)), propertySeed(SEED, i));
      expect(
        r.failed,
        `${r.error}\ncounterexample: ${r.counterexample}\nreplay: npm run fuzz -- --seed ${SEED} --scale ${SCALE} --only ${JSON.stringify(p.name)} --path ${JSON.stringify(r.path)}`,
      ).toBe(false);
      expect(r.runs).toBe(Math.max(1, Math.round(p.weight * SCALE)));
    });
  });
});
