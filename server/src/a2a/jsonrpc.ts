import { randomUUID } from 'node:crypto';
import { isPlainObject, own } from '../lib/untrusted.js';
import type { A2ATransport, AgentConnection, OnStreamEvent } from './connection.js';
import type { SendMessageParams, StreamEvent } from './types.js';
import { invalid, parseStreamEvent, rpcError } from './wire.js';

// The JSON-RPC 2.0 binding: every operation is a POST to the interface URL naming its method;
// a stream's SSE events are JSON-RPC responses whose result is a StreamResponse.

/** One SSE event of a JSON-RPC stream: its result, or the JSON-RPC error it carries. */
export function jsonRpcStreamEvent(json: unknown, what: string): StreamEvent {
  if (!isPlainObject(json) || own(json, 'jsonrpc') !== '2.0') throw invalid('a stream event is not a JSON-RPC 2.0 response');
  const error = own(json, 'error');
  if (error !== undefined && error !== null) throw rpcError(what, error);
  return parseStreamEvent(own(json, 'result'));
}

export class JsonRpcTransport implements A2ATransport {
  constructor(private readonly connection: AgentConnection) {}

  sendMessage(params: SendMessageParams): Promise<unknown> {
    return this.call('SendMessage', params);
  }

  getTask(params: { id: string; historyLength?: number }): Promise<unknown> {
    return this.call('GetTask', params);
  }

  cancelTask(params: { id: string }): Promise<unknown> {
    return this.call('CancelTask', params);
  }

  sendStreamingMessage(params: SendMessageParams, onEvent: OnStreamEvent): Promise<number> {
    return this.stream('SendStreamingMessage', params, onEvent);
  }

  subscribeToTask(params: { id: string }, onEvent: OnStreamEvent): Promise<number> {
    return this.stream('SubscribeToTask', params, onEvent);
  }

  private stream(method: string, params: unknown, onEvent: OnStreamEvent): Promise<number> {
    const what = this.connection.what(method);
    const target = { url: this.connection.url, method: 'POST' as const, body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }) };
    return this.connection.stream(target, method, (json) => jsonRpcStreamEvent(json, what), onEvent);
  }

  /** One JSON-RPC call; resolves with the untrusted `result`, or throws A2AError. */
  async call(method: string, params: unknown): Promise<unknown> {
    const id = randomUUID();
    const what = this.connection.what(method);
    const json = await this.connection.requestJson(
      { url: this.connection.url, method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) },
      what,
    );
    if (!isPlainObject(json) || own(json, 'jsonrpc') !== '2.0') throw invalid('the response is not a JSON-RPC 2.0 object');
    const error = own(json, 'error');
    if (error !== undefined && error !== null) {
      if (!isPlainObject(error) || typeof own(error, 'code') !== 'number') throw invalid('the JSON-RPC error is malformed');
      throw rpcError(what, error);
    }
    if (own(json, 'id') !== id) throw invalid('the JSON-RPC id does not match the request');
    if (!Object.hasOwn(json, 'result')) throw invalid('the JSON-RPC response has neither result nor error');
    return own(json, 'result');
  }
}
