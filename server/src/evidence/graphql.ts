import DataLoader from 'dataloader';
import { ApprovalRef } from '../approvals/module.js';
import { ExecutionRef } from '../delivery/module.js';
import { builder } from '../graphql/builder.js';
import type { Context } from '../graphql/context.js';
import type { Loaders } from '../graphql/loaders.js';
import { EVIDENCE_OUTCOMES, ExecutionEvidence, type ExecutionEvidenceRow } from './entities.js';

// Evidence's part of the delivery ledger: what the agent reported executing (docs/VERIFYING-APPROVALS.md
// "Reporting execution"), next to, never instead of, the task state Taskbay observed.

export const EvidenceOutcomeEnum = builder.enumType('EvidenceOutcome', { values: EVIDENCE_OUTCOMES });

const ExecutionEvidenceRef = builder.objectRef<ExecutionEvidenceRow>('ExecutionEvidence').implement({
  description:
    "An agent's report that it executed an approved decision (the execution-evidence extension): the agent's word, kept apart from the task state Taskbay observed. digestMatches false means the agent says it executed something other than what was approved.",
  fields: (t) => ({
    id: t.exposeID('id'),
    decisionId: t.exposeID('decisionId', { description: 'The decision the report names (metadata.approval.decisionId).' }),
    outcome: t.field({ type: EvidenceOutcomeEnum, resolve: (e) => e.outcome }),
    detail: t.exposeString('detail', { nullable: true, description: "The agent's own words, plain text (at most 2000 characters)." }),
    reportedDigest: t.exposeString('reportedDigest', { description: 'The digest the agent says it executed.' }),
    approvedDigest: t.exposeString('approvedDigest', { description: 'The digest of the approved revision (delivered and signed).' }),
    digestMatches: t.exposeBoolean('digestMatches'),
    messageId: t.exposeString('messageId', { description: 'The agent message that carried the report.' }),
    reportedAt: t.field({ type: 'DateTime', resolve: (e) => e.reportedAt }),
  }),
});

// One loader per request, kept beside the request's loaders (graphql/loaders.ts lists the core ones).
const loaders = new WeakMap<Loaders, DataLoader<string, ExecutionEvidenceRow[]>>();
function evidenceOf(ctx: Context, approvalId: string): Promise<ExecutionEvidenceRow[]> {
  let loader = loaders.get(ctx.loaders);
  if (!loader) {
    const em = ctx.em;
    loader = new DataLoader<string, ExecutionEvidenceRow[]>(async (ids) => {
      const rows = await em.find(ExecutionEvidence, { approvalId: { $in: [...ids] } }, { orderBy: { reportedAt: 'asc', id: 'asc' } });
      return ids.map((id) => rows.filter((r) => r.approvalId === id));
    });
    loaders.set(ctx.loaders, loader);
  }
  return loader.load(approvalId);
}

builder.objectFields(ExecutionRef, (t) => ({
  evidence: t.field({
    type: [ExecutionEvidenceRef],
    description:
      'What the agent reported executing for this delivery, oldest first; empty when it reported nothing (only the observed task state is known then).',
    resolve: async (d, _x, ctx) => (await evidenceOf(ctx, d.approvalId)).filter((e) => e.deliveryId === d.id),
  }),
  digestMismatch: t.boolean({
    description: 'True when a report names a digest other than the approved one: the agent says it executed something else.',
    resolve: async (d, _x, ctx) => (await evidenceOf(ctx, d.approvalId)).some((e) => e.deliveryId === d.id && !e.digestMatches),
  }),
}));

builder.objectFields(ApprovalRef, (t) => ({
  executionEvidence: t.field({
    type: [ExecutionEvidenceRef],
    description: "Every execution report the request's agent made for it, oldest first.",
    resolve: (a, _x, ctx) => evidenceOf(ctx, a.id),
  }),
}));
