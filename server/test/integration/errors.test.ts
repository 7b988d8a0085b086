import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { randomUUID } from 'node:crypto';
import { codeOf, startTestInstance, type TestInstance } from '../support/harness.js';

// DESIGN.md "Integration contract": errors are GraphQL errors with extensions.code in the
// contract's list; nothing unexpected leaks.
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance({ worker: false });
});
afterAll(async () => t?.stop());

describe('error codes', () => {
  it('a malformed id is BAD_USER_INPUT', async () => {
    const r = await t.gql(`query($id: ID!) { approval(id: $id) { id } }`, { id: 'garbage!' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
  });

  it('a well-formed id of another type is BAD_USER_INPUT', async () => {
    const r = await t.gql(`query($id: ID!) { approval(id: $id) { id } }`, { id: encodeGlobalID('Task', randomUUID()) });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
  });

  it('an id of the right type that does not exist is null, not an error', async () => {
    const r = await t.gql(`query($id: ID!) { approval(id: $id) { id } }`, { id: encodeGlobalID('Approval', randomUUID()) });
    expect(r.errors).toBeUndefined();
    expect(r.data.approval).toBeNull();
  });

  it('no token is UNAUTHENTICATED; a member calling an admin mutation is FORBIDDEN', async () => {
    const r = await t.gql(`{ approvals { edges { node { id } } } }`, {}, null);
    expect(codeOf(r)).toBe('UNAUTHENTICATED');
    const bad = await t.gql(`{ approvals { edges { node { id } } } }`, {}, 'tb_not_a_token');
    expect(codeOf(bad)).toBe('UNAUTHENTICATED');
  });

  it('a page size outside 0..100 is BAD_USER_INPUT', async () => {
    const r = await t.gql(`{ approvals(first: 1000) { edges { node { id } } } }`);
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
  });
});
