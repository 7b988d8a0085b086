import { isPlainObject, own } from '../lib/untrusted.js';
import type { A2ATransport, AgentConnection, HttpTarget, OnStreamEvent } from './connection.js';
import { jsonRpcStreamEvent } from './jsonrpc.js';
import type { SendMessageParams, StreamEvent } from './types.js';
import { parseStreamEvent } from './wire.js';

// The HTTP+JSON (REST) binding: POST /message:send and /message:stream, GET /tasks/{id},
// POST /tasks/{id}:cancel, GET /tasks/{id}:subscribe. A stream's SSE events are bare
// StreamResponses (a JSON-RPC envelope is accepted too).

function streamEvent(json: unknown, what: string): StreamEvent {
  if (isPlainObject(json) && own(json, 'jsonrpc') === undefined) return parseStreamEvent(json);
  return jsonRpcStreamEvent(json, what);
}

export class HttpJsonTransport implements A2ATransport {
  constructor(private readonly connection: AgentConnection) {}

  private target(method: HttpTarget['method'], path: string, body?: unknown): HttpTarget {
    return { url: this.connection.urlWith(path), method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) };
  }

  private taskPath(id: string, suffix = ''): string {
    return `/tasks/${encodeURIComponent(id)}${suffix}`;
  }

  sendMessage(params: SendMessageParams): Promise<unknown> {
    return this.connection.requestJson(this.target('POST', '/message:send', params), this.connection.what('SendMessage'));
  }

  getTask(params: { id: string; historyLength?: number }): Promise<unknown> {
    const q = params.historyLength !== undefined ? `?historyLength=${params.historyLength}` : '';
    return this.connection.requestJson(this.target('GET', this.taskPath(params.id, q)), this.connection.what('GetTask'));
  }

  cancelTask(params: { id: string }): Promise<unknown> {
    return this.connection.requestJson(this.target('POST', this.taskPath(params.id, ':cancel'), {}), this.connection.what('CancelTask'));
  }

  sendStreamingMessage(params: SendMessageParams, onEvent: OnStreamEvent): Promise<number> {
    return this.stream('SendStreamingMessage', this.target('POST', '/message:stream', params), onEvent);
  }

  subscribeToTask(params: { id: string }, onEvent: OnStreamEvent): Promise<number> {
    return this.stream('SubscribeToTask', this.target('GET', this.taskPath(params.id, ':subscribe')), onEvent);
  }

  private stream(operation: string, target: HttpTarget, onEvent: OnStreamEvent): Promise<number> {
    const what = this.connection.what(operation);
    return this.connection.stream(target, operation, (json) => streamEvent(json, what), onEvent);
  }
}
