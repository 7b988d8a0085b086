import { readFileSync } from 'node:fs';
import { buildSchema, GraphQLError, isEnumType, isInterfaceType, isObjectType, lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { schema } from '../../src/modules.js';
import { ERROR_CODES } from '../../src/errors.js';
import { maskError } from '../../src/graphql/mask-error.js';
import { logDestination } from '../../src/log.js';

// docs/ARCHITECTURE.md "Integration contract (GraphQL)": integrators and tests rely on these names; add
// more freely, rename none.
const CONTRACT: Record<string, string[]> = {
  Query: ['viewer', 'node', 'agents', 'agent', 'tasks', 'task', 'approvals', 'approval', 'auditChain'],
  Mutation: [
    'createUser',
    'createApiToken',
    'grantAgentAccess',
    'registerAgent',
    'refreshAgentCard',
    'startTask',
    'sendTaskMessage',
    'createApproval',
    'approve',
    'editAndApprove',
    'reject',
    'requestChanges',
    'delegate',
  ],
  Subscription: ['approvalRequested', 'approvalSuperseded', 'approvalChanged', 'taskUpdated'],
  Approval: [
    'id',
    'key',
    'source',
    'status',
    'title',
    'summary',
    'risk',
    'createdAt',
    'expiresAt',
    'requester',
    'assignee',
    'agent',
    'task',
    'sourceMessageId',
    'revision',
    'digest',
    'action',
    'revisions',
    'decisions',
    'execution',
    'supersededBy',
    'events',
    'contract',
  ],
  ApprovalRevision: ['number', 'action', 'digest', 'createdBy', 'createdAt'],
  Decision: ['id', 'outcome', 'revision', 'digest', 'reviewer', 'comment', 'decidedAt', 'delegatedTo'],
  Execution: ['status', 'attempts', 'messageId', 'lastError', 'observedTaskState', 'observedAt'],
  AuditEvent: ['seq', 'type', 'actorType', 'actorId', 'at', 'hash', 'prevHash', 'data'],
  AuditChainStatus: ['ok', 'events', 'firstBrokenSeq'],
  ApprovalSuperseded: ['approval', 'supersededBy'],
  ApiTokenResult: ['token'],
};
const ENUMS: Record<string, string[]> = {
  ApprovalStatus: ['PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED'],
  Risk: ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'],
  DecisionOutcome: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'],
  ApprovalSource: ['AGENT', 'USER', 'COMMAND'],
  TaskState: ['SUBMITTED', 'WORKING', 'INPUT_REQUIRED', 'AUTH_REQUIRED', 'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED'],
  ExecutionStatus: ['QUEUED', 'DELIVERED', 'FAILED'],
  Permission: ['VIEW', 'OPERATE'],
  Role: ['ADMIN', 'MEMBER'],
};
const INPUTS: Record<string, string[]> = {
  DecideInput: ['approvalId', 'revision', 'digest', 'comment'],
  EditAndApproveInput: ['approvalId', 'revision', 'digest', 'action', 'comment'],
  DelegateInput: ['approvalId', 'revision', 'digest', 'toUserId', 'comment'],
  CreateApprovalInput: ['taskId', 'title', 'summary', 'risk', 'expiresInSeconds', 'action'],
  StartTaskInput: ['agentId', 'skillId', 'text', 'data'],
  SendTaskMessageInput: ['taskId', 'text', 'data'],
  CreateUserInput: ['email', 'name', 'password', 'role'],
  CreateApiTokenInput: ['userId', 'label'],
  GrantAgentAccessInput: ['userId', 'agentId', 'skillId', 'permission'],
  RegisterAgentInput: ['cardUrl'],
};

function check(s: GraphQLSchema) {
  for (const [type, fields] of Object.entries({ ...CONTRACT, ...INPUTS })) {
    const t = s.getType(type) as { getFields?: () => Record<string, unknown> } | undefined;
    expect(t, type).toBeDefined();
    const have = Object.keys(t!.getFields!());
    for (const f of fields) expect(have, `${type}.${f}`).toContain(f);
  }
  for (const [name, values] of Object.entries(ENUMS)) {
    const e = s.getType(name);
    expect(isEnumType(e), name).toBe(true);
    expect(
      isEnumType(e) &&
        e
          .getValues()
          .map((v) => v.name)
          .sort(),
    ).toEqual([...values].sort());
  }
  const node = s.getType('Node');
  expect(isInterfaceType(node)).toBe(true);
  for (const t of ['Approval', 'Task', 'Agent', 'User']) {
    const ot = s.getType(t);
    expect(isObjectType(ot) && ot.getInterfaces().map((i) => i.name)).toContain('Node');
  }
  for (const conn of ['ApprovalConnection', 'TaskConnection']) {
    const c = s.getType(conn) as { getFields: () => Record<string, unknown> };
    expect(Object.keys(c.getFields())).toEqual(expect.arrayContaining(['edges', 'pageInfo']));
  }
}

describe('GraphQL integration contract', () => {
  it('the Pothos schema has every name of the contract', () => check(schema));

  it('schema.graphql is the printed Pothos schema (CI fails when it is stale)', () => {
    const file = readFileSync(new URL('../../../schema.graphql', import.meta.url), 'utf8');
    expect(file).toContain(printSchema(lexicographicSortSchema(schema)));
    check(buildSchema(file));
  });

  it('errors leave the API with a contract code: contract codes pass through, unexpected errors are masked', () => {
    const DESIGN_CODES = [
      'UNAUTHENTICATED',
      'FORBIDDEN',
      'NOT_FOUND',
      'BAD_USER_INPUT',
      'STALE_REVISION',
      'NOT_PENDING',
      'EXPIRED',
      'SEPARATION_OF_DUTIES',
      'INVALID_ACTION',
      'ALREADY_VOTED',
      'OUTCOME_NOT_ALLOWED',
    ];
    const quiet = vi.spyOn(logDestination, 'write').mockImplementation(() => true);
    try {
      for (const code of DESIGN_CODES) {
        const out = maskError(new GraphQLError('domain says no', { extensions: { code } }), 'Unexpected error.');
        expect((out as GraphQLError).extensions.code, code).toBe(code);
        expect(out.message).toBe('domain says no');
      }
      // The server's own list is the contract's, no more (a code outside it would be masked).
      expect(ERROR_CODES.filter((c) => !DESIGN_CODES.includes(c))).toEqual([]);
      // What a resolver's unexpected failure looks like after graphql-js located it.
      const located = new GraphQLError('sql: select * from secrets', { originalError: new Error('sql: select * from secrets') });
      for (const error of [located, new Error('boom: connection string')]) {
        const out = maskError(error, 'Unexpected error.') as GraphQLError;
        expect(out.message).toBe('Unexpected error.');
        expect(JSON.stringify(out.toJSON())).not.toMatch(/secrets|connection string/);
      }
    } finally {
      quiet.mockRestore();
    }
  });
});
