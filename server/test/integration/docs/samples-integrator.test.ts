import { createHash, createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advertises, validateAgentCard } from '../../../src/a2a/card.js';
import { actionDigest } from '../../../src/approvals/digest.js';
import { readEvidencePart } from '../../../src/evidence/part.js';
import { EXECUTION_EVIDENCE_EXTENSION, executionEvidencePart, JWKS_PATH, receivedAction } from '../../../src/verify-approval/index.js';
import { codeOf, createMember, startTestInstance, type TestInstance } from '../../support/harness.js';
import { REPO_ROOT } from '../../support/repo-root.js';
import { sampleJson, sampleText, shapeOf } from '../../support/doc-samples.js';

// The samples of docs/VERIFYING-APPROVALS.md and docs/WEBHOOKS.md that are not scripts: each
// read by the code the server itself uses, or sent to a real Taskbay on loopback. (The script
// verify-approval.mjs runs in packages/agent-taskbay.test.ts, where agent-taskbay is installed
// packed; webhook-receiver.mjs in webhooks/sending.test.ts. unit/docs-samples.test.ts checks that
// the pages show exactly these files.)

let t: TestInstance;

beforeAll(async () => {
  // The webhook sample's host resolves, for this instance only, to loopback (as in webhooks/sending.test.ts).
  t = await startTestInstance({
    network: {
      resolve: async (hostname) => {
        if (hostname === 'hooks.example.com') return ['127.0.0.1'];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      },
      dial: () => '127.0.0.1',
    },
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('docs/VERIFYING-APPROVALS.md', () => {
  it('jwks.json has the shape of the JWKS a real Taskbay answers, and its kid is the RFC 7638 thumbprint of its key', async () => {
    const res = await fetch(`${t.instance.url}${JWKS_PATH}`);
    expect(res.status).toBe(200);
    const served = await res.json();
    const shown = sampleJson('jwks.json');
    expect(shapeOf(shown)).toEqual(shapeOf(served));
    const [key] = shown.keys;
    expect({ kty: key.kty, crv: key.crv, alg: key.alg, use: key.use }).toEqual({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x }, format: 'jwk' }).asymmetricKeyType).toBe('ed25519');
    const thumbprint = (k: { crv: string; kty: string; x: string }) =>
      createHash('sha256')
        .update(JSON.stringify({ crv: k.crv, kty: k.kty, x: k.x }))
        .digest('base64url');
    // The rule is the server's: its own key's kid is computed the same way.
    expect(served.keys[0].kid).toBe(thumbprint(served.keys[0]));
    expect(key.kid).toBe(thumbprint(key));
  });

  it('evidence-agent-card.json is a valid card that advertises execution evidence (the check Taskbay makes before reading a report)', () => {
    const card = validateAgentCard(sampleJson('evidence-agent-card.json'));
    expect(advertises(card, EXECUTION_EVIDENCE_EXTENSION)).toBe(true);
    expect(advertises(card, 'https://extensions.allsrc.dev/agent-taskbay/approval-request/v1')).toBe(true);
  });

  it('execution-evidence-part.json is read as a report by the server, and reports approved-message.json executed as received', () => {
    const part = sampleJson('execution-evidence-part.json');
    const read = readEvidencePart([part]);
    expect(read).toEqual({
      ok: true,
      report: {
        requestId: part.data.requestId,
        decisionId: part.data.decisionId,
        executedDigest: part.data.executedDigest,
        outcome: 'SUCCEEDED',
        detail: part.data.detail,
      },
    });
    // The digest rule applied to what approved-message.json delivers: executionEvidencePart builds exactly this part.
    const action = receivedAction(sampleJson('approved-message.json'));
    expect(part.data.executedDigest).toBe(actionDigest(action));
    expect(executionEvidencePart(part.data, action, 'succeeded', part.data.detail)).toEqual(part);
  });
});

describe('docs/WEBHOOKS.md', () => {
  it('create-webhook-endpoint.graphql, sent by an admin to a real Taskbay, creates the endpoint and shows its secret once; a member is refused', async () => {
    const document = sampleText('create-webhook-endpoint.graphql');
    const created = await t.gql(document);
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    const { endpoint, secret } = created.data.createWebhookEndpoint;
    expect(secret).toMatch(/^whsec_/);
    const listed = await t.gql(`{ webhookEndpoints { id url description eventTypes enabled } }`);
    expect(listed.data.webhookEndpoints).toEqual([
      {
        id: endpoint.id,
        url: 'https://hooks.example.com/taskbay',
        description: 'on-call channel',
        eventTypes: ['APPROVAL_REQUESTED', 'APPROVAL_DECIDED', 'DELIVERY_FAILED'],
        enabled: true,
      },
    ]);
    const member = await createMember(t);
    expect(codeOf(await t.gql(document, {}, member.token))).toBe('FORBIDDEN');
  });
});

describe('docs/CLIENT.md', () => {
  it('graphql-ws-connect.mjs: the literal connectionParams object authenticates over graphql-ws', async () => {
    const { execFile } = await import('node:child_process');
    const run = (token: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [`${REPO_ROOT}docs/samples/graphql-ws-connect.mjs`],
          { env: { ...process.env, TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: token } },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const ok = await run(t.adminToken);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ viewer: { email: 'admin@localhost' } });
    // The same script with a token that names nothing is refused, so the token above is what let it in.
    const refused = await run('tb_not_a_token');
    expect(refused.code).not.toBe(0);
  });
});
