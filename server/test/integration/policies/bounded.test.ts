import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiToken } from '../../../src/auth/credentials.js';
import { CONDITION_LIMITS } from '../../../src/limits.js';
import { HELD_POLICY_NAME } from '../../../src/policies/snapshot.js';
import { codeOf, createMember, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { clearPolicies, createGroup, createPolicy, open, Q, requestedEvent, REVIEWER_CONDITION } from '../../support/policies.js';

// Issue 22 findings 4 and 5 (docs/POLICIES.md "Cost bounds", "When a condition fails"):
// - a condition's cost is bounded: refused when saved if its worst case is too large, refused
//   when loaded if it was stored behind the API's back, and metered when evaluated (one budget
//   per request for all its conditions);
// - a condition that fails gives the request the strictest policy it could have had, never the
//   failing policy's own rules because its condition failed.

let t: TestInstance;
let app: pg.Client;

beforeAll(async () => {
  t = await startTestInstance();
  app = new pg.Client({ connectionString: t.appUrl });
  await app.connect();
});

afterAll(async () => {
  await app?.end();
  await t?.stop();
});

beforeEach(() => clearPolicies(t));

const tenantOfAdmin = async () => (await t.sql<{ tenant_id: string }>(`select tenant_id from app_user where email = 'admin@localhost'`))[0]!.tenant_id;

/** A policy written with the app role's own login, as Taskbay writes it but past its checks: first in the order. */
async function storeBehindTheApi(name: string, condition: string, position = -1) {
  const id = randomUUID();
  const rules = {
    allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'],
    excludeTaskStarter: false,
    quorum: { approvals: 1, fromGroupIds: [], rejectionRejects: true },
    escalation: null,
  };
  await app.query('begin');
  await app.query(`insert into policy (id, tenant_id, name, position, enabled, current_version) values ($1, $2, $3, $4, true, 1)`, [
    id,
    await tenantOfAdmin(),
    name,
    position,
  ]);
  await app.query(`insert into policy_version (id, policy_id, version, condition, rules) values ($1, $2, 1, $3, $4)`, [
    randomUUID(),
    id,
    condition,
    JSON.stringify(rules),
  ]);
  await app.query('commit');
  return id;
}

/** The catch-all a tenant keeps last: two approvals, no edits, not by the task's starter. */
const production = () =>
  createPolicy(t, { name: 'production', condition: '', allowedOutcomes: ['APPROVE', 'REJECT'], quorum: { approvals: 2 }, excludeTaskStarter: true });

async function otherTenantAdmin(): Promise<string> {
  const tenantId = randomUUID();
  const adminId = randomUUID();
  const token = `tb_${randomBytes(32).toString('base64url')}`;
  await t.sql(`insert into tenant (id, name) values ($1, $2)`, [tenantId, `other-${tenantId.slice(0, 8)}`]);
  await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, $3, 'Other admin', 'ADMIN')`, [
    adminId,
    tenantId,
    `admin-${tenantId.slice(0, 8)}@other.test`,
  ]);
  await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'test', $3)`, [randomUUID(), adminId, hashApiToken(token)]);
  return token;
}

const longRequest = { title: 'Import', action: { kind: 'send_message', text: 'x'.repeat(20_000) } };

