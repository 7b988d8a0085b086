import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/agent.js';
import { OPS, startTestInstance, type TestInstance } from '../support/harness.js';

let t: TestInstance;
let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
});
afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('harness', () => {
  it('serves the admin viewer and registers the fixture agent', async () => {
    const v = await t.gql(`{ viewer { email role } }`);
    expect(v.data.viewer).toEqual({ email: 'admin@localhost', role: 'ADMIN' });
    const r = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
    expect(r.errors).toBeUndefined();
    expect(r.data.registerAgent.name).toContain('showcase');
  });
});
