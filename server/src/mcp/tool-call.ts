import { isPlainObject, own } from '../lib/untrusted.js';
import { codePointLength, MCP_LIMITS } from '../limits.js';

// A tool call to approve (issue 25): `{server, tool, arguments}`. It is asked as a send_message
// (seed 000) whose data is exactly the call, so the one digest rule, the signed approval and every
// verifier cover it unchanged; its text says in words what is asked.

export interface ToolCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/** The tool call as given, or what is wrong with it. */
export function parseToolCall(value: unknown): { ok: true; call: ToolCall } | { ok: false; error: string } {
  if (!isPlainObject(value)) return { ok: false, error: 'action must be an object' };
  const extra = Object.keys(value).filter((k) => k !== 'server' && k !== 'tool' && k !== 'arguments');
  if (extra.length) return { ok: false, error: `a tool call has only server, tool and arguments, not ${extra.slice(0, 3).join(', ')}` };
  const server = own(value, 'server');
  const tool = own(value, 'tool');
  const args = own(value, 'arguments') ?? {};
  const name = (what: string, v: unknown, max: number) =>
    typeof v !== 'string' || !v.trim()
      ? `action.${what} must be a non-empty string`
      : codePointLength(v, max) > max
        ? `action.${what} is longer than ${max} characters`
        : null;
  const bad = name('server', server, MCP_LIMITS.serverNameMaxChars) ?? name('tool', tool, MCP_LIMITS.toolNameMaxChars);
  if (bad) return { ok: false, error: bad };
  if (!isPlainObject(args)) return { ok: false, error: "action.arguments must be an object (the tool call's arguments)" };
  return { ok: true, call: { server: server as string, tool: tool as string, arguments: args } };
}

/** The send_message that asks for the call. */
export function toolCallAction(call: ToolCall) {
  return {
    kind: 'send_message' as const,
    text: `Call the tool ${JSON.stringify(call.tool)} of the MCP server ${JSON.stringify(call.server)}`,
    data: { server: call.server, tool: call.tool, arguments: call.arguments },
  };
}

/** The tool call a send_message's data is (as asked, or as a reviewer edited it), or null. */
export function toolCallOf(action: unknown): ToolCall | null {
  if (!isPlainObject(action) || action.kind !== 'send_message') return null;
  const parsed = parseToolCall(action.data);
  return parsed.ok ? parsed.call : null;
}