describe("finding 4: the reviewer's condition", () => {
  it('is refused when saved, naming the part that grows and the limit, and nothing is saved', async () => {
    const kept = await createPolicy(t, { name: 'kept', condition: 'riskLevel >= 2' });
    for (const attempt of [
      () => t.gql(Q.create, { input: { name: 'fast lane', condition: REVIEWER_CONDITION } }),
      () => t.gql(Q.update, { input: { id: kept.id, condition: REVIEWER_CONDITION } }),
    ]) {
      const r = await attempt();
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toMatch(
        /^condition: `q\.split\(""\)\.map\(c, c \+ q\)` can build a value of [\d,]+ characters or elements on a large request; a condition may build at most 1,048,576/,
      );
    }
    expect(ok(await t.gql(Q.policies)).policies.map((p: any) => [p.name, p.currentVersion.version, p.currentVersion.condition])).toEqual([
      ['kept', 1, 'riskLevel >= 2'],
    ]);
  });

  it("stored behind the API's back, it is refused when loaded and never evaluated: a 20,000-character request opens under the strictest policy, and /healthz and another tenant answer meanwhile", async () => {
    const strict = await production();
    await storeBehindTheApi('fast lane', REVIEWER_CONDITION);
    const otherToken = await otherTenantAdmin();
    // Meanwhile: for as long as the hostile request is open, /healthz and a query of the other
    // tenant are asked again and again, each as soon as the one before is answered, so one of
    // each is waiting whenever the hostile request holds the thread. A condition is evaluated
    // synchronously (policies/condition.ts), so nothing can be answered while one runs: what is
    // bounded is how long any of these waits. The bound is the behaviour (docs/choices.md
    // "Wall-clock bounds"): evaluated as in the finding (no load-time refusal, no meter) this
    // condition holds the thread for seconds (7.5 s in the review, 5 to 10 s on a 2-core test VM,
    // the waits in flight then spanned it); refused when loaded it is never evaluated, and each
    // answer takes the few hundred milliseconds at most of ordinary work beside the hostile
    // request (under 250 ms on that VM). ANSWER_MS sits between the two, with room for a loaded
    // machine.
    const ANSWER_MS = 2000;
    const waits: { what: string; ms: number }[] = [];
    let hostileOpen = true;
    const meanwhile = async (what: string, ask: () => Promise<void>) => {
      let asked = 0;
      while (hostileOpen || asked === 0) {
        const started = performance.now();
        await ask();
        waits.push({ what, ms: Math.round(performance.now() - started) });
        asked++;
      }
    };
    const [hostile, other] = await Promise.all([
      open(t, longRequest).finally(() => {
        hostileOpen = false;
      }),
      t.gql(Q.createApproval, { input: { title: 'Elsewhere', risk: 'LOW', action: { kind: 'send_message', text: 'hello' } } }, otherToken),
      meanwhile('/healthz', async () => expect((await fetch(`${t.instance.url}/healthz`)).status).toBe(200)),
      meanwhile('other tenant', async () => expect(ok(await t.gql('{ viewer { email } }', {}, otherToken)).viewer.email).toMatch(/@other\.test$/)),
    ]);
    expect(waits.filter((w) => w.ms > ANSWER_MS)).toEqual([]);
    expect(ok(other).createApproval.policy).toMatchObject({ name: 'default', conditionError: null });

    expect(hostile.policy).toMatchObject({
      policyId: strict.id,
      name: 'production',
      version: 1,
      isDefault: false,
      allowedOutcomes: ['APPROVE', 'REJECT'],
      quorum: { approvals: 2 },
    });
    expect(hostile.policy.conditionError).toMatch(
      /^the condition of "fast lane" \(version 1\) failed: it does not compile: `q\.split\(""\)\.map\(c, c \+ q\)` can build a value .*\. The strictest of the policies this request could have had applies: "production" \(version 1\)$/,
    );
    const event = await requestedEvent(t, hostile.id);
    expect(event.policy).toMatchObject({
      id: rawId(strict.id),
      name: 'production',
      version: 1,
      conditionError: hostile.policy.conditionError,
      failClosed: {
        applied: 'strictest',
        failed: [{ name: 'fast lane', version: 1 }],
        candidates: [{ name: 'fast lane' }, { name: 'production', policyId: rawId(strict.id) }],
      },
    });
  });

  it("conditions stored behind the API's back that together cost more than a request's budget: the meter stops them and the request opens under the strictest policy", async () => {
    // Each fits the budget alone (about 12.6 million units at worst), so each loads; on this
    // request each spends about a million, and 40 of them are more than the 16 million.
    const words = Array.from({ length: 24 }, (_, i) => `"absent word ${i}"`).join(', ');
    const condition = `[${words}].exists(w, text.lowerAscii().contains(w))`;
    const strict = await production();
    for (let i = 0; i < 40; i++) await storeBehindTheApi(`scan ${i}`, condition, i - 100);
    const hostile = await open(t, { ...longRequest, summary: 'y'.repeat(4000) });
    expect(hostile.policy).toMatchObject({ policyId: strict.id, name: 'production' });
    const { failClosed } = (await requestedEvent(t, hostile.id)).policy;
    // The first ones were evaluated (and missed); from the one that spent the budget on, none is.
    const failed: { name: string; error: string }[] = failClosed.failed;
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThan(40);
    expect(failed[0]!.name).toBe(`scan ${40 - failed.length}`);
    for (const f of failed)
      expect(f.error).toBe(`the evaluation budget of this request's conditions (${CONDITION_LIMITS.workMax.toLocaleString('en-US')} units) is spent`);
    expect(failClosed.candidates.at(-1)).toEqual({ policyId: rawId(strict.id), name: 'production', version: 1 });
  });

  it("a tenant's enabled conditions together must fit one request's budget: the save or enabling that goes over is refused, naming the totals", async () => {
    const words = Array.from({ length: 24 }, (_, i) => `"absent word ${i}"`).join(', ');
    const expensive = `[${words}].exists(w, text.lowerAscii().contains(w))`;
    await createPolicy(t, { name: 'scan 1', condition: expensive });
    const over = await t.gql(Q.create, { input: { name: 'scan 2', condition: expensive } });
    expect(codeOf(over)).toBe('BAD_USER_INPUT');
    expect(over.errors![0]!.message).toMatch(
      /^condition: this condition could cost up to [\d,]+ units of work on a large request, and with the tenant's other enabled conditions [\d,]+; all of them together may spend 16,000,000/,
    );
    // Disabled, it is saved; enabling it is refused the same way.
    const off = await createPolicy(t, { name: 'scan 2', condition: expensive, enabled: false });
    expect(codeOf(await t.gql(Q.setEnabled, { id: off.id, enabled: true }))).toBe('BAD_USER_INPUT');
    // A cheaper condition fits.
    expect(ok(await t.gql(Q.update, { input: { id: off.id, condition: 'text.contains("absent word")', enabled: true } })).updatePolicy.enabled).toBe(true);
  });
});

