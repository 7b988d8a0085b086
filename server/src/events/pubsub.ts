import { createPubSub } from 'graphql-yoga';

// The local pub/sub of one instance. Only the LISTEN loop (events/listener.ts) publishes into
// it, and only events whose transaction committed.

export interface ApprovalEventPayload {
  seq: number;
  type: string;
  tenantId: string;
  approvalId: string;
  agentId: string | null;
  supersededById: string | null;
}

export interface TaskEventPayload {
  seq: number;
  type: string;
  tenantId: string;
  taskId: string;
  agentId: string | null;
}

export function createTaskbayPubSub() {
  return createPubSub<{
    approval: [ApprovalEventPayload];
    task: [TaskEventPayload];
  }>();
}

export type TaskbayPubSub = ReturnType<typeof createTaskbayPubSub>;
