import { advertisedExtensionUris } from '../a2a/card.js';
import { STRUCTURED_FORM_EXTENSION } from '../a2a/extensions.js';
import { canViewAgent, UserRef } from '../auth/module.js';
import { builder, defineAtBuild } from '../graphql/builder.js';
import type { AgentRow, CardSnapshotRow } from './entities.js';
import { agentKinds, type AgentKind } from './kinds.js';
import { listVisibleAgents, refreshAgentCard, registerAgent } from './service.js';

export const actorOf = (ctx: { viewer: { userId: string } }) => ({ type: 'user' as const, id: ctx.viewer.userId });

export const CardSnapshotRef = builder.objectRef<CardSnapshotRow>('CardSnapshot').implement({
  description: 'An immutable copy of the Agent Card as fetched; every refresh adds one.',
  fields: (t) => ({
    number: t.exposeInt('number'),
    fetchedAt: t.field({ type: 'DateTime', resolve: (s) => s.fetchedAt }),
    card: t.field({ type: 'JSON', resolve: (s) => s.card }),
    extensions: t.stringList({ resolve: (s) => advertisedExtensionUris(s.card) }),
  }),
});

const SkillRef = builder.objectRef<{ id: string; name: string; description?: string }>('AgentSkill').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    name: t.exposeString('name'),
    description: t.string({ nullable: true, resolve: (s) => s.description ?? null }),
  }),
});

// Every module's kind (kinds.ts), so defined when the schema is built; described in name order.
const defineAgentKindEnum = () => {
  const kinds = agentKinds();
  return builder.enumType('AgentKind', {
    description: `The agent's protocol. ${[...kinds]
      .sort((a, b) => (a.kind < b.kind ? -1 : 1))
      .map((k) => `${k.kind}: ${k.description}`)
      .join(' ')}`,
    values: kinds.map((k): AgentKind => k.kind),
  });
};
let agentKindEnum: ReturnType<typeof defineAgentKindEnum> | null = null;
defineAtBuild(() => {
  agentKindEnum = defineAgentKindEnum();
});
const AgentKindEnum = () => {
  if (!agentKindEnum) throw new Error('the AgentKind enum is read before the schema is built');
  return agentKindEnum;
};

/** The latest snapshot, or null for an agent without a card (a command hook). */
const latestCard = async (a: AgentRow, ctx: { loaders: { snapshots: { load(id: string): Promise<CardSnapshotRow[]> } } }) =>
  (await ctx.loaders.snapshots.load(a.id))[0]?.card ?? null;

const AgentErrorRef = builder.objectRef<{ kind: string; message: string; detail: string | null; at: Date }>('AgentError').implement({
  description: 'The last failed exchange with the agent (card fetch, message, delivery). Admins only.',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: 'refused, unreachable, timeout, http_status, invalid_answer or rpc' }),
    message: t.exposeString('message', { description: 'What the caller was told.' }),
    detail: t.string({
      nullable: true,
      description: 'What the agent or the network said: status, the first 2 KB of the body, the low-level error. Never shown to callers.',
      resolve: (e) => e.detail,
    }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
  }),
});

export const AgentRef = builder.objectRef<AgentRow>('Agent');
builder.node(AgentRef, {
  id: { resolve: (a) => a.id },
  loadOne: async (id, ctx) => {
    const a = await ctx.loaders.agent.load(id);
    return ctx.access && (await canViewAgent(ctx.access, a)) ? a : null;
  },
  fields: (t) => ({
    name: t.exposeString('name'),
    kind: t.field({ type: AgentKindEnum(), resolve: (a) => a.kind }),
    cardUrl: t.string({ nullable: true, description: 'Null for a command hook and an AG-UI agent.', resolve: (a) => a.cardUrl ?? null }),
    endpointUrl: t.string({ nullable: true, description: 'AG_UI only: where runs are POSTed.', resolve: (a) => a.endpointUrl ?? null }),
    hookUser: t.field({
      type: UserRef,
      nullable: true,
      description: 'For a command hook: the person whose hook it is (the requester of its command approvals).',
      resolve: (a, _x, ctx) => (a.hookUserId ? ctx.loaders.user.load(a.hookUserId) : null),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => a.createdAt }),
    lastError: t.field({
      type: AgentErrorRef,
      nullable: true,
      description: 'The last failed exchange with the agent, with the upstream detail. Null for anyone but an admin.',
      resolve: (a, _x, ctx) => (ctx.access?.isAdmin && a.lastError && a.lastErrorAt ? { ...a.lastError, at: a.lastErrorAt } : null),
    }),
    card: t.field({
      type: CardSnapshotRef,
      nullable: true,
      description: 'The latest snapshot: what extension negotiation reads. Null for a command hook (it has no card).',
      resolve: async (a, _x, ctx) => (await ctx.loaders.snapshots.load(a.id))[0] ?? null,
    }),
    snapshots: t.field({ type: [CardSnapshotRef], resolve: (a, _x, ctx) => ctx.loaders.snapshots.load(a.id) }),
    extensions: t.stringList({
      description: 'Advertised by the latest card; empty without a card.',
      resolve: async (a, _x, ctx) => {
        const card = await latestCard(a, ctx);
        return card ? advertisedExtensionUris(card) : [];
      },
    }),
    skills: t.field({
      type: [SkillRef],
      description: 'Of the latest card; empty without a card.',
      resolve: async (a, _x, ctx) => (await latestCard(a, ctx))?.skills ?? [],
    }),
    startForm: t.field({
      type: 'JSON',
      nullable: true,
      description: 'params.startForm of the structured-form extension entry, when advertised.',
      resolve: async (a, _x, ctx) => {
        const card = await latestCard(a, ctx);
        return card?.capabilities.extensions?.find((e) => e.uri === STRUCTURED_FORM_EXTENSION)?.params?.startForm ?? null;
      },
    }),
  }),
});

builder.queryFields((t) => ({
  agents: t.withAuth({ authenticated: true }).field({
    type: [AgentRef],
    resolve: (_r, _a, ctx) => listVisibleAgents(ctx.em, ctx.access),
  }),
  agent: t.withAuth({ authenticated: true }).field({
    type: AgentRef,
    nullable: true,
    args: { id: t.arg.globalID({ for: AgentRef, required: true }) },
    resolve: async (_r, { id }, ctx) => {
      const a = await ctx.loaders.agent.load(id.id);
      return (await canViewAgent(ctx.access, a)) ? a : null;
    },
  }),
}));

const RegisterAgentInput = builder.inputType('RegisterAgentInput', {
  fields: (t) => ({ cardUrl: t.string({ required: true }) }),
});

builder.mutationFields((t) => ({
  registerAgent: t.withAuth({ admin: true }).field({
    type: AgentRef,
    args: { input: t.arg({ type: RegisterAgentInput, required: true }) },
    resolve: (_r, { input }, ctx) => registerAgent(ctx.em, ctx.viewer.tenantId, actorOf(ctx), input.cardUrl, ctx.deps.fetchCard),
  }),
  refreshAgentCard: t.withAuth({ admin: true }).field({
    type: AgentRef,
    args: { id: t.arg.globalID({ for: AgentRef, required: true }) },
    resolve: (_r, { id }, ctx) => refreshAgentCard(ctx.em, ctx.viewer.tenantId, actorOf(ctx), id.id, ctx.deps.fetchCard),
  }),
}));
