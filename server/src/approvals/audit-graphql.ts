import {
  AuditChainStatusRef,
  AuditEventRef,
  IntegrityAlertRef,
  verifyStream,
  INTEGRITY_ALERT,
  isSignedByTaskbay,
  trustedAuditKey,
  stream,
} from '../audit/module.js';
import { builder } from '../graphql/builder.js';
import { ApprovalRef } from './graphql.js';

// The audit's part of Approval: its own stream, that stream's verification, and the integrity
// alerts of the request.
builder.objectFields(ApprovalRef, (t) => ({
  events: t.field({ type: [AuditEventRef], resolve: (a, _x, ctx) => ctx.loaders.events.load(stream.approval(a.id)) }),
  chain: t.field({
    type: AuditChainStatusRef,
    description:
      "Verifies this approval's own audit stream (links, hashes, signatures) and the signed checkpoints that record it, as auditChain does for the whole tenant; costs what this approval's events cost.",
    resolve: (a, _x, ctx) => verifyStream(ctx.em, a.tenantId, stream.approval(a.id)),
  }),
}));

builder.objectFields(ApprovalRef, (t) => ({
  integrityAlerts: t.field({
    type: [IntegrityAlertRef],
    description:
      'The integrity alerts of this request, oldest first: only those Taskbay signed (an alert inserted into the log by someone else is not shown; auditChain reports it).',
    resolve: async (a, _x, ctx) => {
      const key = trustedAuditKey(ctx.em);
      return (await ctx.loaders.events.load(stream.approval(a.id))).filter(
        (e) => e.type === INTEGRITY_ALERT && e.tenantId === a.tenantId && isSignedByTaskbay(key, e),
      );
    },
  }),
}));
