import { describe, expect, it } from 'vitest';
import { AUDIT_EVENT_TYPES, auditEventProblem, COMMAND_EVENT_TYPES, type AuditEvent } from '../../src/audit/catalogue.js';
import { SYSTEM, type AuditEventInput } from '../../src/audit/log.js';

// The audit events, declared once (audit/catalogue.ts): what appendEvents admits, and what the
// webhooks, the subscriptions and the console read from it. The integration side (appendEvents
// refuses, before writing anything) is in integration/audit.test.ts.

describe('the catalogue admits exactly what it declares', () => {
  it('refuses an undeclared type, a stream of another kind, and a payload that differs from the declaration', () => {
    const data = { userId: 'u1' };
    expect(auditEventProblem('session.created', 'tenant:t1', data)).toBeNull();
    expect(auditEventProblem('session.ended', 'tenant:t1', data)).toMatch(/"session\.ended" is not declared/);
    expect(auditEventProblem('session.created', 'task:t1', data)).toMatch(/belongs to a tenant stream/);
    expect(auditEventProblem('session.created', 'tenant:t1', {})).toMatch(/data lacks userId/);
    expect(auditEventProblem('session.created', 'tenant:t1', { userId: 1 })).toMatch(/data\.userId is not a string/);
    expect(auditEventProblem('session.created', 'tenant:t1', { ...data, email: 'x' })).toMatch(/undeclared field "email"/);
    expect(auditEventProblem('session.created', 'tenant:t1', [data])).toMatch(/data is not an object/);
    // Names of Object.prototype are not declarations.
    expect(auditEventProblem('constructor', 'tenant:t1', data)).toMatch(/not declared/);
    expect(auditEventProblem('session.created', 'tenant:t1', { ...data, constructor: 1 })).toMatch(/undeclared field "constructor"/);
  });

  it('optional fields may be absent, nullable ones null, literal ones only their values', () => {
    const user = { userId: 'u1', email: 'a@b', role: 'ADMIN' };
    expect(auditEventProblem('user.created', 'tenant:t', user)).toBeNull();
    expect(auditEventProblem('user.created', 'tenant:t', { ...user, bootstrap: true })).toBeNull();
    expect(auditEventProblem('user.created', 'tenant:t', { ...user, bootstrap: false })).toMatch(/data\.bootstrap is not one of true/);
    const token = { tokenId: 't', userId: 'u', label: 'ci' };
    expect(auditEventProblem('token.created', 'tenant:t', { ...token, expiresAt: null })).toBeNull();
    expect(auditEventProblem('token.created', 'tenant:t', token)).toMatch(/lacks expiresAt/);
    const alert = { approvalId: 'a', agentId: null, taskId: null, decisionId: null, kind: 'delivery', problem: 'mismatch', message: 'm' };
    expect(auditEventProblem('integrity.alert', 'approval:a', alert)).toBeNull();
    expect(auditEventProblem('integrity.alert', 'approval:a', { ...alert, kind: 'elsewhere' })).toMatch(/data\.kind is not one of/);
  });

  it("holds seed 002's command events: the upper-case types declared are the seven it writes, of the nine its CHECK admits", () => {
    const upper = AUDIT_EVENT_TYPES.filter((t) => /^[A-Z_]+$/.test(t));
    expect(new Set(upper)).toEqual(new Set(COMMAND_EVENT_TYPES.filter((t) => t !== 'NOOP' && t !== 'REVERTED')));
    expect(COMMAND_EVENT_TYPES).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'NOOP', 'REVOKED', 'REVERTED']);
    expect(auditEventProblem('REVERTED', 'approval:a', {})).toMatch(/not declared/);
  });

  it('types a payload by its event type at compile time', () => {
    const right: AuditEventInput = { tenantId: 't', stream: 'tenant:t', type: 'session.created', actor: SYSTEM, data: { userId: 'u' } };
    // @ts-expect-error: session.created carries userId, not agentId
    const wrong: AuditEventInput = { tenantId: 't', stream: 'tenant:t', type: 'session.created', actor: SYSTEM, data: { agentId: 'a' } };
    // @ts-expect-error: not a declared type
    const unknown: AuditEvent = { type: 'session.ended', data: { userId: 'u' } };
    expect([right, wrong, unknown].map((e) => e.type)).toEqual(['session.created', 'session.created', 'session.ended']);
  });
});
