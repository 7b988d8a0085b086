import { isPlainObject } from '../../../server/src/lib/untrusted.js';

// An MCP gateway call as the action of a request (docs/MCP.md "A held call"): a send_message
// whose data is exactly {server, tool, arguments}, server and tool strings, arguments an object.
// The shape alone says only what the action looks like: Approval.mcpCall says whether the gateway
// holds a call for it (approval/McpCall.tsx).

export interface ToolCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
}

const KEYS = ['arguments', 'server', 'tool'];

/** The tool call this action is, or null when it is anything else. */
export function readToolCall(action: unknown): ToolCall | null {
  if (!isPlainObject(action) || action.kind !== 'send_message' || typeof action.text !== 'string') return null;
  const data = action.data;
  if (!isPlainObject(data)) return null;
  const keys = Object.keys(data).sort();
  if (keys.length !== KEYS.length || keys.some((k, i) => k !== KEYS[i])) return null;
  const { server, tool, arguments: args } = data;
  if (typeof server !== 'string' || typeof tool !== 'string' || !isPlainObject(args)) return null;
  return { server, tool, arguments: args };
}
