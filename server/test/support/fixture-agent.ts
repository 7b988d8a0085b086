import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { startFixtureAgent, type FixtureAgent, type FixtureAgentOptions } from '../../src/fixture-agent/server.js';
import { OPS, ok, startTestInstance, type InstanceOptions, type TestInstance } from './harness.js';

// The set-up most integration tests share: the fixture agent (src/fixture-agent) beside one
// Taskbay instance, and the answer the scripted variant is told to give to ask for an approval.

/** A fixture agent, then a Taskbay instance: what a test file starts in its beforeAll. */
export async function startWithFixtureAgent(
  instance: InstanceOptions = {},
  agent: FixtureAgentOptions = {},
): Promise<{ t: TestInstance; fixture: FixtureAgent }> {
  const fixture = await startFixtureAgent(agent);
  try {
    return { t: await startTestInstance(instance), fixture };
  } catch (e) {
    await fixture.close();
    throw e;
  }
}

type Stoppable = { stop(): Promise<void> } | { close(): Promise<void> };

/** Stops what a test file started, one after another in the order given (an instance before the agents it talks to); what never started is skipped. */
export async function stopAll(...parts: (Stoppable | undefined | null)[]): Promise<void> {
  for (const p of parts) {
    if (!p) continue;
    await ('stop' in p ? p.stop() : p.close());
  }
}

/**
 * What the scripted fixture agent is told to answer (startTask's or sendTaskMessage's `data`) to
 * ask for this approval: INPUT_REQUIRED, a line of text and the approval request part.
 */
export function askingForApproval(request: Record<string, unknown>) {
  return { reply: { state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'Please approve.' }, { data: request, mediaType: MEDIA_TYPE.approvalRequest }] } };
}

/** Starts a task of the scripted agent that asks for this approval, and returns the pending request it opened. */
export async function openAgentRequest(t: TestInstance, scriptedAgentId: string, request: Record<string, unknown>) {
  const task = ok(await t.gql(OPS.startTask, { agentId: scriptedAgentId, data: askingForApproval(request) })).startTask;
  const list = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t, first: 1) { edges { node { id revision digest } } } }`, { t: task.id }));
  return list.approvals.edges[0].node as { id: string; revision: number; digest: string };
}
