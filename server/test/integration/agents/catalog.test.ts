import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKILL_ROUTING_EXTENSION } from '../../../src/a2a/extensions.js';
import { hashApiToken } from '../../../src/auth/credentials.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { createMember, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// Seed 000: "load the catalog (GET /api/agents) after registering the agent". The catalog is the
// GraphQL `agents` list over HTTP: Bearer token, the viewer's tenant, the agents the viewer sees,
// each with the latest stored card snapshot (what negotiation reads), its extensions and skills.

let t: TestInstance;
let plain: FixtureAgent;
let routed: FixtureAgent;
let plainId: string;
let routedId: string;

async function catalog(token: string | null, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.instance.url}/api/agents`, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as any };
}

const AGENTS = `{ agents { id name kind cardUrl card { number fetchedAt } extensions skills { id name description } } }`;

/** The GraphQL `agents` list in the catalog's shape: the catalog must be exactly this. */
async function viaGraphql(token: string) {
  const agents = ok(await t.gql(AGENTS, {}, token)).agents as any[];
  return agents.map((a) => ({
    id: a.id,
    uuid: rawId(a.id),
    name: a.name,
    kind: a.kind,
    cardUrl: a.cardUrl,
    snapshot: a.card ? { number: a.card.number, fetchedAt: a.card.fetchedAt } : null,
    extensions: a.extensions,
    skills: a.skills.map((s: any) => ({ id: s.id, name: s.name, description: s.description })),
  }));
}

beforeAll(async () => {
  plain = await startFixtureAgent();
  routed = await startFixtureAgent({ skillRouting: true });
  t = await startTestInstance();
  plainId = ok(await t.gql(OPS.register, { url: plain.cardUrl('form') })).registerAgent.id;
  routedId = ok(await t.gql(OPS.register, { url: routed.cardUrl('showcase') })).registerAgent.id;
});

afterAll(async () => {
  await t?.stop();
  await plain?.close();
  await routed?.close();
});

describe('GET /api/agents', () => {
  it('answers 401 as JSON without a valid Bearer token', async () => {
    for (const token of [null, 'tb_not-a-token']) {
      const r = await catalog(token);
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ error: 'UNAUTHENTICATED' });
    }
    expect((await catalog(null, { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` })).status).toBe(401);
  });

  it('lists the agents an admin sees, each with the latest snapshot, extensions and skills: the same as GraphQL `agents`', async () => {
    const r = await catalog(t.adminToken);
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/application\/json/);
    expect(r.json.agents).toEqual(await viaGraphql(t.adminToken));
    const routedEntry = r.json.agents.find((a: any) => a.id === routedId);
    expect(routedEntry).toMatchObject({
      kind: 'A2A',
      cardUrl: routed.cardUrl('showcase'),
      snapshot: { number: 1, fetchedAt: expect.any(String) },
      skills: expect.arrayContaining([expect.objectContaining({ id: 'deploy' }), expect.objectContaining({ id: 'cleanup' })]),
    });
    expect(routedEntry.extensions).toContain(SKILL_ROUTING_EXTENSION);
    const [row] = await t.sql(`select fetched_at from card_snapshot where agent_id = $1 and number = 1`, [routedEntry.uuid]);
    expect(new Date(routedEntry.snapshot.fetchedAt).getTime()).toBe(new Date(row.fetched_at).getTime());
  });

  it('reads the stored snapshots and never fetches a card; after a refresh it shows the new latest snapshot', async () => {
    // A card server that counts its requests, serving the routed fixture's card.
    const card = await (await fetch(routed.cardUrl('showcase'))).text();
    let cardRequests = 0;
    const server = createServer((_req, res) => {
      cardRequests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(card);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/card.json`;
      const countedId = ok(await t.gql(OPS.register, { url })).registerAgent.id;
      expect(cardRequests).toBe(1);
      const before = (await catalog(t.adminToken)).json.agents.find((a: any) => a.id === countedId);
      await catalog(t.adminToken);
      expect(cardRequests).toBe(1);
      expect(before.snapshot.number).toBe(1);
      ok(await t.gql(`mutation($id: ID!) { refreshAgentCard(id: $id) { id } }`, { id: countedId }));
      expect(cardRequests).toBe(2);
      const after = (await catalog(t.adminToken)).json.agents.find((a: any) => a.id === countedId);
      expect(after.snapshot.number).toBe(2);
      expect(new Date(after.snapshot.fetchedAt).getTime()).toBeGreaterThanOrEqual(new Date(before.snapshot.fetchedAt).getTime());
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('a member sees only the agents granted to them (a skill-limited grant included); a command hook agent is listed with kind COMMAND_HOOK', async () => {
    const m = await createMember(t);
    expect((await catalog(m.token)).json).toEqual({ agents: [] });
    ok(await t.gql(OPS.grant, { userId: m.id, agentId: routedId, permission: 'VIEW', skillId: 'deploy' }));
    const seen = (await catalog(m.token)).json.agents;
    expect(seen.map((a: any) => a.id)).toEqual([routedId]);
    expect(seen).toEqual(await viaGraphql(m.token));
    expect(seen.map((a: any) => a.id)).not.toContain(plainId);

    // The member's own hook: an agent record without a card, which only admins (and grantees) see.
    const res = await rest(t, m.token, 'POST', '/api/command-approvals', {
      agent_id: 'a0c0ffee',
      payload: sealedPayload('rm -rf build', { rationale: 'cleanup', verification: 'ls' }),
    });
    expect(res.status).toBe(201);
    const hookEntry = (await catalog(t.adminToken)).json.agents.find((a: any) => a.name === `Command hook of ${m.email}`);
    expect(hookEntry).toMatchObject({ kind: 'COMMAND_HOOK', cardUrl: null, snapshot: null, extensions: [], skills: [] });
  });

  it("is tenant-scoped: another tenant's admin sees none of these agents", async () => {
    const tenantId = randomUUID();
    const adminId = randomUUID();
    const token = `tb_${randomBytes(32).toString('base64url')}`;
    await t.sql(`insert into tenant (id, name) values ($1, $2)`, [tenantId, `other-${tenantId.slice(0, 8)}`]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'admin@other.test', 'Other admin', 'ADMIN')`, [adminId, tenantId]);
    await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'test', $3)`, [randomUUID(), adminId, hashApiToken(token)]);
    expect(await catalog(token)).toMatchObject({ status: 200, json: { agents: [] } });
  });
});
