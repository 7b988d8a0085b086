import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApprovalRef } from '../approvals/module.js';
import { builder } from '../graphql/builder.js';
import { DomainError } from '../errors.js';
import { ApprovalGrant, CommandApproval } from './entities.js';
import { consumeGrant, reportOutcome, revokeGrant } from './grant-use.js';
import { effectiveGrantStatus, getCommandView, requestCommandApproval, type CommandView } from './service.js';
import type { ApprovalGrantRow, CommandApprovalRow } from './entities.js';

// Per entity manager (that is, per request or per subscription event), like graphql/loaders.ts.
const loaders = new WeakMap<EntityManager, DataLoader<string, { command: CommandApprovalRow; grant: ApprovalGrantRow | null } | null>>();
function commandLoader(em: EntityManager) {
  let l = loaders.get(em);
  if (!l) {
    l = new DataLoader(async (ids) => {
      const commands = await em.find(CommandApproval, { id: { $in: [...ids] } });
      const grants = await em.find(ApprovalGrant, { commandApprovalId: { $in: [...ids] } });
      return ids.map((id) => {
        const command = commands.find((c) => c.id === id);
        return command ? { command, grant: grants.find((g) => g.commandApprovalId === id) ?? null } : null;
      });
    });
    loaders.set(em, l);
  }
  return l;
}

// GraphQL of command approvals (seed 002). Statuses are the seed's words verbatim: the
// approval's lowercase status and the grant's UPPERCASE status, as strings in distinct fields.

const CommandGrantRef = builder.objectRef<ApprovalGrantRow>('CommandGrant').implement({
  description: 'The single-use grant an approved command approval forms.',
  fields: (t) => ({
    status: t.string({ description: 'PENDING | CONSUMED | REVOKED | EXPIRED (seed 002, upper case)', resolve: (g) => effectiveGrantStatus(g) }),
    expiresAt: t.field({ type: 'DateTime', resolve: (g) => g.expiresAt }),
    consumedAt: t.field({ type: 'DateTime', nullable: true, resolve: (g) => g.consumedAt ?? null }),
  }),
});

export const CommandApprovalRef = builder.objectRef<CommandView>('CommandApproval').implement({
  description: "A coding agent's blocked shell command waiting for (or holding) a person's grant.",
  fields: (t) => ({
    approvalId: t.string({ description: 'P- + 32 hex (seed 002)', resolve: (v) => v.command.approvalId }),
    kind: t.string({ description: 'COMMAND | COMMAND_SET', resolve: (v) => v.command.kind }),
    agentId: t.string({ description: 'The coding agent (a + 5 or more hex)', resolve: (v) => v.command.agentId }),
    commands: t.stringList({ description: 'The verbatim command strings', resolve: (v) => v.command.commands }),
    payload: t.field({ type: 'JSON', description: 'The sealed payload, verbatim', resolve: (v) => v.command.payload }),
    fingerprint: t.string({ resolve: (v) => v.command.fingerprint }),
    status: t.string({ description: 'pending | approved | rejected | revoked | expired (seed 002, lower case)', resolve: (v) => v.command.status }),
    grant: t.field({ type: CommandGrantRef, nullable: true, resolve: (v) => v.grant }),
    approval: t.field({ type: ApprovalRef, resolve: (v) => v.approval }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  command: t.field({
    type: CommandApprovalRef,
    nullable: true,
    description: 'For source COMMAND: the command, its sealed payload and its grant.',
    resolve: async (a, _x, ctx) => {
      if (a.source !== 'COMMAND') return null;
      const found = await commandLoader(ctx.em).load(a.id);
      return found ? { approval: a, ...found } : null;
    },
  }),
}));

const RequestCommandApprovalInput = builder.inputType('RequestCommandApprovalInput', {
  fields: (t) => ({
    agentId: t.string({ required: true, description: 'a + 5 or more hex' }),
    payload: t.field({
      type: 'JSON',
      required: true,
      description: 'The sealed payload: operation, exact_content, scope, risk_level, rollback, rationale, verification',
    }),
    commands: t.stringList({ description: 'Two or more: a COMMAND_SET. Absent: the single command exact_content.' }),
    expiresInSeconds: t.int(),
  }),
});

const OutcomeInput = builder.inputType('CommandOutcomeInput', {
  fields: (t) => ({
    approvalId: t.string({ required: true }),
    exitCode: t.int({ required: true }),
    detail: t.string(),
  }),
});

builder.queryFields((t) => ({
  commandApproval: t.withAuth({ authenticated: true }).field({
    type: CommandApprovalRef,
    nullable: true,
    args: { approvalId: t.arg.string({ required: true, description: 'P-… or the approval uuid' }) },
    resolve: async (_r, { approvalId }, ctx) => {
      try {
        return await getCommandView(ctx.em, ctx.access, approvalId);
      } catch (e) {
        if (e instanceof DomainError && e.code === 'NOT_FOUND') return null;
        throw e;
      }
    },
  }),
}));

builder.mutationFields((t) => ({
  requestCommandApproval: t.withAuth({ authenticated: true }).field({
    type: CommandApprovalRef,
    args: { input: t.arg({ type: RequestCommandApprovalInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      requestCommandApproval(ctx.em, ctx.access, ctx.deps.config, {
        agent_id: input.agentId,
        payload: input.payload,
        commands: input.commands ?? undefined,
        expires_in_seconds: input.expiresInSeconds ?? undefined,
      }),
  }),
  consumeCommandGrant: t.withAuth({ authenticated: true }).field({
    type: CommandApprovalRef,
    args: { approvalId: t.arg.string({ required: true }) },
    resolve: (_r, { approvalId }, ctx) => consumeGrant(ctx.em, ctx.access, ctx.deps.config, approvalId),
  }),
  reportCommandOutcome: t.withAuth({ authenticated: true }).field({
    type: CommandApprovalRef,
    args: { input: t.arg({ type: OutcomeInput, required: true }) },
    resolve: async (_r, { input }, ctx) =>
      (await reportOutcome(ctx.em, ctx.access, input.approvalId, { exit_code: input.exitCode, detail: input.detail })).view,
  }),
  revokeCommandGrant: t.withAuth({ admin: true }).field({
    type: CommandApprovalRef,
    args: { approvalId: t.arg.string({ required: true }) },
    resolve: (_r, { approvalId }, ctx) => revokeGrant(ctx.em, ctx.access, approvalId),
  }),
}));
