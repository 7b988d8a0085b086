import { builder } from '../graphql/builder.js';
import { requireAccess } from '../graphql/context.js';
import { verifyChain, type ChainStatus } from './chain.js';
import type { AuditEventRow } from './log.js';

export const AuditEventRef = builder.objectRef<AuditEventRow>('AuditEvent').implement({
  fields: (t) => ({
    seq: t.int({ resolve: (e) => e.seq }),
    stream: t.exposeString('stream'),
    type: t.exposeString('type'),
    actorType: t.exposeString('actorType'),
    actorId: t.exposeString('actorId', { nullable: true }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
    hash: t.exposeString('hash'),
    prevHash: t.exposeString('prevHash', { nullable: true }),
    data: t.field({ type: 'JSON', resolve: (e) => e.data }),
  }),
});

const AuditChainStatusRef = builder.objectRef<ChainStatus>('AuditChainStatus').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    events: t.exposeInt('events'),
    firstBrokenSeq: t.exposeInt('firstBrokenSeq', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  auditChain: t.field({
    type: AuditChainStatusRef,
    authScopes: { authenticated: true },
    description: "Verifies every stream of the viewer's tenant and the checkpoints that record them.",
    resolve: (_r, _a, ctx) => verifyChain(ctx.em, requireAccess(ctx).viewer.tenantId),
  }),
}));
