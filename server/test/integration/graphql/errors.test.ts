import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { randomUUID } from 'node:crypto';
import { codeOf, startTestInstance, type TestInstance } from '../../support/harness.js';

// docs/ARCHITECTURE.md "Integration contract": errors are GraphQL errors with extensions.code in the
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

describe('input Postgres cannot store', () => {
  it("a NUL character in a person's input is BAD_USER_INPUT, and nothing is stored", async () => {
    const before = await t.sql('select count(*)::int as n from approval');
    const r = await t.gql(`mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "x" } }) { id } }`, {
      title: 'bad\u0000title',
    });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    const lone = await t.gql(`mutation($name: String!) { createUser(input: { email: "l@x.test", name: $name, role: MEMBER }) { id } }`, {
      name: 'lone \ud800 surrogate',
    });
    expect(codeOf(lone)).toBe('BAD_USER_INPUT');
    expect(await t.sql('select count(*)::int as n from approval')).toEqual(before);
    expect(await t.sql(`select count(*)::int as n from app_user where email = 'l@x.test'`)).toEqual([{ n: 0 }]);
  });
});
