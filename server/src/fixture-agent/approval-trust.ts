import { isPlainObject } from '../lib/untrusted.js';
import { fetchJwks, jwksUrl, type Jwks } from '../verify-approval/index.js';

// Which Taskbay the fixture agent trusts to approve (docs/VERIFYING-APPROVALS.md). Told one, it
// fetches that Taskbay's JWKS for each approved message before the (synchronous) script checks
// the signature; told none, the script checks the digest only (seed 000: the agent's choice).

export interface TrustedTaskbay {
  /** Taskbay's public URL: the iss its signatures carry. */
  issuer: string;
  /** Where its JWKS is fetched; default <issuer>/.well-known/jwks.json. */
  jwksUrl?: string;
}

/** The keys an approved message is checked against, or why there are none (the approval is then refused). */
export type ApprovalKeysCheck = { issuer: string; jwks: Jwks } | { issuer: string; error: string };

const carriesApproval = (params: unknown): boolean =>
  isPlainObject(params) && isPlainObject(params.message) && isPlainObject(params.message.metadata) && 'approval' in params.message.metadata;

export function createApprovalTrust(initial?: TrustedTaskbay) {
  let trusted = initial;
  return {
    set(taskbay: TrustedTaskbay | undefined) {
      trusted = taskbay;
    },
    /** For a SendMessage's params: the trusted Taskbay's keys when the message carries an approval, else undefined. */
    async keysFor(params: unknown): Promise<ApprovalKeysCheck | undefined> {
      const taskbay = trusted;
      if (!taskbay || !carriesApproval(params)) return undefined;
      try {
        return { issuer: taskbay.issuer, jwks: await fetchJwks(taskbay.jwksUrl ?? jwksUrl(taskbay.issuer)) };
      } catch (e) {
        return { issuer: taskbay.issuer, error: `the JWKS could not be fetched (${(e as Error).message})` };
      }
    },
  };
}

export type ApprovalTrust = ReturnType<typeof createApprovalTrust>;
