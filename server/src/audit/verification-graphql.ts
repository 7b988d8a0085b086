import { builder } from '../graphql/builder.js';
import { AuditChainStatusRef } from './graphql.js';
import { chainStatus } from './verification.js';
import { requestFullVerification } from './verification-job.js';
import type { FullVerification } from './verification-store.js';

// How far auditChain's answer reaches, and the admin's full re-verification with its progress
// (audit/verification.ts).

const FullVerificationStateEnum = builder.enumType('AuditFullVerificationState', {
  values: ['QUEUED', 'RUNNING', 'DONE', 'FAILED'] as const,
});

const AuditFullVerificationRef = builder.objectRef<FullVerification>('AuditFullVerification').implement({
  description: "A full re-verification of the tenant's audit log by the worker (verifyAuditChain): every event and checkpoint again, from the first.",
  fields: (t) => ({
    state: t.field({ type: FullVerificationStateEnum, resolve: (f) => f.state }),
    processed: t.exposeInt('processed', { description: 'Events verified so far.' }),
    total: t.exposeInt('total', { description: 'Events to verify (0 until it starts).' }),
    requestedAt: t.field({ type: 'DateTime', resolve: (f) => f.requestedAt }),
    startedAt: t.field({ type: 'DateTime', nullable: true, resolve: (f) => f.startedAt }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (f) => f.finishedAt }),
    error: t.exposeString('error', { nullable: true }),
  }),
});

builder.objectFields(AuditChainStatusRef, (t) => ({
  verifiedThroughSeq: t.int({
    nullable: true,
    description: 'auditChain: every event of the tenant up to this seq is covered by this answer. Null on Approval.chain, which verifies its whole stream.',
    resolve: (s) => s.coverage?.verifiedThroughSeq ?? null,
  }),
  pendingEvents: t.int({
    description:
      'auditChain: newer events this answer does not cover yet (more than it verifies on a request; the worker verifies them after the next checkpoint). 0: the answer covers the whole log.',
    resolve: (s) => s.coverage?.pendingEvents ?? 0,
  }),
  checkedAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'auditChain: when the worker stored the verification this answer continues (null: none yet; the answer verified the log itself).',
    resolve: (s) => s.coverage?.checkedAt ?? null,
  }),
  fullVerification: t.field({
    type: AuditFullVerificationRef,
    nullable: true,
    description: 'auditChain: the last full re-verification asked for (verifyAuditChain), with its progress.',
    resolve: (s) => s.coverage?.full ?? null,
  }),
}));

builder.mutationFields((t) => ({
  verifyAuditChain: t.withAuth({ admin: true }).field({
    type: AuditChainStatusRef,
    description:
      "Starts a full re-verification of the tenant's audit log in the worker (unless one is queued or running), which finds a rewrite of events verified before; auditChain.fullVerification reports its progress, and auditChain its result once DONE.",
    resolve: async (_r, _a, ctx) => {
      const tenantId = ctx.access.viewer.tenantId;
      await requestFullVerification(ctx.em, tenantId);
      return chainStatus(ctx.em, tenantId);
    },
  }),
}));
