// A2A v1.0 wire shapes (JSON-RPC binding, ProtoJSON field names). Only what Taskbay reads or
// sends is typed; everything arriving from an agent is still validated before use.

export type Role = 'ROLE_USER' | 'ROLE_AGENT';

export type A2ATaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_AUTH_REQUIRED'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_REJECTED';

export const A2A_TASK_STATES: readonly A2ATaskState[] = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
];

export const TERMINAL_STATES: readonly A2ATaskState[] = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

export interface Part {
  text?: string;
  data?: unknown;
  url?: string;
  raw?: string;
  mediaType?: string;
  filename?: string;
  metadata?: Record<string, unknown>;
}

export interface Message {
  messageId: string;
  role: Role;
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
  extensions?: string[];
}

export interface TaskStatus {
  state: A2ATaskState;
  message?: Message;
  timestamp?: string;
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  history?: Message[];
  artifacts?: unknown[];
  metadata?: Record<string, unknown>;
}

export interface SendMessageParams {
  message: Message;
  configuration?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** SendMessage result: exactly one of task or message. */
export type SendMessageResult = { task: Task } | { message: Message };

export interface AgentExtension {
  uri: string;
  description?: string;
  required?: boolean;
  params?: Record<string, unknown>;
}

export interface AgentInterface {
  url: string;
  protocolBinding: string;
  protocolVersion?: string;
}

export interface AgentSkill {
  id: string;
  name: string;
  description?: string;
  tags?: string[];
}

export interface AgentCard {
  name: string;
  description?: string;
  version?: string;
  supportedInterfaces: AgentInterface[];
  capabilities: { streaming?: boolean; pushNotifications?: boolean; extensions?: AgentExtension[] };
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
  skills: AgentSkill[];
}

export interface JsonRpcRequest<P = unknown> {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params: P;
}

export type JsonRpcResponse<R = unknown> =
  | { jsonrpc: '2.0'; id: string | number | null; result: R }
  | { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };

export interface TaskStatusUpdateEvent {
  taskId: string;
  contextId: string;
  status: TaskStatus;
  metadata?: Record<string, unknown>;
}

export interface TaskArtifactUpdateEvent {
  taskId: string;
  contextId: string;
  artifact: unknown;
}

/** A2A v1.0 StreamResponse (SendStreamingMessage, SubscribeToTask, push payloads): exactly one member. */
export type StreamEvent = { task: Task } | { message: Message } | { statusUpdate: TaskStatusUpdateEvent } | { artifactUpdate: TaskArtifactUpdateEvent };

/** v1.0 SendMessageConfiguration.taskPushNotificationConfig (task id empty: the server assigns it). */
export interface PushNotificationConfig {
  url: string;
  token: string;
}
