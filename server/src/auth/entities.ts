import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { manyToOneId } from '../db/relations.js';

export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenant',
  properties: {
    id: p.uuid().primary(),
    name: p.text().unique(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
});

export const USER_ROLES = ['ADMIN', 'MEMBER'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const User = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    email: p.text(),
    name: p.text(),
    role: p.enum([...USER_ROLES]),
    passwordHash: p.text().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    /** Set when the person was disabled: none of their tokens or sessions is accepted, and they cannot sign in. */
    disabledAt: p.datetime().nullable(),
    /**
     * An earlier person (of any tenant) has this email: this one signs in with no password
     * (Migration20261204002000_email_one_tenant marks rows of databases from before the rule).
     */
    duplicateEmail: p.boolean().default(false),
  },
  uniques: [
    { properties: ['tenantId', 'email'] },
    // An email belongs to one person across tenants (sign-in finds the person by email alone).
    {
      name: 'app_user_email_one_tenant',
      expression: 'create unique index app_user_email_one_tenant on app_user (lower(email)) where not duplicate_email',
    },
  ],
});

export const ApiToken = defineEntity({
  name: 'ApiToken',
  tableName: 'api_token',
  properties: {
    id: p.uuid().primary(),
    userId: manyToOneId(User, 'user_id'),
    label: p.text(),
    tokenHash: p.text().unique(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    /** After this the token is refused (null: it does not expire). */
    expiresAt: p.datetime().nullable(),
    /** When it was revoked; a revoked token is refused for good (the row stays: auth/lifecycle.ts). */
    revokedAt: p.datetime().nullable(),
  },
});

export const WebSession = defineEntity({
  name: 'WebSession',
  tableName: 'web_session',
  properties: {
    id: p.text().primary(),
    userId: manyToOneId(User, 'user_id'),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    expiresAt: p.datetime(),
  },
});

/** A one-time sign-in link (auth/sign-in-links.ts): the SHA-256 of its secret, whose person it signs in, until when. */
export const SignInLink = defineEntity({
  name: 'SignInLink',
  tableName: 'sign_in_link',
  properties: {
    id: p.text().primary(),
    userId: manyToOneId(User, 'user_id'),
    /** The admin who made it; null: made at start-up for the admin of TASKBAY_ADMIN_EMAIL. */
    createdById: manyToOneId(User, 'created_by_id').nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    expiresAt: p.datetime(),
  },
  indexes: [{ name: 'sign_in_link_user_id_index', properties: ['userId'] }],
});

/** What an agent grant allows (auth/agent-grant-entity.ts). */
export const PERMISSIONS = ['VIEW', 'OPERATE'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type UserRow = InferEntity<typeof User>;
export type ApiTokenRow = InferEntity<typeof ApiToken>;
export type SignInLinkRow = InferEntity<typeof SignInLink>;
