import { isPlainObject } from '../../../server/src/lib/untrusted.js';
import { readToolCall } from './tool-call';

// The exact action as plain text, for a confirmation (the whole of it, clipped with a way to
// see all) and an inbox row (one line): what a reviewer decides, next to the digest that covers
// it. Text is as the agent sent it and data is its JSON, so nothing is summarised away; the
// approval page's richer view (ActionView) reads the same action.

const json = (v: unknown) => JSON.stringify(v, null, 2) ?? String(v);
const compact = (v: unknown) => JSON.stringify(v) ?? String(v);
const commandsOf = (a: Record<string, unknown>) =>
  Array.isArray(a.commands) && a.commands.every((c) => typeof c === 'string') ? (a.commands as string[]) : null;

/** The whole action as lines of text: what it does, then its text and data verbatim. */
export function actionText(action: unknown): string {
  const a = isPlainObject(action) ? action : {};
  const call = readToolCall(action);
  if (call) return `Call the tool ${call.tool} on MCP server ${call.server} with these arguments:\n${json(call.arguments)}\nMessage text:\n${a.text}`;
  if (a.kind === 'send_message' && typeof a.text === 'string')
    return `Send this message to the agent:\n${a.text}${a.data !== undefined && a.data !== null ? `\nwith data:\n${json(a.data)}` : ''}`;
  if (a.kind === 'send_data') return `Send these form values to the agent:\n${json(a.values ?? {})}`;
  const commands = a.kind === 'run_command' ? commandsOf(a) : null;
  if (commands)
    return `Let coding agent ${String(a.agent_id ?? '?')} run ${commands.length === 1 ? 'this command' : `these ${commands.length} commands`} once:\n${commands.join('\n')}\nSealed payload:\n${json(a.payload ?? {})}`;
  return `An action of a kind the console does not know, whole:\n${json(action)}`;
}

/** At most `max` characters on one line (whitespace collapsed), ending in … when cut. */
export function oneLine(text: string, max = 140): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** The action in one line, for an inbox row. */
export function actionPreview(action: unknown): string {
  const a = isPlainObject(action) ? action : {};
  const call = readToolCall(action);
  if (call) return oneLine(`Tool ${call.tool} on ${call.server}: ${compact(call.arguments)}`);
  if (a.kind === 'send_message' && typeof a.text === 'string')
    return oneLine(`Message: ${a.text}${a.data !== undefined && a.data !== null ? ` + data ${compact(a.data)}` : ''}`);
  if (a.kind === 'send_data') return oneLine(`Values: ${compact(a.values ?? {})}`);
  const commands = a.kind === 'run_command' ? commandsOf(a) : null;
  if (commands) return oneLine(`Run: ${commands.join(' ; ')}`);
  return oneLine(compact(action));
}

/** The first `lines` lines (and at most `chars` characters) of `text`, and whether that is all of it. */
export function clip(text: string, lines = 8, chars = 600): { shown: string; clipped: boolean } {
  let shown = text.split('\n').slice(0, lines).join('\n');
  if (shown.length > chars) shown = shown.slice(0, chars);
  return { shown, clipped: shown.length < text.length };
}
