import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { GraphQLError } from 'graphql';
import { Access } from '../access.js';
import { viewerForToken } from '../auth/module.js';
import { type ApprovalKeys, signedApprovalOf } from '../approval-signing/module.js';
import { DomainError } from '../errors.js';
import type { Route, RouteContext } from '../http/route.js';
import { bearerToken, readJsonBody, sendJson } from '../http/json.js';
import { unstorableReason } from '../db/storable.js';
import { approvalRequestEnvelope } from './rules.js';
import { executedPayload } from './replay.js';
import { consumeGrant, reportOutcome, revokeGrant } from './grant-use.js';
import { effectiveGrantStatus, getCommandView, requestCommandApproval, type CommandView } from './service.js';
import { Decision } from '../decisions/entities.js';

// The hook-facing REST surface (token-authed) of command approvals (seed 002). The same
// services back the GraphQL mutations; errors carry the contract's codes.

const STATUS: Record<string, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_USER_INPUT: 400,
  NOT_PENDING: 409,
  STALE_REVISION: 409,
  ALREADY_VOTED: 409,
  SEPARATION_OF_DUTIES: 403,
  INVALID_ACTION: 409,
  EXPIRED: 410,
};

/**
 * The JSON view the hook and the CLI read: seed 002's APPROVAL_REQUEST `envelope` (what the agent
 * relays verbatim) and Taskbay's own fields.
 */
export function commandJson(v: CommandView) {
  return {
    envelope: approvalRequestEnvelope(v.command),
    approval_id: v.command.approvalId,
    id: encodeGlobalID('Approval', v.approval.id),
    approval_uuid: v.approval.id,
    kind: v.command.kind,
    agent_id: v.command.agentId,
    commands: v.command.commands,
    payload: v.command.payload,
    fingerprint: v.command.fingerprint,
    status: v.command.status,
    approval_status: v.approval.status,
    revision: v.approval.revision,
    digest: v.approval.digest,
    expires_at: v.approval.expiresAt?.toISOString() ?? null,
    external_id: v.approval.externalId ?? null,
    grant: v.grant
      ? {
          status: effectiveGrantStatus(v.grant),
          expires_at: v.grant.expiresAt.toISOString(),
          consumed_at: v.grant.consumedAt?.toISOString() ?? null,
        }
      : null,
  };
}

/**
 * The signed approval of an approved command, as `Decision.signedApproval` shows it:
 * the deciding decision's JWS when it verifies for that decision and its sealed action, so a
 * hook can check what it runs against Taskbay's JWKS. Null until approved, and for a decision
 * without a valid one.
 */
async function signedApprovalJson(em: EntityManager, keys: ApprovalKeys, v: CommandView) {
  if (v.approval.status !== 'APPROVED') return null;
  const decision = await em.findOne(Decision, { approvalId: v.approval.id, vote: false, outcome: { $in: ['APPROVE', 'EDIT_AND_APPROVE'] } });
  if (!decision || decision.revision !== v.approval.revision) return null;
  const s = signedApprovalOf(keys, decision, v.approval, v.approval.action);
  return (
    s && {
      request_id: s.requestId,
      decision_id: s.decisionId,
      revision: s.revision,
      revision_digest: s.revisionDigest,
      signature: s.signature,
      action: s.action,
      external_id: s.externalId,
    }
  );
}

/** Every answer about one command approval: commandJson and its `signed_approval`. */
async function commandAnswer(em: EntityManager, ctx: RouteContext, v: CommandView) {
  return { ...commandJson(v), signed_approval: await signedApprovalJson(em, ctx.deps.approvalKeys, v) };
}

type Handler = (
  access: Access,
  em: EntityManager,
  ctx: RouteContext,
  params: string[],
  body: () => Promise<Record<string, unknown>>,
) => Promise<[number, unknown]>;

