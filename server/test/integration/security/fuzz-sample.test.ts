import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { prepareWorld, propertySeed, PURE_PROPERTIES, runWorld, WORLD_PROPERTIES, type FuzzWorld } from '../../fuzz/properties.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';

// The `npm test` sample of the hostile-input properties that need a running instance
// (observation, push route, GraphQL createApproval/editAndApprove, the command hook's REST
// route): a few generated cases each, a fresh seed each run. `npm run fuzz` runs thousands.

// CI samples one fixed seed, so a red run is a regression and not a new find by chance (new
// finds come from `npm run fuzz` and local runs, which take a fresh seed); TASKBAY_FUZZ_SEED
// replays any seed.
const SEED = Number(process.env.TASKBAY_FUZZ_SEED) || (process.env.CI ? 20261130 : randomInt(2 ** 31 - 1));
const SCALE = 15;

let t: TestInstance;
let agent: FixtureAgent;
let world: FuzzWorld;

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  world = await prepareWorld(t.instance, t.adminToken, agent.cardUrl('showcase'));
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe(`hostile input against a running instance (sample, seed ${SEED})`, () => {
  WORLD_PROPERTIES.forEach((p, i) => {
    it(p.name, async () => {
      const runs = Math.max(5, Math.round(p.weight * SCALE));
      const r = await runWorld(p, world, runs, propertySeed(SEED, PURE_PROPERTIES.length + i));
      expect(
        r.failed,
        `${r.error}\ncounterexample: ${r.counterexample}\nreplay: npm run fuzz -- --seed ${SEED} --only ${JSON.stringify(p.name)} --path ${JSON.stringify(r.path)}`,
      ).toBe(false);
      expect(r.runs).toBe(runs);
    }, 60_000);
  });
});
