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
  },
  uniques: [{ properties: ['tenantId', 'email'] }],
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

/** What an agent grant allows (auth/agent-grant-entity.ts). */
export const PERMISSIONS = ['VIEW', 'OPERATE'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type UserRow = InferEntity<typeof User>;
