import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { createMember, eventually, startTestInstance, type TestInstance } from '../../../server/test/support/harness.js';

// What the @taskbay/agent tests share: a real Taskbay (server/test/support/harness.ts) whose
// public URL is its own address (so the issuer of its signatures is the URL the agent is given),
// an agent account (a member's API token: the requester), and the reviewer, the tenant's admin,
// another person, who decides over GraphQL once the request is in their inbox.

export interface Taskbay {
  t: TestInstance;
  /** What an agent is configured with: the server and its own token. */
  agent: { url: string; token: string };
  agentUserId: string;
  reviewerId: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startTaskbay(opts: Parameters<typeof startTestInstance>[0] = {}): Promise<Taskbay> {
  const port = await freePort();
  const t = await startTestInstance({ ...opts, env: { PORT: String(port), TASKBAY_PUBLIC_URL: `http://127.0.0.1:${port}`, ...opts.env } });
  const member = await createMember(t);
  const viewer = await t.gql<{ viewer: { id: string } }>('{ viewer { id } }');
  return { t, agent: { url: t.instance.url, token: member.token }, agentUserId: member.id, reviewerId: viewer.data!.viewer.id };
}

export interface InboxRequest {
  id: string;
  title: string;
  revision: number;
  digest: string;
  action: { kind: 'send_message'; text: string; data: { toolName: string; arguments: unknown } | null };
  externalId: string | null;
  editable: boolean;
  requester: { id: string } | null;
}

const INBOX = `query($externalId: String) { approvals(status: [PENDING], externalId: $externalId, first: 5) {
  edges { node { id title revision digest action externalId editable requester { id } } } } }`;

/** The reviewer's inbox: waits until the pending request opened with this externalId is there. */
export async function inboxRequest(tb: Taskbay, externalId: string): Promise<InboxRequest> {
  return eventually(async () => {
    const r = await tb.t.gql(INBOX, { externalId });
    if (r.errors) throw new Error(JSON.stringify(r.errors));
    const nodes = r.data.approvals.edges.map((e: { node: InboxRequest }) => e.node);
    if (nodes.length > 1) throw new Error(`${nodes.length} pending requests with externalId ${externalId}`);
    return nodes[0] as InboxRequest | undefined;
  });
}

async function decide(tb: Taskbay, mutation: string, variables: Record<string, unknown>) {
  const r = await tb.t.gql(mutation, variables);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data;
}

export const reviewer = {
  approve: (tb: Taskbay, a: InboxRequest, comment?: string) =>
    decide(tb, 'mutation($id: ID!, $r: Int!, $d: String!, $c: String) { approve(input: { approvalId: $id, revision: $r, digest: $d, comment: $c }) { id } }', {
      id: a.id,
      r: a.revision,
      d: a.digest,
      c: comment,
    }),
  reject: (tb: Taskbay, a: InboxRequest, comment?: string) =>
    decide(tb, 'mutation($id: ID!, $r: Int!, $d: String!, $c: String) { reject(input: { approvalId: $id, revision: $r, digest: $d, comment: $c }) { id } }', {
      id: a.id,
      r: a.revision,
      d: a.digest,
      c: comment,
    }),
  /** Edit then approve: the same action with other tool arguments. */
  editArguments: (tb: Taskbay, a: InboxRequest, args: unknown, comment?: string) =>
    decide(
      tb,
      'mutation($id: ID!, $r: Int!, $d: String!, $a: JSON!, $c: String) { editAndApprove(input: { approvalId: $id, revision: $r, digest: $d, action: $a, comment: $c }) { id } }',
      { id: a.id, r: a.revision, d: a.digest, a: { ...a.action, data: { ...a.action.data, arguments: args } }, c: comment },
    ),
};

/** The request as Taskbay holds it once decided (the admin's view), to compare what the agent got with. */
export async function decided(tb: Taskbay, id: string) {
  const r = await tb.t.gql(
    `query($id: ID!) { approval(id: $id) { id status revision digest action externalId editable
      signedApproval { requestId decisionId revision revisionDigest signature action externalId }
      decisions { id outcome comment vote reviewer { id } signedApproval { requestId decisionId revision revisionDigest signature action externalId } } } }`,
    { id },
  );
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.approval;
}

/**
 * A fetch for the agent that hands Taskbay's answer about a decided request (the agent's read of
 * its decision) to `tamper` first: what a proxy, or anyone between the agent and Taskbay, could
 * do. Everything else passes untouched.
 */
export function tamperingFetch(tamper: (approval: any) => void): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (typeof init?.body !== 'string' || !init.body.includes('TaskbayAgentApprovalDecided')) return res;
    const body = await res.json();
    if (body.data?.approval) tamper(body.data.approval);
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };
}

/** The signed approvals of a decided request's answer (Approval.signedApproval and each decision's). */
export function signedApprovalsOf(approval: any): any[] {
  return [approval.signedApproval, ...(approval.decisions ?? []).map((d: any) => d.signedApproval)].filter(Boolean);
}

/**
 * The same claims and header, signed by a key that is not Taskbay's (under Taskbay's key id):
 * the JWS of someone who knows everything but the private key.
 */
export function forgeSignature(jws: string): string {
  const [header, payload] = jws.split('.');
  const { privateKey } = generateKeyPairSync('ed25519');
  const signature = sign(null, Buffer.from(`${header}.${payload}`), privateKey).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

/**
 * A Taskbay whose webhooks (APPROVAL_DECIDED) reach `listener` on loopback: receiver.test
 * resolves to 127.0.0.1 for this instance only (as webhooks/sending.test.ts does). Answers the instance,
 * the receiver and the endpoint's signing secret.
 */
export async function startTaskbayWithWebhooks(listener: RequestListener): Promise<{ tb: Taskbay; receiver: Server; secret: string }> {
  const receiver = createHttpServer(listener);
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverPort = (receiver.address() as AddressInfo).port;
  const tb = await startTaskbay({
    network: {
      resolve: async (host) => {
        if (host === 'receiver.test') return ['127.0.0.1'];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
      dial: () => '127.0.0.1',
    },
    env: { TASKBAY_WEBHOOK_RETRY_BASE: '1' },
  });
  const r = await tb.t.gql<{ createWebhookEndpoint: { secret: string } }>(
    `mutation($url: String!) { createWebhookEndpoint(input: { url: $url, eventTypes: [APPROVAL_DECIDED] }) { secret } }`,
    { url: `http://receiver.test:${receiverPort}/hook` },
  );
  if (r.errors) throw new Error(`createWebhookEndpoint: ${JSON.stringify(r.errors)}`);
  return { tb, receiver, secret: r.data!.createWebhookEndpoint.secret };
}
