// Before acting on a request you opened (createApproval, a command hook, any request without an
// A2A task): check that Taskbay approved exactly this action, for your call or thread, then print
// what to run. Needs `npm install jose canonicalize`.
//   TASKBAY_URL=https://taskbay.example.com TASKBAY_TOKEN=tb_... node verify-signed-approval.mjs <approval id> [external id]
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { createLocalJWKSet, jwtVerify } from 'jose';

const TASKBAY = process.env.TASKBAY_URL;
const ISSUER = process.env.TASKBAY_ISSUER || TASKBAY; // configured, never read from an answer
const JWKS_URL = process.env.TASKBAY_JWKS_URL || `${ISSUER.replace(/\/+$/, '')}/.well-known/jwks.json`;
const [approvalId, externalId] = process.argv.slice(2);

const refuse = (reason) => {
  console.error(`not running it: ${reason}`);
  process.exit(1);
};

const res = await fetch(`${TASKBAY}/graphql`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.TASKBAY_TOKEN}` },
  body: JSON.stringify({
    query: `query($id: ID!) { approval(id: $id) { status
      signedApproval { requestId decisionId revision revisionDigest signature action externalId } } }`,
    variables: { id: approvalId },
  }),
});
const { data, errors } = await res.json();
if (errors) refuse(errors[0].message);
const signed = data.approval?.signedApproval;
if (!signed) refuse(`the request is ${data.approval?.status ?? 'not found'}, not approved`);

// 1. Taskbay's signature: a key of its JWKS (cache it; fetch again for an unknown kid), its typ, its issuer.
const jwks = await (await fetch(JWKS_URL)).json();
const { payload } = await jwtVerify(signed.signature, createLocalJWKSet(jwks), { issuer: ISSUER, typ: 'taskbay-approval+jwt' }).catch((e) =>
  refuse(`the signature does not verify: ${e.message}`),
);
// 2. The claims name what the answer shows, and your own call or thread id.
for (const claim of ['requestId', 'decisionId', 'revision', 'revisionDigest']) {
  if (payload[claim] !== signed[claim]) refuse(`${claim} is ${signed[claim]}; the signature says ${payload[claim]}`);
}
if ((payload.externalId ?? null) !== signed.externalId) refuse('externalId differs from the signed one');
if (externalId && payload.externalId !== externalId) refuse(`this approval is for ${payload.externalId ?? 'no externalId'}, not ${externalId}`);
// 3. The digest of the action you are about to run, recomputed here (RFC 8785, SHA-256).
const digest = createHash('sha256').update(canonicalize(signed.action), 'utf8').digest('hex');
if (digest !== payload.revisionDigest) refuse(`the action has digest ${digest}; the approved one is ${payload.revisionDigest}`);

// Act on payload.decisionId once only. signed.action is what was approved (a reviewer may have edited it).
console.log(JSON.stringify({ decisionId: payload.decisionId, revision: payload.revision, action: signed.action }));
