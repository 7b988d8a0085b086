import { builder } from '../graphql/builder.js';
import type { Context } from '../graphql/context.js';
import { badInput } from '../errors.js';
import { clearedSessionCookie, sessionCookie, signIn, signOut, type SessionContext } from './session.js';
import { User, type UserRow } from './entities.js';
import { createApiToken, createUser } from './service.js';

export const RoleEnum = builder.enumType('Role', { values: ['ADMIN', 'MEMBER'] as const });

export const UserRef = builder.objectRef<UserRow>('User');
builder.node(UserRef, {
  id: { resolve: (u) => u.id },
  loadOne: async (id, ctx) => {
    const u = await ctx.loaders.user.load(id);
    return u && ctx.viewer && u.tenantId === ctx.viewer.tenantId ? u : null;
  },
  fields: (t) => ({
    email: t.exposeString('email'),
    name: t.exposeString('name'),
    role: t.field({ type: RoleEnum, resolve: (u) => u.role }),
    createdAt: t.field({ type: 'DateTime', resolve: (u) => u.createdAt }),
  }),
});

const ApiTokenResult = builder.objectRef<{ token: string; user: UserRow }>('ApiTokenResult').implement({
  fields: (t) => ({
    token: t.exposeString('token', { description: 'Shown once; only its hash is stored.' }),
    user: t.field({ type: UserRef, resolve: (r) => r.user }),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: UserRef,
    nullable: true,
    resolve: (_r, _a, ctx) => (ctx.viewer ? ctx.loaders.user.load(ctx.viewer.userId) : null),
  }),
  users: t.withAuth({ authenticated: true }).field({
    type: [UserRef],
    resolve: (_r, _a, ctx) => ctx.em.find(User, { tenantId: ctx.viewer.tenantId }, { orderBy: { email: 'asc' } }),
  }),
}));

const CreateUserInput = builder.inputType('CreateUserInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    name: t.string({ required: true }),
    password: t.string(),
    role: t.field({ type: RoleEnum, required: true }),
  }),
});

const CreateApiTokenInput = builder.inputType('CreateApiTokenInput', {
  fields: (t) => ({
    userId: t.globalID({ for: UserRef }),
    label: t.string({ required: true }),
  }),
});

builder.mutationFields((t) => ({
  createUser: t.withAuth({ admin: true }).field({
    type: UserRef,
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    resolve: (_r, { input }, ctx) => createUser(ctx.em, ctx.access, input),
  }),
  createApiToken: t.withAuth({ authenticated: true }).field({
    type: ApiTokenResult,
    args: { input: t.arg({ type: CreateApiTokenInput, required: true }) },
    resolve: (_r, { input }, ctx) => createApiToken(ctx.em, ctx.access, { userId: input.userId?.id ?? null, label: input.label }),
  }),
}));

// Console sign-in: an HTTP-only session cookie (auth/session.ts). Over WebSocket there is no
// response to carry a cookie, so both refuse there.
builder.mutationFields((t) => ({
  signIn: t.field({
    type: UserRef,
    description: 'Email and password; sets the HTTP-only session cookie of the console.',
    args: { email: t.arg.string({ required: true }), password: t.arg.string({ required: true }) },
    resolve: async (_r, { email, password }, ctx) => {
      const c = ctx as Context & SessionContext;
      if (!c.setCookie) throw badInput('sign in over HTTP');
      const { secret, user } = await signIn(ctx.em, ctx.deps.config.signIn, { email, password, clientAddress: c.clientAddress });
      c.setCookie(sessionCookie(secret, { secure: c.cookieSecure === true }));
      return user;
    },
  }),
  signOut: t.boolean({
    description: 'Ends the cookie session (if any) and clears the cookie.',
    resolve: async (_r, _a, ctx) => {
      const c = ctx as Context & SessionContext;
      await signOut(ctx.em, c.sessionSecret ?? null);
      c.setCookie?.(clearedSessionCookie({ secure: c.cookieSecure === true }));
      return true;
    },
  }),
}));
