import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { approvalContract } from '../../src/contract/agents-approval.js';
import { validateApprovalContract } from '../../src/contract/validate.js';
import type { ApprovalRow } from '../../src/approvals/entities.js';
import type { DecisionRow } from '../../src/decisions/entities.js';

// Seed 001 "Examples: From the contract's own test fixtures: valid ones validate, rejected ones
// must fail."
const VALID_APPROVED = {
  id: 'apr_01K9R2V6M8Q4T0B7C3D5E9F2GH',
  run_id: 'tsk_01K9R2V6M8Q4T0B7C3D5E9F2GH',
  step_seq: 7,
  what: "Push the branch and open a pull request on your machine's repository",
  options: [
    { id: 'approve', label: 'Approve' },
    { id: 'decline', label: 'Decline' },
  ],
  decided_by: { type: 'user', id: 'usr_01K9R2V6M8Q4T0B7C3D5E9F2GH' },
  decided_at: '2026-11-12T10:01:00Z',
  answer: 'approve',
};
const REJECTED_NO_OPTIONS = {
  run_id: 'tsk_01K9R2V6M8Q4T0B7C3D5E9F2GH',
  step_seq: 7,
  what: 'Post the answer to your feed',
  options: [],
};

describe('agents.approval@1 schema (seed 001)', () => {
  it('the valid "approved" fixture validates', () => {
    expect(validateApprovalContract(VALID_APPROVED)).toEqual({ valid: true, errors: [] });
  });

  it('the rejected "no-options" fixture fails on options', () => {
    const r = validateApprovalContract(REJECTED_NO_OPTIONS);
    expect(r.valid).toBe(false);
    expect(r.errors.map((e) => e.path)).toContain('/options');
  });

  it.each([
    ['step_seq 0', { step_seq: 0 }],
    ['9 options', { options: Array.from({ length: 9 }, (_, i) => ({ id: `o${i}`, label: `O${i}` })) }],
    ['an option with another field', { options: [{ id: 'a', label: 'A', extra: 1 }] }],
    ['an option label of 81 chars', { options: [{ id: 'a', label: 'x'.repeat(81) }] }],
    ['what of 2001 chars', { what: 'x'.repeat(2001) }],
    ['an empty what', { what: '' }],
    ['decided_by of another type', { decided_by: { type: 'robot', id: 'x' } }],
    ['decided_at not a date-time', { decided_at: 'yesterday' }],
    ['answer of 2001 chars', { answer: 'x'.repeat(2001) }],
    ['run_id of 161 chars', { run_id: 'x'.repeat(161) }],
  ])('rejects %s', (_name, patch) => {
    expect(validateApprovalContract({ ...VALID_APPROVED, ...patch }).valid).toBe(false);
  });

  // Seed 001's field table written out here, not read from the schema, so that a schema that
  // stops requiring a field fails: the fields marked "Required: yes", and decided_by's type and
  // id (the schema's "one of": null, or a subject of a known type). [field, where the error is, remove it]
  const REQUIRED: [string, string, (r: any) => void][] = [
    ['run_id', '/', (r) => delete r.run_id],
    ['step_seq', '/', (r) => delete r.step_seq],
    ['what', '/', (r) => delete r.what],
    ['options', '/', (r) => delete r.options],
    ['options[].id', '/options/1', (r) => delete r.options[1].id],
    ['options[].label', '/options/1', (r) => delete r.options[1].label],
    ['decided_by.type', '/decided_by', (r) => delete r.decided_by.type],
    ['decided_by.id', '/decided_by', (r) => delete r.decided_by.id],
  ];

  it.each(REQUIRED)('a valid record without its required %s is rejected, naming it', (field, path, remove) => {
    const record = structuredClone(VALID_APPROVED);
    remove(record);
    const r = validateApprovalContract(record);
    expect(r.valid).toBe(false);
    expect(r.errors).toContainEqual({ path, message: `must have required property '${field.replace(/^.*[.\]]/, '')}'` });
  });

  it('waiting: decided_by, decided_at and answer null (or absent) validate', () => {
    const { decided_by, decided_at, answer, ...waiting } = VALID_APPROVED;
    expect(validateApprovalContract(waiting).valid).toBe(true);
    expect(validateApprovalContract({ ...waiting, decided_by: null, decided_at: null, answer: null }).valid).toBe(true);
  });
});

describe('the export of every approval state validates', () => {
  const base = (): ApprovalRow =>
    ({
      id: randomUUID(),
      tenantId: randomUUID(),
      key: null,
      source: 'AGENT',
      status: 'PENDING',
      title: 'Delete the staging cluster',
      summary: null,
      risk: 'HIGH',
      requesterId: null,
      assigneeId: null,
      agentId: randomUUID(),
      taskId: randomUUID(),
      skillId: null,
      sourceMessageId: 'm1',
      stepSeq: 2,
      revision: 1,
      digest: 'a'.repeat(64),
      action: { kind: 'send_message', text: 'x'.repeat(20000) },
      supersededById: null,
      expiresAt: new Date(),
      closedAt: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    }) as ApprovalRow;
  const decision = (outcome: DecisionRow['outcome']): DecisionRow =>
    ({
      id: randomUUID(),
      approvalId: randomUUID(),
      outcome,
      revision: 1,
      digest: 'a'.repeat(64),
      reviewerId: randomUUID(),
      comment: null,
      delegatedToId: null,
      decidedAt: new Date(),
    }) as DecisionRow;

  it.each(['PENDING', 'SUPERSEDED', 'EXPIRED'] as const)('%s (no answer yet / never)', (status) => {
    const c = approvalContract({ ...base(), status }, null, 'Agent '.repeat(50), 2, null);
    expect(validateApprovalContract(c)).toEqual({ valid: true, errors: [] });
    expect(c.answer).toBeNull();
  });

  it.each([
    ['APPROVED', 'APPROVE', 'approve'],
    ['APPROVED', 'EDIT_AND_APPROVE', 'edit_and_approve'],
    ['REJECTED', 'REJECT', 'reject'],
    ['CHANGES_REQUESTED', 'REQUEST_CHANGES', 'request_changes'],
  ] as const)('%s by %s answers %s, one of its options', (status, outcome, answer) => {
    const c = approvalContract({ ...base(), status }, decision(outcome), null, 2, null);
    expect(validateApprovalContract(c)).toEqual({ valid: true, errors: [] });
    expect(c.answer).toBe(answer);
    expect(c.options.map((o) => o.id)).toContain(answer);
    expect(c.decided_by?.type).toBe('user');
  });

  it('a send_data approval says what in words, not the raw payload', () => {
    const c = approvalContract(
      { ...base(), action: { kind: 'send_data', form: { schema: { type: 'object', properties: {} } }, values: { environment: 'staging', replicas: 2 } } },
      null,
      'Deployer',
      3,
      null,
    );
    expect(validateApprovalContract(c).valid).toBe(true);
    expect(c.what).toContain('environment, replicas');
    expect(c.what).not.toContain('{');
  });
});
