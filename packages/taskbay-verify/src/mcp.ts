import { canonicalJson } from './canonical-json.js';
import type { Jwks } from './jws.js';
import { type SignedApproval, type Verdict, verifySignedApproval, type OtherApprovedAction } from './verify.js';
import type { ApprovalAction } from './digest.js';

// For an MCP server behind Taskbay's gateway (docs/MCP.md "The gateway"): a held tools/call
// arrives after its approval with the signed approval in `_meta["io.taskbay/approval"]`. A server
// that cooperates checks it before it acts: Taskbay's signature, and that the approved call is
// exactly this call (this tool, these arguments), so neither a call that skipped the gateway nor
// one changed after the approval runs.

/** The `_meta` key of a tools/call the gateway forwards after its approval. */
export const MCP_APPROVAL_META_KEY = 'io.taskbay/approval';

/** A tools/call request's params as an MCP server's handler gets them. */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface VerifyToolCallOptions {
  jwks: Jwks;
  /** The Taskbay trusted (its public URL), as configured. */
  issuer: string;
  /** When given, the approval must be for a call of the server of this name in that Taskbay. */
  server?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Verifies the approval a forwarded tools/call carries. ok only when the signed approval verifies
 * and its action is the call `{server, tool, arguments}` with this tool and exactly these
 * arguments (canonical JSON). Never throws: a refusal says why.
 */
export function verifyToolCallApproval(params: ToolCallParams, opts: VerifyToolCallOptions): Verdict<ApprovalAction | OtherApprovedAction> {
  const signed = isObject(params._meta) ? params._meta[MCP_APPROVAL_META_KEY] : undefined;
  if (!isObject(signed))
    return {
      ok: false,
      reason: `the call carries no approval (_meta["${MCP_APPROVAL_META_KEY}"]): it did not come through Taskbay's gateway after an approval`,
    };
  const verdict = verifySignedApproval(signed as unknown as SignedApproval, { jwks: opts.jwks, issuer: opts.issuer });
  if (!verdict.ok) return verdict;
  const data = (verdict.action as { data?: unknown }).data;
  if (!isObject(data) || typeof data.tool !== 'string' || typeof data.server !== 'string') return { ok: false, reason: 'the approval is not of a tool call' };
  if (data.tool !== params.name) return { ok: false, reason: `the approval is for the tool ${JSON.stringify(data.tool)}, not ${JSON.stringify(params.name)}` };
  if (opts.server !== undefined && data.server !== opts.server)
    return { ok: false, reason: `the approval is for the MCP server ${JSON.stringify(data.server)}, not ${JSON.stringify(opts.server)}` };
  if (canonicalJson(data.arguments ?? {}) !== canonicalJson(params.arguments ?? {})) return { ok: false, reason: 'the arguments are not the approved ones' };
  return verdict;
}
