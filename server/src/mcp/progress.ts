import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/**
 * Progress notifications for one tools/call while it waits for a person, when the call asked for
 * them (a progressToken): each message says what is awaited; progress counts the notes.
 */
export function progressNotes(extra: RequestHandlerExtra<ServerRequest, ServerNotification>): (message: string) => void {
  const token = extra._meta?.progressToken;
  let step = 0;
  return (message) => {
    if (token === undefined) return;
    step += 1;
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, message } }).catch(() => {});
  };
}