function authed(handler: Handler): Route['handler'] {
  return async (req: IncomingMessage, res: ServerResponse, ctx: RouteContext, params: string[]) => {
    const em = ctx.orm.em.fork() as unknown as EntityManager;
    const token = bearerToken(req);
    const viewer = token ? await viewerForToken(em, token) : null;
    if (!viewer) return sendJson(res, 401, { error: 'UNAUTHENTICATED', message: 'send Authorization: Bearer <api token>' });
    const body = async () => {
      // No body at all (content-length 0) is an empty object: consume takes an optional one.
      if (req.headers['content-length'] === '0' || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) return {};
      const b = await readJsonBody(req, 256 * 1024);
      if (!b.ok) throw new DomainError('BAD_USER_INPUT', b.error);
      if (typeof b.value !== 'object' || b.value === null || Array.isArray(b.value)) throw new DomainError('BAD_USER_INPUT', 'body must be a JSON object');
      // As for GraphQL (graphql/storable-input.ts): what Postgres cannot hold is refused here, not deep in a transaction.
      const unstorable = unstorableReason(b.value);
      if (unstorable) throw new DomainError('BAD_USER_INPUT', `the request cannot be stored: ${unstorable}`);
      return b.value as Record<string, unknown>;
    };
    try {
      const [status, out] = await handler(new Access(em, viewer), em, ctx, params.map(safeDecode), body);
      sendJson(res, status, out);
    } catch (e) {
      if (e instanceof GraphQLError && typeof e.extensions.code === 'string') {
        const { code, ...rest } = e.extensions;
        return sendJson(res, STATUS[code] ?? 400, { error: code, message: e.message, ...rest });
      }
      throw e;
    }
  };
}

const ID = '([^/]+)';

function safeDecode(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    return '';
  }
}

export const commandRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/api\/command-approvals$/,
    handler: authed(async (access, em, ctx, _p, body) => {
      const b = await body();
      const v = await requestCommandApproval(em, access, ctx.deps.config, {
        agent_id: b.agent_id,
        payload: b.payload,
        commands: b.commands,
        verification: b.verification,
        expires_in_seconds: b.expires_in_seconds,
        resume: b.resume,
        external_id: b.external_id,
      });
      return [v.created ? 201 : 200, { ...(await commandAnswer(em, ctx, v)), created: v.created }];
    }),
  },
  {
    method: 'GET',
    path: new RegExp(`^/api/command-approvals/${ID}$`),
    handler: authed(async (access, em, ctx, [id]) => [200, await commandAnswer(em, ctx, await getCommandView(em, access, id!))]),
  },
  {
    method: 'POST',
    path: new RegExp(`^/api/command-approvals/${ID}/consume$`),
    handler: authed(async (access, em, ctx, [id], body) => {
      const b = await body();
      return [200, await commandAnswer(em, ctx, await consumeGrant(em, access, ctx.deps.config, id!, { agent_id: b.agent_id }))];
    }),
  },
  {
    method: 'POST',
    path: new RegExp(`^/api/command-approvals/${ID}/outcome$`),
    handler: authed(async (access, em, ctx, [id], body) => {
      const b = await body();
      const r = await reportOutcome(em, access, id!, { exit_code: b.exit_code, detail: b.detail });
      return [200, { event: r.type, ...(await commandAnswer(em, ctx, r.view)) }];
    }),
  },
  {
    // Seed 002 `gaia approvals replay`: the commands the EXECUTED event recorded.
    method: 'GET',
    path: new RegExp(`^/api/command-approvals/${ID}/executed$`),
    handler: authed(async (access, em, ctx, [id]) => {
      const r = await executedPayload(em, access, id!);
      return [200, { approval_id: r.approvalId, commands: r.commands, exit_code: r.exitCode, executed_at: r.executedAt.toISOString() }];
    }),
  },
  {
    method: 'POST',
    path: new RegExp(`^/api/command-approvals/${ID}/revoke$`),
    handler: authed(async (access, em, ctx, [id]) => [200, await commandAnswer(em, ctx, await revokeGrant(em, access, id!))]),
  },
];
