import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, type ExecutionEventBus, InMemoryTaskStore, type RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import { ApprovalCheckingExecutor } from '../../../docs/samples/verify-sdk-executor.js';
import {
  APPROVAL_REQUEST_EXTENSION,
  APPROVAL_REQUEST_MEDIA_TYPE,
  EXECUTION_EVIDENCE_EXTENSION,
  type Verdict,
} from '../../../packages/taskbay-verify/src/index.js';
import { APPROVAL_REQUEST_SEND_DATA } from '../../src/fixture-agent/content.js';

// An A2A agent as an integrator writes one with @a2a-js/sdk 1.x (issue 23): the SDK's
// DefaultRequestHandler, its Express JSON-RPC handler and agent card handler, and the executor of
// docs/VERIFYING-APPROVALS.md (docs/samples/verify-sdk-executor.ts): it asks Taskbay for approval
// (an INPUT_REQUIRED task with the approval-request part) and, when an approved message arrives,
// verifies requestContext.userMessage with @taskbay/verify against the JWKS of the Taskbay it
// trusts, over HTTP, before acting. Verified: it completes the task and reports the execution
// (the execution-evidence part). Refused: the task stays waiting, its status message says why.
//
// For tests, it keeps every verdict, and can take the next approved message off the wire
// (interceptNextApproval) as someone between Taskbay and the agent would: it answers 503 and
// keeps the JSON-RPC body, which a test may then send on, changed or not.

/** What "approve" asks for: a message, with decision data (metadata.decision of the approved message). */
export const SDK_APPROVAL_REQUEST = {
  title: 'Rotate the signing keys',
  summary: 'Replaces both signing keys; the old ones stay published for 30 days.',
  risk: 'high',
  expiresInSeconds: 3600,
  action: { kind: 'send_message', text: 'Approved. Rotate the signing keys.', data: { keys: ['signing-a', 'signing-b'], graceDays: 30 } },
} as const;

export interface TrustedTaskbay {
  issuer: string;
  jwksUrl: string;
}

export interface SdkVerdict {
  /** requestContext.taskId: the task the message arrived on. */
  taskId: string;
  /** requestContext.userMessage as the executor got it. */
  message: Message;
  verdict: Verdict;
}

export interface SdkAgent {
  cardUrl: string;
  a2aUrl: string;
  verdicts: SdkVerdict[];
  /** JSON-RPC bodies of SendMessage requests carrying metadata.approval, as they arrived, in order. */
  approvedBodies: { body: unknown; intercepted: boolean }[];
  trust(taskbay: TrustedTaskbay): void;
  interceptNextApproval(): void;
  close(): Promise<void>;
}

const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined });
const dataPart = (value: unknown, mediaType: string): Part => ({ content: { $case: 'data', value }, mediaType, filename: '', metadata: undefined });

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return { messageId: randomUUID(), role: Role.ROLE_AGENT, taskId, contextId, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** Asks for approval: "approve" for a message, "approve data" for form values; remembers the form asked with. */
function asker(forms: Map<string, Record<string, unknown>>) {
  return async (requestContext: RequestContext, eventBus: ExecutionEventBus) => {
    const { taskId, contextId } = requestContext;
    const first = requestContext.userMessage.parts[0]?.content;
    const request = first?.$case === 'text' && first.value === 'approve data' ? APPROVAL_REQUEST_SEND_DATA : SDK_APPROVAL_REQUEST;
    if (request.action.kind === 'send_data') forms.set(taskId, request.action.form as unknown as Record<string, unknown>);
    // As the SDK's samples do: the task first, then its status; the blocking SendMessage answers
    // once a status update is terminal or INPUT_REQUIRED.
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [requestContext.userMessage],
      metadata: undefined,
    };
    eventBus.publish(AgentEvent.task(task));
    const status = {
      state: TaskState.TASK_STATE_INPUT_REQUIRED,
      message: agentMessage(taskId, contextId, [textPart('This needs a person’s approval.'), dataPart(request, APPROVAL_REQUEST_MEDIA_TYPE)]),
      timestamp: new Date().toISOString(),
    };
    eventBus.publish(AgentEvent.statusUpdate({ taskId, contextId, status, metadata: undefined }));
  };
}

export async function startSdkAgent(trusted: TrustedTaskbay): Promise<SdkAgent> {
  let trust = trusted;
  let intercept = false;
  const verdicts: SdkVerdict[] = [];
  const approvedBodies: SdkAgent['approvedBodies'] = [];
  const card: AgentCard = {
    name: 'SDK approvals agent',
    description: 'Asks Taskbay before acting and verifies the approval with @taskbay/verify.',
    supportedInterfaces: [],
    provider: undefined,
    version: '1.0.0',
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extensions: [
        { uri: APPROVAL_REQUEST_EXTENSION, description: 'Asks a person to approve one exact action.', required: false, params: undefined },
        { uri: EXECUTION_EVIDENCE_EXTENSION, description: 'Reports what it executed.', required: false, params: undefined },
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [{ id: 'act', name: 'Act', description: 'Acts once approved.', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const forms = new Map<string, Record<string, unknown>>();
  // The executor of the docs (docs/samples/verify-sdk-executor.ts), verifying with @taskbay/verify.
  const executor = new ApprovalCheckingExecutor({
    trusted: () => trust,
    ask: asker(forms),
    act: async () => 'done by the SDK agent',
    formOf: (taskId) => forms.get(taskId),
    onVerdict: (verdict, requestContext) => verdicts.push({ taskId: requestContext.taskId, message: requestContext.userMessage, verdict }),
  });
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);

  const app = express();
  app.use('/card.json', agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(
    '/a2a',
    express.json({ limit: '1mb' }),
    (req, res, next) => {
      if (req.body?.params?.message?.metadata?.approval) {
        approvedBodies.push({ body: structuredClone(req.body), intercepted: intercept });
        if (intercept) {
          intercept = false;
          res.status(503).end();
          return;
        }
      }
      next();
    },
    jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }),
  );
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card.supportedInterfaces = [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }];
  return {
    cardUrl: `${base}/card.json`,
    a2aUrl: `${base}/a2a`,
    verdicts,
    approvedBodies,
    trust: (taskbay) => {
      trust = taskbay;
    },
    interceptNextApproval: () => {
      intercept = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
