import { stream } from '../audit/log.js';
import { verifyStream } from '../audit/chain.js';
import type { ChainStatus } from '../audit/chain.js';
import { builder } from '../graphql/builder.js';
import { ApprovalRequest } from './entities.js';
import { ApprovalRef, visibleApproval } from './graphql.js';

// Approval fields the reviewer console reads: the request this one replaced (the reverse of
// supersededBy, so the page can link to it and show what changed) and this approval's own
// audit-trail status (its stream, not the whole tenant's).

const AuditStreamStatusRef = builder.objectRef<ChainStatus>('AuditStreamStatus').implement({
  description: "One stream's audit status: links, hashes, signatures and the heads signed checkpoints recorded for it.",
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    events: t.exposeInt('events'),
    signedEvents: t.exposeInt('signedEvents'),
    firstBrokenSeq: t.exposeInt('firstBrokenSeq', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  supersedes: t.field({
    type: ApprovalRef,
    nullable: true,
    description: 'The request this one superseded (same task), when the viewer may see it.',
    resolve: async (a, _x, ctx) => {
      const previous = await ctx.em.findOne(ApprovalRequest, { supersededById: a.id, tenantId: a.tenantId }, { fields: ['id'] });
      return previous ? visibleApproval(ctx, previous.id) : null;
    },
  }),
  auditStatus: t.field({
    type: AuditStreamStatusRef,
    description: "Verification of this approval's audit stream (the events listed in `events`).",
    resolve: (a, _x, ctx) => verifyStream(ctx.em, a.tenantId, stream.approval(a.id)),
  }),
}));
