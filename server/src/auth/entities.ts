import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenant',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type UserRole = 'ADMIN' | 'MEMBER';

export const User = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    email: p.text(),
    name: p.text(),
    role: p.text().$type<UserRole>(),
    passwordHash: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export const ApiToken = defineEntity({
  name: 'ApiToken',
  tableName: 'api_token',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid(),
    label: p.text(),
    tokenHash: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export const WebSession = defineEntity({
  name: 'WebSession',
  tableName: 'web_session',
  properties: {
    id: p.text().primary(),
    userId: p.uuid(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
  },
});

export type Permission = 'VIEW' | 'OPERATE';

export const AgentGrant = defineEntity({
  name: 'AgentGrant',
  tableName: 'agent_grant',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    userId: p.uuid(),
    agentId: p.uuid(),
    skillId: p.text().nullable(),
    permission: p.text().$type<Permission>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type UserRow = InferEntity<typeof User>;
export type AgentGrantRow = InferEntity<typeof AgentGrant>;
