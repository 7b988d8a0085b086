import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { getFragmentData, graphql, type FragmentType } from '../gql';
import type { WebhookEventType } from '../gql/graphql';
import { errorInfo } from '../lib/errors';
import { when } from '../lib/time';
import { JsonTree } from '../render/JsonTree';

// Webhooks (admins): the tenant's endpoints, the events each receives, its delivery log with
// every attempt, secret rotation and a test event (docs/WEBHOOKS.md). A secret is shown once,
// right after the mutation that made it.

const WebhookEndpointFields = graphql(`
  fragment WebhookEndpointFields on WebhookEndpoint {
    id
    url
    description
    eventTypes
    enabled
    createdAt
    secrets {
      createdAt
      expiresAt
    }
    deliveries(first: 20) {
      edges {
        node {
          id
          webhookId
          type
          status
          createdAt
          deliveredAt
          nextAttemptAt
          lastStatusCode
          lastError
          payload
          attempts {
            number
            at
            statusCode
            error
            durationMs
            nextRetryAt
          }
        }
      }
    }
  }
`);

const WebhooksQuery = graphql(`
  query Webhooks {
    webhookEndpoints {
      id
      ...WebhookEndpointFields
    }
    eventTypes: __type(name: "WebhookEventType") {
      enumValues {
        name
        description
      }
    }
  }
`);

const Create = graphql(`
  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      secret
      endpoint {
        id
      }
    }
  }
`);

const Update = graphql(`
  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {
    updateWebhookEndpoint(input: $input) {
      id
      ...WebhookEndpointFields
    }
  }
`);

const Rotate = graphql(`
  mutation RotateWebhookSecret($id: ID!, $graceSeconds: Int) {
    rotateWebhookSecret(id: $id, graceSeconds: $graceSeconds) {
      secret
      endpoint {
        id
        ...WebhookEndpointFields
      }
    }
  }
`);

const SendTest = graphql(`
  mutation SendWebhookTestEvent($id: ID!) {
    sendWebhookTestEvent(id: $id) {
      id
      webhookId
    }
  }
`);

const Delete = graphql(`
  mutation DeleteWebhookEndpoint($id: ID!) {
    deleteWebhookEndpoint(id: $id)
  }
`);

type EventTypeInfo = { name: string; description?: string | null };

