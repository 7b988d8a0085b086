import { builder } from '../graphql/builder.js';
import type { Context } from '../graphql/context.js';
import { badInput } from '../errors.js';
import { PEOPLE_LIMITS, SIGN_IN_LINK_LIMITS } from '../limits.js';
import { clearedSessionCookie, sessionCookie } from '../http/session-cookie.js';
import { signIn, signOut, type SessionContext } from './session.js';
import { User, type ApiTokenRow, type UserRow } from './entities.js';
import { disableUser, enableUser, listApiTokens, revokeApiToken, setUserRole, visibleApiToken } from './lifecycle.js';
import { createApiToken, createUser } from './service.js';
import { createSignInLink, setPasswordWithLink, signInLinkPerson, type IssuedSignInLink } from './sign-in-links.js';

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
    disabledAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When an admin disabled this person (null: enabled). A disabled person cannot sign in and none of their tokens or sessions is accepted.',
      resolve: (u) => u.disabledAt ?? null,
    }),
  }),
});

export const ApiTokenRef = builder.objectRef<ApiTokenRow>('ApiToken');
builder.node(ApiTokenRef, {
  description: "An API token's record; the secret itself is shown once, at creation, and never stored.",
  id: { resolve: (k) => k.id },
  // Its owner and the tenant's admins see it; anyone else gets null.
  loadOne: (id, ctx) => (ctx.access ? visibleApiToken(ctx.em, ctx.access, id) : null),
  fields: (t) => ({
    label: t.exposeString('label'),
    user: t.field({ type: UserRef, description: 'Whom the token acts as.', resolve: async (k, _a, ctx) => (await ctx.loaders.user.load(k.userId))! }),
    createdAt: t.field({ type: 'DateTime', resolve: (k) => k.createdAt }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'From then on the token is refused (null: never).',
      resolve: (k) => k.expiresAt ?? null,
    }),
    revokedAt: t.field({ type: 'DateTime', nullable: true, description: 'When it was revoked (refused for good).', resolve: (k) => k.revokedAt ?? null }),
  }),
});

