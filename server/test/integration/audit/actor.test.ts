import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, stream } from '../../../src/audit/log.js';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import {
  agentRegistry,
  appendProbeEvent,
  createMember,
  eventually,
  OPS,
  subscribe,
  untilProbeArrives,
  type TestInstance,
  ok,
  rawId,
} from '../../support/harness.js';
import { startWithFixtureAgent, stopAll, openAgentRequest } from '../../support/fixture-agent.js';

// AuditEvent.actor: the person an audit event names, which the console's audit trail shows by
// name. It must be the person who acted, on every path the approval page reads it by (the
// query, the decision's answer, the live subscription), and nobody the viewer could not see.

let t: TestInstance;
let fixture: FixtureAgent;
const agentId = agentRegistry(() => t);

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent({ worker: false }));
});
afterAll(() => stopAll(t, fixture));

const EVENTS = `events { seq type actorType actorId actor { id email } }`;
type Event = { seq: number; type: string; actorType: string; actorId: string | null; actor: { id: string; email: string } | null };

/** Opens an agent's request on a new task and returns it (id, revision, digest). */
const openRequest = (agent: string, title: string) => openAgentRequest(t, agent, { title, risk: 'low', action: { kind: 'send_message', text: title } });

const eventsOf = async (id: string, token?: string): Promise<Event[]> =>
  ok(await t.gql(`query($id: ID!) { approval(id: $id) { ${EVENTS} } }`, { id }, token)).approval.events;

describe('AuditEvent.actor', () => {
  it("is the person who decided, in the query, the decision's answer and the live update; null for the agent", async () => {
    const agent = await agentId(fixture.cardUrl('scripted'));
    const decider = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: decider.id, agentId: agent, permission: 'OPERATE' }));
    const a = await openRequest(agent, 'Rotate the signing key');

    const live = subscribe(t.ws(), `subscription($id: ID!) { approvalChanged(approvalId: $id) { id ${EVENTS} } }`, { id: a.id });
    try {
      await untilProbeArrives(async () => {
        const before = live.received.length;
        await appendProbeEvent(t, a.id);
        return () => live.received.length > before;
      });

      const answer = ok(
        await t.gql(
          `mutation($input: DecideInput!) { approve(input: $input) { id approval { id ${EVENTS} } } }`,
          { input: { approvalId: a.id, revision: a.revision, digest: a.digest, comment: null } },
          decider.token,
        ),
      ).approve.approval.events as Event[];
      const person = { id: decider.id, email: decider.email };
      const decided = (events: Event[]) => events.find((e) => e.type === 'approval.decided');
      expect(decided(answer)).toMatchObject({ actorType: 'user', actorId: rawId(decider.id), actor: person });

      // Read by someone else (the admin): still the decider, not the viewer.
      const read = await eventsOf(a.id);
      expect(decided(read)?.actor).toEqual(person);
      expect(read.find((e) => e.type === 'delivery.queued')?.actor).toEqual(person);
      expect(read.find((e) => e.type === 'approval.requested')).toMatchObject({ actorType: 'agent', actor: null });
      expect(read.filter((e) => e.actorType !== 'user' && e.actor !== null)).toEqual([]);

      const pushed = await eventually(async () =>
        live.received.map((r) => r.data?.approvalChanged?.events as Event[] | undefined).find((es) => es && decided(es)),
      );
      expect(decided(pushed)?.actor).toEqual(person);
    } finally {
      live.dispose();
    }
  });

  it("is null for a person of another tenant and for an id that names no one; the event's own fields stay", async () => {
    const agent = await agentId(fixture.cardUrl('scripted'));
    const a = await openRequest(agent, 'Purge the cache');
    const otherTenant = randomUUID();
    const stranger = randomUUID();
    await t.sql('insert into tenant (id, name) values ($1, $2)', [otherTenant, `other-${otherTenant.slice(0, 8)}`]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, $3, 'Stranger', 'ADMIN')`, [
      stranger,
      otherTenant,
      `s-${stranger}@other.test`,
    ]);
    const [{ tenant_id: tenantId }] = await t.sql('select tenant_id from approval where id = $1', [rawId(a.id)]);
    const { id: adminGid, email: adminEmail } = ok(await t.gql('{ viewer { id email } }')).viewer;
    // Rows naming these actors, written through the product's writer: a person of another
    // tenant, a text that is no uuid, a uuid of no one, the viewer's own tenant's person (who
    // does resolve), and an agent that carries a person's id (which is not that person).
    const admin = rawId(adminGid);
    const actors = [
      { type: 'user' as const, id: stranger },
      { type: 'user' as const, id: 'not-a-uuid' },
      { type: 'user' as const, id: randomUUID() },
      { type: 'user' as const, id: admin },
      { type: 'agent' as const, id: admin },
    ];
    // The writer takes only declared events: a retry of no delivery, which nothing else writes on this request.
    const approvalId = rawId(a.id);
    await t.instance.orm.em.fork().transactional((tem) =>
      appendEvents(
        tem,
        actors.map((actor) => ({
          tenantId,
          stream: stream.approval(approvalId),
          type: 'delivery.retried' as const,
          actor,
          data: { approvalId, agentId: null, taskId: null, deliveryId: randomUUID() },
        })),
      ),
    );

    const named = (await eventsOf(a.id)).filter((e) => e.type === 'delivery.retried');
    expect(named.map((e) => [e.actorType, e.actorId, e.actor])).toEqual([
      ['user', stranger, null],
      ['user', 'not-a-uuid', null],
      ['user', actors[2]!.id, null],
      ['user', admin, { id: adminGid, email: adminEmail }],
      ['agent', admin, null],
    ]);
  });
});
