import { builder } from '../graphql/builder.js';
import { verifyStream } from './chain.js';
import { INTEGRITY_ALERT, isSignedByTaskbay, trustedAuditKey } from './decision-record.js';
import { stream, type AuditEventRow } from './log.js';
import type { TrustedKey } from './signing.js';
import { chainStatus, type ChainStatus } from './verification.js';

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

const AuditSigningKeyRef = builder.objectRef<TrustedKey>('AuditSigningKey').implement({
  description: 'The public half of the key that signs audit events and checkpoints (also GET /api/audit/public-key).',
  fields: (t) => ({
    algorithm: t.string({ resolve: () => 'Ed25519' }),
    keyId: t.exposeString('keyId', { description: 'First 16 hex of SHA-256 of the raw public key.' }),
    publicKeyPem: t.exposeString('publicKeyPem'),
  }),
});

export const AuditChainStatusRef = builder.objectRef<ChainStatus>('AuditChainStatus').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    events: t.exposeInt('events'),
    firstBrokenSeq: t.exposeInt('firstBrokenSeq', { nullable: true }),
    firstBrokenStream: t.exposeString('firstBrokenStream', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true }),
    signedEvents: t.exposeInt('signedEvents'),
    legacyUnsignedEvents: t.exposeInt('legacyUnsignedEvents', { description: 'Unsigned events from before signing existed, accepted.' }),
    signedCheckpoints: t.exposeInt('signedCheckpoints'),
    legacyUnsignedCheckpoints: t.exposeInt('legacyUnsignedCheckpoints', {
      description: 'Global unsigned checkpoints from before per-tenant signed ones, accepted.',
    }),
    signingKey: t.field({ type: AuditSigningKeyRef, resolve: (s) => s.signingKey }),
  }),
});

builder.queryFields((t) => ({
  auditChain: t.withAuth({ authenticated: true }).field({
    type: AuditChainStatusRef,
    description:
      "The verification of every stream of the viewer's tenant (links, hashes, signatures) and the signed checkpoints that record them, trusting this instance's signing key. The worker verifies the log incrementally after each checkpoint; this answers from its stored result plus the events since (verified here when few), and says how far it reaches (verifiedThroughSeq, pendingEvents). A full re-verification is verifyAuditChain; a page about one approval asks for Approval.chain.",
    resolve: (_r, _a, ctx) => chainStatus(ctx.em, ctx.access.viewer.tenantId),
  }),
}));

export const IntegrityAlertRef = builder.objectRef<AuditEventRow>('IntegrityAlert').implement({
  description:
    "A row of this request that Taskbay refused to act on because it has no valid signed record (a decision, vote or grant written behind Taskbay's back, or a request changed after its decision): nothing was signed, delivered, counted or handed out for it.",
  fields: (t) => ({
    id: t.id({ description: "The alert's audit event id (AuditEvent of Approval.events).", resolve: (e) => e.id }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
    kind: t.string({
      description: 'What was refused: delivery, agui_resume, quorum_vote or command_grant.',
      resolve: (e) => String(e.data.kind),
    }),
    problem: t.string({
      description: 'no_signed_event, bad_signature, mismatch (the rows differ from the signed record) or action_digest (the action is not what was signed).',
      resolve: (e) => String(e.data.problem),
    }),
    message: t.string({ resolve: (e) => String(e.data.message) }),
  }),
});