const ApiTokenResult = builder.objectRef<{ token: string; user: UserRow; apiToken: ApiTokenRow }>('ApiTokenResult').implement({
  fields: (t) => ({
    token: t.exposeString('token', { description: 'Shown once; only its hash is stored.' }),
    user: t.field({ type: UserRef, resolve: (r) => r.user }),
    apiToken: t.field({ type: ApiTokenRef, description: 'The token as apiTokens lists it (to revoke it later).', resolve: (r) => r.apiToken }),
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
  apiTokens: t.withAuth({ authenticated: true }).field({
    type: [ApiTokenRef],
    description:
      "API tokens that are not revoked, oldest first: without userId the viewer's own (admins: the whole tenant's); with it that person's (admins; a member only their own).",
    args: { userId: t.arg.globalID({ for: UserRef }) },
    resolve: (_r, { userId }, ctx) => listApiTokens(ctx.em, ctx.access, userId?.id ?? null),
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
    expiresInSeconds: t.int({
      description: `The token is refused after this many seconds (${PEOPLE_LIMITS.tokenExpiresMinSeconds} to ${PEOPLE_LIMITS.tokenExpiresMaxSeconds}; absent: it does not expire).`,
    }),
  }),
});

const SetUserRoleInput = builder.inputType('SetUserRoleInput', {
  fields: (t) => ({
    userId: t.globalID({ for: UserRef, required: true }),
    role: t.field({ type: RoleEnum, required: true }),
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
    resolve: (_r, { input }, ctx) =>
      createApiToken(ctx.em, ctx.access, { userId: input.userId?.id ?? null, label: input.label, expiresInSeconds: input.expiresInSeconds }),
  }),
  revokeApiToken: t.withAuth({ authenticated: true }).field({
    type: ApiTokenRef,
    description: 'Revokes a token (your own; admins any of the tenant): refused from the next request on, on every instance. Returns the revoked token.',
    args: { tokenId: t.arg.globalID({ for: ApiTokenRef, required: true }) },
    resolve: (_r, { tokenId }, ctx) => revokeApiToken(ctx.em, ctx.access, tokenId.id),
  }),
  disableUser: t.withAuth({ admin: true }).field({
    type: UserRef,
    description:
      'Disables a person (not yourself, not the last admin): their tokens and sessions are refused from the next request on, on every instance; their sessions end; sign-in fails as with a wrong password.',
    args: { userId: t.arg.globalID({ for: UserRef, required: true }) },
    resolve: (_r, { userId }, ctx) => disableUser(ctx.em, ctx.access, userId.id),
  }),
  enableUser: t.withAuth({ admin: true }).field({
    type: UserRef,
    description: 'Enables a disabled person again: their tokens (not revoked or expired) work again; they sign in anew.',
    args: { userId: t.arg.globalID({ for: UserRef, required: true }) },
    resolve: (_r, { userId }, ctx) => enableUser(ctx.em, ctx.access, userId.id),
  }),
  setUserRole: t.withAuth({ admin: true }).field({
    type: UserRef,
    description: "Changes a person's role, effective on their next request on every instance; the tenant keeps at least one enabled admin.",
    args: { input: t.arg({ type: SetUserRoleInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      setUserRole(
        ctx.em,
        ctx.access,
        { userId: input.userId.id, role: input.role },
        { bootstrapAdminEmail: ctx.deps.config.adminToken ? ctx.deps.config.adminEmail : null },
      ),
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

// One-time sign-in links (auth/sign-in-links.ts): an admin makes one for a person who has no
// password or forgot it; its page (the console's /set-password) reads who it is for, and choosing
// a password there signs the person in, with the session cookie as signIn sets it.
const SignInLinkRef = builder.objectRef<IssuedSignInLink>('SignInLink').implement({
  description: 'A one-time sign-in link: opened, it lets its person choose a password and signs them in.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Shown once; only a hash of its secret is stored. Pass it to the person over a channel you trust.' }),
    expiresAt: t.field({ type: 'DateTime', resolve: (l) => l.expiresAt }),
    user: t.field({ type: UserRef, resolve: (l) => l.user }),
  }),
});

const SignInLinkInfo = builder.objectRef<{ email: string; name: string; expiresAt: Date }>('SignInLinkInfo').implement({
  description: 'Whom a sign-in link is for, as its page shows it before a password is chosen.',
  fields: (t) => ({
    email: t.exposeString('email'),
    name: t.exposeString('name'),
    expiresAt: t.field({ type: 'DateTime', resolve: (l) => l.expiresAt }),
  }),
});

builder.queryFields((t) => ({
  signInLink: t.field({
    type: SignInLinkInfo,
    nullable: true,
    description: 'Whom a sign-in link is for, while it can be used; null when it was used, expired, or its person cannot sign in.',
    args: { secret: t.arg.string({ required: true, description: 'The part of the link after #.' }) },
    resolve: async (_r, { secret }, ctx) => {
      const found = await signInLinkPerson(ctx.em, secret);
      return found ? { email: found.user.email, name: found.user.name, expiresAt: found.expiresAt } : null;
    },
  }),
}));

builder.mutationFields((t) => ({
  createSignInLink: t.withAuth({ admin: true }).field({
    type: SignInLinkRef,
    description: `A one-time link for a person of your tenant (yourself included) to choose a password and sign in: for someone added without one, or who forgot theirs. Valid for ${SIGN_IN_LINK_LIMITS.ttlSeconds / 3600} hours, once; using it ends their other sessions.`,
    args: { userId: t.arg.globalID({ for: UserRef, required: true }) },
    resolve: (_r, { userId }, ctx) => createSignInLink(ctx.em, ctx.access, userId.id, ctx.deps.config.publicUrl),
  }),
  setPasswordWithLink: t.field({
    type: UserRef,
    description: "Uses a sign-in link: sets its person's password, ends their other sessions, and signs them in (the console's session cookie). Works once.",
    args: {
      secret: t.arg.string({ required: true, description: 'The part of the link after #.' }),
      password: t.arg.string({ required: true }),
    },
    resolve: async (_r, { secret, password }, ctx) => {
      const c = ctx as Context & SessionContext;
      if (!c.setCookie) throw badInput('use the link over HTTP');
      const { session, user } = await setPasswordWithLink(ctx.em, { secret, password });
      c.setCookie(sessionCookie(session, { secure: c.cookieSecure === true }));
      return user;
    },
  }),
}));
