// The names an agent and Taskbay agree on (seed 000; docs/VERIFYING-APPROVALS.md). The server
// takes them from here too (a2a/extensions.ts, approval-signing/), so there is one spelling.

/** The JWS `typ` of an approval signature (RFC 8725 explicit typing: no other token passes for one). */
export const APPROVAL_TOKEN_TYPE = 'taskbay-approval+jwt';

/** Where Taskbay publishes its approval signing keys, below its public URL. */
export const JWKS_PATH = '/.well-known/jwks.json';

/** The fields of metadata.approval (seed 000) that the signature covers. */
export const SIGNED_FIELDS = ['requestId', 'decisionId', 'revision', 'revisionDigest'] as const;

/** The extension an agent advertises to ask for approvals (seed 000). */
export const APPROVAL_REQUEST_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/approval-request/v1';

/** The media type of the approval-request data part an agent sends (seed 000). */
export const APPROVAL_REQUEST_MEDIA_TYPE = 'application/vnd.agent-taskbay.approval-request+json';

/** The media type of the one data part of an approved send_data message (seed 000: "values is sent as one application/json data part"). */
export const JSON_MEDIA_TYPE = 'application/json';

/** The extension an agent advertises in its card (capabilities.extensions[].uri) to have its execution reports accepted. */
export const EXECUTION_EVIDENCE_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/execution-evidence/v1';

/** The media type of the execution-evidence data part. */
export const EXECUTION_EVIDENCE_MEDIA_TYPE = 'application/vnd.agent-taskbay.execution-evidence+json';

/** At most this many characters of an evidence `detail` are accepted; a longer one refuses the report. */
export const EVIDENCE_DETAIL_MAX_CHARS = 2000;
