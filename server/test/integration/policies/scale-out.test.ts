import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestInstance, ok, startReplicas } from '../../support/harness.js';
import { createPolicy, policyOf, Q } from '../../support/policies.js';

// Two instances on one database (docs/ARCHITECTURE.md "Scale-out"): each keeps its tenants'
// compiled policies in memory (policies/cache.ts); a change committed on one instance applies to
// the very next request on the other (NOTIFY taskbay_policies, then the LISTEN round trip
// before a cached entry is used).

let a: TestInstance;
let b: TestInstance;

beforeAll(async () => {
  [a, b] = await startReplicas({ worker: false }, { worker: false });
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

describe("a policy change on one instance reaches the other's cache", () => {
  it('create, edit, disable, enable and delete on A each apply to the next request on B', async () => {
    // B caches the tenant's (empty) policy list.
    for (let i = 0; i < 2; i++) expect(await policyOf(b, { risk: 'HIGH' })).toMatchObject({ name: 'default' });
    const p = await createPolicy(a, { name: 'high', condition: 'riskLevel >= 3' });
    expect(await policyOf(b, { risk: 'HIGH' })).toMatchObject({ name: 'high', version: 1 });
    ok(await a.gql(Q.update, { input: { id: p.id, condition: 'riskLevel >= 4' } }));
    expect(await policyOf(b, { risk: 'HIGH' })).toMatchObject({ name: 'default' });
    expect(await policyOf(b, { risk: 'CRITICAL' })).toMatchObject({ name: 'high', version: 2 });
    ok(await a.gql(Q.setEnabled, { id: p.id, enabled: false }));
    expect(await policyOf(b, { risk: 'CRITICAL' })).toMatchObject({ name: 'default' });
    ok(await a.gql(Q.setEnabled, { id: p.id, enabled: true }));
    expect(await policyOf(b, { risk: 'CRITICAL' })).toMatchObject({ name: 'high', version: 2 });
    ok(await a.gql(Q.delete, { id: p.id }));
    expect(await policyOf(b, { risk: 'CRITICAL' })).toMatchObject({ name: 'default' });
  });

  it('a change made by SQL (an operator) is seen too: the trigger notifies, not the code', async () => {
    const p = await createPolicy(a, { name: 'sql-edited', condition: 'title == "x"' });
    expect(await policyOf(b, { title: 'y' })).toMatchObject({ name: 'default' });
    await a.sql('update policy set enabled = false where name = $1', ['sql-edited']);
    expect(await policyOf(b, { title: 'x' })).toMatchObject({ name: 'default' });
    await a.sql('update policy set enabled = true where name = $1', ['sql-edited']);
    expect(await policyOf(b, { title: 'x' })).toMatchObject({ name: 'sql-edited' });
    ok(await a.gql(Q.delete, { id: p.id }));
  });
});
