import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestInstance, ok, rawId, startReplicas } from '../../support/harness.js';
import { recordStatements, type StatementRecorder } from '../../support/statements.js';

// Issue 11, ingest (e): an audit append takes the tenant's webhook endpoints from the instance's
// memory (webhooks/endpoint-cache.ts) instead of one statement per append, and an endpoint
// registered, disabled or deleted on one instance is seen by the very next append on another
// (a trigger notifies taskbay_webhooks; the append waits for a round trip on its LISTEN
// connection). Two instances on one database, no job worker: the deliveries are checked as
// rows (queued in the appending transaction), nothing is sent.

let a: TestInstance;
let b: TestInstance;
let recorder: StatementRecorder;

const CREATE_ENDPOINT = `mutation($url: String!, $types: [WebhookEventType!]!) {
  createWebhookEndpoint(input: { url: $url, eventTypes: $types }) { endpoint { id } } }`;
const UPDATE_ENDPOINT = `mutation($id: ID!, $enabled: Boolean) { updateWebhookEndpoint(input: { id: $id, enabled: $enabled }) { id enabled } }`;
const DELETE_ENDPOINT = `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`;
const CREATE_APPROVAL = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "x" } }) { id } }`;

const network = {
  resolve: async (hostname: string) => {
    if (hostname !== 'receiver.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return ['127.0.0.1'];
  },
  dial: () => '127.0.0.1',
};

beforeAll(async () => {
  [a, b] = await startReplicas({ worker: false, network }, { worker: false, network });
  recorder = recordStatements();
});

afterAll(async () => {
  recorder?.restore();
  await b?.stop();
  await a?.stop();
});

/** Opens a request on `t`; returns its id and the statements that named webhook_endpoint. */
async function openOn(t: TestInstance) {
  const { result, statements } = await recorder.during(() => t.gql(CREATE_APPROVAL, { title: `r ${randomUUID().slice(0, 6)}` }));
  return { approvalId: rawId(ok(result).createApproval.id), lookups: statements.filter((s) => /webhook_endpoint/.test(s.text)).length };
}

/** The endpoints a delivery was queued for, for the request's approval.requested event. */
async function queuedFor(approvalId: string): Promise<string[]> {
  const rows = await a.sql<{ endpoint_id: string }>(
    `select d.endpoint_id from webhook_delivery d join audit_event e on e.id = d.audit_event_id
      where e.type = 'approval.requested' and e.data->>'approvalId' = $1 order by d.endpoint_id`,
    [approvalId],
  );
  return rows.map((r) => r.endpoint_id);
}

describe('webhook endpoints from memory', () => {
  it('an append reads the endpoints once, then from memory', async () => {
    expect((await openOn(b)).lookups).toBe(1);
    for (let i = 0; i < 2; i++) expect((await openOn(b)).lookups).toBe(0);
  });

  it('an endpoint registered on A gets the very next event appended on B; disabled or deleted on A, none', async () => {
    // B remembers "no endpoints" for the tenant.
    await openOn(b);
    expect((await openOn(b)).lookups).toBe(0);
    const created = ok(await a.gql(CREATE_ENDPOINT, { url: 'http://receiver.test:9/hook', types: ['APPROVAL_REQUESTED'] }));
    const endpointId = rawId(created.createWebhookEndpoint.endpoint.id);

    const first = await openOn(b);
    expect(await queuedFor(first.approvalId)).toEqual([endpointId]);
    expect((await openOn(b)).lookups).toBe(0);

    ok(await a.gql(UPDATE_ENDPOINT, { id: created.createWebhookEndpoint.endpoint.id, enabled: false }));
    expect(await queuedFor((await openOn(b)).approvalId)).toEqual([]);

    ok(await a.gql(UPDATE_ENDPOINT, { id: created.createWebhookEndpoint.endpoint.id, enabled: true }));
    expect(await queuedFor((await openOn(b)).approvalId)).toEqual([endpointId]);

    ok(await a.gql(DELETE_ENDPOINT, { id: created.createWebhookEndpoint.endpoint.id }));
    expect(await queuedFor((await openOn(b)).approvalId)).toEqual([]);
  });

  it('an endpoint added by SQL (an operator) is seen by the next append on either instance', async () => {
    await openOn(a);
    await openOn(b);
    const [{ id: tenantId }] = await a.sql<{ id: string }>('select tenant_id as id from app_user limit 1');
    const id = randomUUID();
    await a.sql(`insert into webhook_endpoint (id, tenant_id, url, event_types) values ($1, $2, 'http://receiver.test:9/sql', '{approval.requested}')`, [
      id,
      tenantId,
    ]);
    for (const t of [a, b]) expect(await queuedFor((await openOn(t)).approvalId)).toContain(id);
    await a.sql('delete from webhook_endpoint where id = $1', [id]);
    for (const t of [a, b]) expect(await queuedFor((await openOn(t)).approvalId)).not.toContain(id);
  });
});
