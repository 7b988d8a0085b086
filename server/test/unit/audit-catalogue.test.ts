import { describe, expect, it } from 'vitest';
import {
  AUDIT_EVENT_TYPES,
  auditEventLabel,
  auditEventProblem,
  auditTypesOf,
  COMMAND_EVENT_TYPES,
  webhookTypeOf,
  type AuditEvent,
} from '../../src/audit/catalogue.js';
import { SYSTEM, type AuditEventInput } from '../../src/audit/log.js';
import { WEBHOOK_EVENTS } from '../../src/webhooks/events.js';

// The audit events, declared once (audit/catalogue.ts): what appendEvents admits, and what the
// webhooks, the subscriptions and the console read from it. The integration side (appendEvents
// refuses, before writing anything) is in integration/audit/hash-chain.test.ts.

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

describe('readers take what tells an event from the catalogue', () => {
  it('webhooks: the audit events each payload type stands for', () => {
    const told = AUDIT_EVENT_TYPES.flatMap((t) => (webhookTypeOf(t) ? [[t, webhookTypeOf(t)]] : []));
    expect(Object.fromEntries(told)).toEqual({
      'approval.requested': 'approval.requested',
      REQUESTED: 'approval.requested',
      'approval.decided': 'approval.decided',
      'approval.expired': 'approval.expired',
      'approval.superseded': 'approval.superseded',
      'delivery.failed': 'delivery.failed',
      'evidence.digest_mismatch': 'evidence.digest_mismatch',
      'command.grant_consumed': 'command.grant_consumed',
      EXECUTED: 'command.executed',
      FAILED: 'command.failed',
    });
    // Every one is a type an endpoint subscribes to by name, and every name tells something.
    expect(new Set(told.map(([, w]) => w))).toEqual(new Set(Object.values(WEBHOOK_EVENTS).map((e) => e.type)));
    expect(webhookTypeOf('approval.voted')).toBeNull();
    expect(webhookTypeOf('hasOwnProperty')).toBeNull();
  });

  it('subscriptions: approvalRequested and approvalSuperseded', () => {
    expect(auditTypesOf('approvalRequested')).toEqual(new Set(['approval.requested', 'REQUESTED']));
    expect(auditTypesOf('approvalSuperseded')).toEqual(new Set(['approval.superseded']));
  });

  it("the console's labels, the raw type for an event without one", () => {
    const cases: [string, unknown, string][] = [
      ['approval.requested', {}, 'Request opened'],
      ['approval.decided', { outcome: 'EDIT_AND_APPROVE' }, 'Edited and approved'],
      ['approval.decided', { outcome: 'SOMETHING_NEW' }, 'Decided'],
      ['approval.decided', null, 'Decided'],
      ['approval.revised', { revision: 3 }, 'Revision 3 (reviewer edit)'],
      ['approval.revised', {}, 'New revision (reviewer edit)'],
      ['approval.delegated', { outcome: 'DELEGATE' }, 'Delegated'],
      ['delivery.retried', {}, 'Delivery retried'],
      ['FAILED', { exit_code: 2 }, 'Command failed (exit 2)'],
      ['FAILED', { exit_code: null }, 'Command failed'],
      ['REQUESTED', {}, 'Command requested by the hook'],
      ['integrity.alert', {}, 'Integrity alert: a row Taskbay did not sign was refused'],
      ['approval.voted', {}, 'approval.voted'],
      ['some.legacy_type', {}, 'some.legacy_type'],
    ];
    for (const [type, data, label] of cases) expect(auditEventLabel(type, data), type).toBe(label);
  });
});