function Endpoint(props: {
  endpoint: FragmentType<typeof WebhookEndpointFields>;
  eventTypes: EventTypeInfo[];
  busy: boolean;
  onUpdate: (input: { id: string; enabled?: boolean }) => void;
  onRotate: (id: string, graceSeconds: number, url: string) => void;
  onTest: (id: string) => void;
  onDelete: (id: string) => void;
  onReload: () => void;
}) {
  const e = getFragmentData(WebhookEndpointFields, props.endpoint);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [grace, setGrace] = useState(86400);
  const label = (name: string) =>
    props.eventTypes
      .find((t) => t.name === name)
      ?.description?.split(':')[0]
      ?.replace(/`/g, '') ?? name;
  const deliveries = e.deliveries.edges.map((x) => x.node);
  return (
    <li className="card" aria-label={`Webhook ${e.url}`}>
      <h2>
        {/* Shown as text, never a link. */}
        <code>{e.url}</code>
      </h2>
      {e.description && <p>{e.description}</p>}
      <p className="muted">{`${e.enabled ? 'Enabled' : 'Disabled'} · created ${when(e.createdAt)} · events: ${e.eventTypes.map(label).join(', ')}`}</p>
      <p className="muted">
        {`Signing secrets: ${e.secrets.map((s) => (s.expiresAt ? `one until ${when(s.expiresAt)} (rotated)` : `current since ${when(s.createdAt)}`)).join('; ')}`}
      </p>
      <div className="inline">
        <button type="button" disabled={props.busy || !e.enabled} onClick={() => props.onTest(e.id)}>
          Send test event
        </button>
        <button type="button" disabled={props.busy} onClick={() => props.onUpdate({ id: e.id, enabled: !e.enabled })}>
          {e.enabled ? 'Disable' : 'Enable'}
        </button>
        <label>
          {'Old secret keeps signing for '}
          <select value={grace} onChange={(ev) => setGrace(Number(ev.target.value))} aria-label="Grace period of the old secret">
            <option value={86400}>24 hours</option>
            <option value={3600}>1 hour</option>
            <option value={0}>no time (stop now)</option>
          </select>
        </label>
        <button type="button" disabled={props.busy} onClick={() => props.onRotate(e.id, grace, e.url)}>
          Rotate secret
        </button>
        <button type="button" onClick={props.onReload}>
          Refresh log
        </button>
        {confirmDelete ? (
          <button type="button" className="danger" disabled={props.busy} onClick={() => props.onDelete(e.id)}>
            Confirm: delete with its log
          </button>
        ) : (
          <button type="button" onClick={() => setConfirmDelete(true)}>
            Delete…
          </button>
        )}
      </div>
      <h3>Delivery log</h3>
      {deliveries.length === 0 ? (
        <p className="muted">Nothing sent yet.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label={`Delivery log of ${e.url}`}>
            <thead>
              <tr>
                <th>Event</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Last answer</th>
                <th>Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <td>
                    <details>
                      <summary>{`${d.type} · ${when(d.createdAt)}`}</summary>
                      <p className="muted">
                        webhook-id <code>{d.webhookId}</code>
                      </p>
                      <ol aria-label="Attempts">
                        {d.attempts.map((a) => (
                          <li key={a.number}>
                            {`${when(a.at)}: ${a.statusCode ?? 'no answer'}${a.error ? ` — ${a.error}` : ''} (${a.durationMs} ms)${a.nextRetryAt ? `; next at ${when(a.nextRetryAt)}` : ''}`}
                          </li>
                        ))}
                      </ol>
                      <JsonTree value={d.payload} label="Payload" openDepth={1} />
                    </details>
                  </td>
                  <td>{d.status === 'DELIVERED' ? `DELIVERED ${when(d.deliveredAt)}` : d.status}</td>
                  <td>{d.attempts.length}</td>
                  <td>{d.lastStatusCode ?? d.lastError ?? '—'}</td>
                  <td>{d.nextAttemptAt ? when(d.nextAttemptAt) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </li>
  );
}

export function WebhooksPage() {
  const [{ data, error }, reload] = useQuery({ query: WebhooksQuery });
  const [created, create] = useMutation(Create);
  const [updated, update] = useMutation(Update);
  const [rotated, rotate] = useMutation(Rotate);
  const [tested, sendTest] = useMutation(SendTest);
  const [deleted, remove] = useMutation(Delete);
  const [form, setForm] = useState({ url: '', description: '', eventTypes: ['APPROVAL_REQUESTED', 'APPROVAL_DECIDED'] as WebhookEventType[] });
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const eventTypes = data?.eventTypes?.enumValues ?? [];
  const refresh = () => reload({ requestPolicy: 'network-only' });
  const busy = created.fetching || updated.fetching || rotated.fetching || tested.fetching || deleted.fetching;
  const e = errorInfo(created.error ?? updated.error ?? rotated.error ?? tested.error ?? deleted.error);
  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      <p className="muted">Signed HTTP messages (Standard Webhooks) to your systems when requests open, are decided, expire or fail. See docs/WEBHOOKS.md.</p>
      <form
        className="card"
        aria-label="Add a webhook endpoint"
        onSubmit={async (ev) => {
          ev.preventDefault();
          const r = await create({ input: { url: form.url.trim(), description: form.description.trim() || null, eventTypes: form.eventTypes } });
          if (r.data) {
            setSecret({ url: form.url.trim(), secret: r.data.createWebhookEndpoint.secret });
            setForm({ ...form, url: '', description: '' });
            refresh();
          }
        }}
      >
        <div className="inline">
          <label htmlFor="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            type="url"
            required
            value={form.url}
            onChange={(ev) => setForm({ ...form, url: ev.target.value })}
            placeholder="https://hooks.example.com/taskbay"
          />
          <label htmlFor="webhook-description">Description</label>
          <input id="webhook-description" value={form.description} onChange={(ev) => setForm({ ...form, description: ev.target.value })} />
        </div>
        <fieldset>
          <legend>Events</legend>
          {eventTypes.map((t) => (
            <label key={t.name} className="inline">
              <input
                type="checkbox"
                checked={form.eventTypes.includes(t.name as WebhookEventType)}
                onChange={(ev) =>
                  setForm({
                    ...form,
                    eventTypes: ev.target.checked ? [...form.eventTypes, t.name as WebhookEventType] : form.eventTypes.filter((x) => x !== t.name),
                  })
                }
              />
              {t.description?.replace(/`/g, '') ?? t.name}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy || form.eventTypes.length === 0}>
          Add endpoint
        </button>
      </form>
      {secret && (
        <div className="banner" role="status" aria-label="New signing secret">
          <p>{`Signing secret for ${secret.url}. Copy it now: it is not shown again.`}</p>
          <code>{secret.secret}</code>{' '}
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      {tested.data && (
        <p role="status">{`Test event queued (webhook-id ${tested.data.sendWebhookTestEvent.webhookId}); refresh the log to see the attempt.`}</p>
      )}
      {e && (
        <p className="error" role="alert">
          {`${e.code}: ${e.message}`}
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
      {data && data.webhookEndpoints.length === 0 && <p className="muted">No endpoint yet.</p>}
      <ul className="agents" aria-label="Webhook endpoints">
        {data?.webhookEndpoints.map((ep) => (
          <Endpoint
            key={ep.id}
            endpoint={ep}
            eventTypes={eventTypes}
            busy={busy}
            onReload={refresh}
            onUpdate={(input) => void update({ input })}
            onTest={async (id) => {
              if (!(await sendTest({ id })).error) refresh();
            }}
            onRotate={async (id, graceSeconds, url) => {
              const r = await rotate({ id, graceSeconds });
              if (r.data) setSecret({ url, secret: r.data.rotateWebhookSecret.secret });
            }}
            onDelete={async (id) => {
              if (!(await remove({ id })).error) refresh();
            }}
          />
        ))}
      </ul>
    </section>
  );
}
