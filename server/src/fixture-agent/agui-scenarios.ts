import type { BaseEvent, Interrupt } from '@ag-ui/core';

// The scenarios of the AG-UI fixture agent (agui.ts): what each first run streams and the
// interrupts it ends with. A test fixture and demo, not product code.

export const AGUI_SCENARIOS = [
  'approval',
  'form',
  'multi',
  'hostile-json',
  'hostile-big',
  'hostile-unknown',
  'hostile-state-3000',
  'hostile-state-40000',
  'hostile-delta-40000',
  'hostile-args-40000',
  'hostile-comments',
] as const;
export type AgUiScenario = (typeof AGUI_SCENARIOS)[number];

export interface ToolCallPlan {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface FirstRun {
  events: BaseEvent[];
  interrupts: Interrupt[];
  toolCalls: ToolCallPlan[];
}

const APPROVE_WITH_EDITS = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, editedArgs: { type: 'object', description: 'Full replacement of the tool args. Not merged.' } },
  required: ['approved'],
};

export const FILING_SCHEMA = {
  type: 'object',
  properties: {
    quarter: { type: 'string', title: 'Quarter', enum: ['Q1', 'Q2', 'Q3', 'Q4'], default: 'Q1' },
    year: { type: 'integer', title: 'Year', minimum: 2000, default: 2026 },
    revenue: { type: 'number', title: 'Revenue', minimum: 0, default: 0 },
  },
  required: ['quarter', 'year', 'revenue'],
};

function toolCallEvents(messageId: string, call: ToolCallPlan): BaseEvent[] {
  const json = JSON.stringify(call.args);
  const half = Math.ceil(json.length / 2);
  return [
    { type: 'TOOL_CALL_START', toolCallId: call.id, toolCallName: call.name, parentMessageId: messageId },
    { type: 'TOOL_CALL_ARGS', toolCallId: call.id, delta: json.slice(0, half) },
    { type: 'TOOL_CALL_ARGS', toolCallId: call.id, delta: json.slice(half) },
    { type: 'TOOL_CALL_END', toolCallId: call.id },
  ] as BaseEvent[];
}

function say(messageId: string, text: string): BaseEvent[] {
  return [
    { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text },
    { type: 'TEXT_MESSAGE_END', messageId },
  ] as BaseEvent[];
}

/** The first run of a scenario on a thread (ids derived from the run, so each run's are its own). */
export function firstRun(scenario: 'approval' | 'form' | 'multi', runId: string): FirstRun {
  const msg = `msg-${runId}`;
  if (scenario === 'form') {
    return {
      events: say(msg, 'I need the quarterly filing details.'),
      interrupts: [
        { id: `int-form-${runId}`, reason: 'input_required', message: 'Please provide the quarterly filing details.', responseSchema: FILING_SCHEMA },
      ],
      toolCalls: [],
    };
  }
  const recipients = scenario === 'multi' ? ['x@example.com', 'y@example.com', 'z@example.com'] : ['ops@example.com'];
  const toolCalls = recipients.map((to, i) => ({
    id: `tc-${i + 1}-${runId}`,
    name: 'sendEmail',
    args: { to, subject: 'Q3 report', body: 'The Q3 report is attached.' },
  }));
  const events = [...say(msg, `I will email the Q3 report to ${recipients.join(', ')}.`), ...toolCalls.flatMap((c) => toolCallEvents(msg, c))];
  const interrupts: Interrupt[] = toolCalls.map((c, i) => ({
    id: `int-${i + 1}-${runId}`,
    reason: 'tool_call',
    message: `Send the Q3 report to ${(c.args as { to: string }).to}?`,
    toolCallId: c.id,
    responseSchema: APPROVE_WITH_EDITS,
  }));
  return { events: [{ type: 'STATE_SNAPSHOT', snapshot: { step: 'awaiting-approval' } } as BaseEvent, ...events], interrupts, toolCalls };
}

export { say };
