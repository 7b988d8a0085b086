import { badInput } from '../errors.js';
import { builder } from '../graphql/builder.js';
import { AUDIT_LIMITS, codePointLength } from '../limits.js';
import { acknowledgeFailure, type AuditFailure } from './failures.js';
import { AuditChainStatusRef } from './graphql.js';
import { chainStatus } from './verification.js';
import { requestFullVerification } from './verification-job.js';
import type { FullVerification } from './verification-store.js';

// How far auditChain's answer reaches, the admin's full re-verification with its progress
// (audit/verification.ts), and the failure found earlier that stays until an admin acknowledges
// it (audit/failures.ts).

const AuditFailureRef = builder.objectRef<AuditFailure>('AuditFailure').implement({
  description:
    "A verification of the tenant's audit log that failed. It keeps auditChain.ok false, even once the log verifies again (say a cut tail), until an admin acknowledges it.",
  fields: (t) => ({
    id: t.exposeID('id'),
    foundAt: t.field({ type: 'DateTime', resolve: (f) => f.foundAt }),
    foundBy: t.string({
      nullable: true,
      description: "worker, request (auditChain) or checkpoint; null when only this instance's pin outside the database still holds it.",
      resolve: (f) => f.foundBy,
    }),
    reason: t.exposeString('reason'),
    stream: t.exposeString('stream', { nullable: true }),
    seq: t.exposeInt('seq', { nullable: true }),
    checkpointSeq: t.exposeInt('checkpointSeq', { nullable: true }),
  }),
});

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
  failure: t.field({
    type: AuditFailureRef,
    nullable: true,
    description: 'auditChain: the oldest failed verification no admin has acknowledged (acknowledgeAuditFailure); while there is one, ok is false.',
    resolve: (s) => s.failure ?? null,
  }),
  fullVerification: t.field({
    type: AuditFullVerificationRef,
    nullable: true,
    description: 'auditChain: the last full re-verification asked for (verifyAuditChain), with its progress.',
    resolve: (s) => s.coverage?.full ?? null,
  }),
}));

builder.mutationFields((t) => ({
  acknowledgeAuditFailure: t.withAuth({ admin: true }).field({
    type: AuditChainStatusRef,
    description:
      'Acknowledges the failed verification auditChain.failure names (its id, so nobody acknowledges one they have not read), with a note: a signed audit event. ok turns true again only if the log verifies now.',
    args: { failureId: t.arg.id({ required: true }), note: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => {
      const viewer = ctx.access.viewer;
      const note = args.note.trim();
      if (!note) throw badInput('note: say why the failure is acknowledged');
      if (codePointLength(note, AUDIT_LIMITS.acknowledgementNoteMax) > AUDIT_LIMITS.acknowledgementNoteMax)
        throw badInput(`note is longer than ${AUDIT_LIMITS.acknowledgementNoteMax} characters`);
      const done = await acknowledgeFailure(ctx.em, viewer.tenantId, String(args.failureId), { type: 'user', id: viewer.userId }, note);
      if (!done) throw badInput('failureId is not the failure auditChain names now (read auditChain.failure again)');
      return chainStatus(ctx.em, viewer.tenantId);
    },
  }),
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
