import { ApprovalRequest } from '../approvals/entities.js';
import { Access } from '../access.js';
import { viewerForToken, canView } from '../auth/module.js';
import { Agent } from '../agents/entities.js';
import { Decision } from '../decisions/entities.js';
import { bearerToken, sendJson } from '../http/json.js';
import { isUuid } from '../lib/untrusted.js';
import type { Route } from '../http/route.js';
import { commandRefOf, ContractInvalid, exportApprovalContract } from './agents-approval.js';

// GET /contracts/agents.approval@1/approvals/<id>: one approval as an agents.approval@1 record
// (the same object as the GraphQL `contract` field), validated before it is sent.

/** The raw uuid, or `apr_` + its 32 hex digits. */
export function approvalUuid(id: string): string | null {
  if (isUuid(id)) return id.toLowerCase();
  const m = /^apr_([0-9a-f]{32})$/i.exec(id);
  if (!m) return null;
  const h = m[1]!.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const contractRoute: Route = {
  method: 'GET',
  path: /^\/contracts\/agents\.approval@1\/approvals\/([^/]+)$/,
  async handler(req, res, ctx, [rawId]) {
    const em = ctx.orm.em.fork();
    const token = bearerToken(req);
    const viewer = token ? await viewerForToken(em as never, token) : null;
    if (!viewer) return sendJson(res, 401, { error: 'UNAUTHENTICATED', message: 'send Authorization: Bearer <api token>' });
    const access = new Access(em as never, viewer);
    let id: string | null = null;
    try {
      id = approvalUuid(decodeURIComponent(rawId ?? ''));
    } catch {
      id = null;
    }
    const approval = id ? await em.findOne(ApprovalRequest, { id, tenantId: viewer.tenantId }) : null;
    if (!approval || !(await canView(access, approval))) return sendJson(res, 404, { error: 'NOT_FOUND', message: 'approval not found' });
    const decisions = await em.find(Decision, { approvalId: approval.id }, { orderBy: { decidedAt: 'asc' } });
    const agent = approval.agentId ? await em.findOne(Agent, { id: approval.agentId }) : null;
    const command = await commandRefOf(em as never, approval);
    let record;
    try {
      record = exportApprovalContract(approval, decisions, agent?.name ?? null, command);
    } catch (e) {
      if (!(e instanceof ContractInvalid)) throw e;
      return sendJson(res, 500, { error: 'INTERNAL', message: 'the export does not validate against agents.approval@1', errors: e.errors });
    }
    sendJson(res, 200, record);
  },
};