describe('finding 5: a failing condition never picks the weaker policy', () => {
  it("a requester who makes a permissive policy's condition throw gets the stricter policy below it, with a vote counted, not a decision", async () => {
    await createPolicy(t, { name: 'fast lane', condition: 'int(title) > 0' });
    const strict = await production();
    // A numbered title takes the fast lane, as its admin meant.
    expect((await open(t, { title: '42' })).policy.name).toBe('fast lane');
    // Any other title makes int() throw.
    const a = await open(t, { title: 'Deploy now' });
    expect(a.policy).toMatchObject({
      policyId: strict.id,
      name: 'production',
      quorum: { approvals: 2 },
      excludeTaskStarter: true,
      allowedOutcomes: ['APPROVE', 'REJECT'],
    });
    expect(a.policy.conditionError).toMatch(
      /^the condition of "fast lane" \(version 1\) failed: int\(\) type error: cannot convert to int \(at character 1\)\. The strictest .* applies: "production"/,
    );
    expect((await requestedEvent(t, a.id)).policy.failClosed).toMatchObject({
      applied: 'strictest',
      failed: [{ name: 'fast lane', error: 'int() type error: cannot convert to int (at character 1)' }],
    });

    // Its rules hold: one approval is a vote, not a decision.
    const reviewer = (await createMember(t, { role: 'ADMIN' })).token;
    ok(await t.gql(OPS.approve, { id: a.id, revision: 1, digest: a.digest }, reviewer));
    expect(ok(await t.gql(Q.approvalPolicy, { id: a.id })).approval.status).toBe('PENDING');
  });

  it('when no policy the request could have had is the strictest, it is held: it cannot be approved, only rejected', async () => {
    const reviewer = await createMember(t, { role: 'ADMIN' });
    const group = await createGroup(t, 'security', [reviewer.id]);
    await createPolicy(t, { name: 'two approvals', condition: 'int(title) > 0', quorum: { approvals: 2 } });
    await createPolicy(t, { name: 'security only', condition: '', quorum: { approvals: 1, fromGroupIds: [group.id] } });
    const a = await open(t, { title: 'Rotate keys' });
    expect(a.policy).toMatchObject({ policyId: null, name: HELD_POLICY_NAME, isDefault: false, allowedOutcomes: ['REJECT', 'REQUEST_CHANGES'] });
    expect(a.policy.conditionError).toMatch(
      /None of the policies this request could have had \("two approvals" \(version 1\), "security only" \(version 1\)\) is at least as strict as all the others, so it cannot be approved/,
    );
    expect((await requestedEvent(t, a.id)).policy).toMatchObject({ id: null, name: HELD_POLICY_NAME, failClosed: { applied: 'held' } });

    const approve = await t.gql(OPS.approve, { id: a.id, revision: 1, digest: a.digest }, reviewer.token);
    expect(codeOf(approve)).toBe('OUTCOME_NOT_ALLOWED');
    expect(approve.errors![0]!.message).toMatch(/held rules/);
    expect(ok(await t.gql(OPS.reject, { id: a.id, revision: 1, digest: a.digest, comment: 'fix the condition first' }, reviewer.token)).reject.outcome).toBe(
      'REJECT',
    );
  });
});
