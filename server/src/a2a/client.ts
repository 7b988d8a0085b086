import type { Binding } from './card.js';
import { AgentConnection, type A2ATransport, type AgentConnectionOptions, type OnStreamEvent } from './connection.js';
import { HttpJsonTransport } from './http-json.js';
import { JsonRpcTransport } from './jsonrpc.js';
import type { SendMessageParams, SendMessageResult, Task } from './types.js';
import { parseSendMessageResult, parseTask } from './wire.js';

// A small hand-written A2A v1.0 client (SendMessage, GetTask, CancelTask, SendStreamingMessage,
// SubscribeToTask) over the binding the card prefers. The pieces: wire.ts validates what the
// agent answers, connection.ts speaks HTTP to the interface, sse.ts reads event streams,
// jsonrpc.ts and http-json.ts map each operation onto their binding.

export { A2A_DEFAULT_TIMEOUT_MS, A2A_RESPONSE_MAX_BYTES, A2A_STREAM_TIMEOUT_MS, A2AStreamLimitError } from './connection.js';
export {
  A2A_ID_MAX,
  A2AError,
  parseMessage,
  parseSendMessageResult,
  parseStreamEvent,
  parseTask,
  type A2AErrorKind,
} from './wire.js';

export interface A2AClientOptions extends AgentConnectionOptions {
  /** JSONRPC (default) or HTTP+JSON (the REST binding: /message:send, /tasks/{id}, ...). */
  binding?: Binding;
}

export class A2AClient {
  readonly binding: Binding;
  private readonly transport: A2ATransport;

  constructor(opts: A2AClientOptions) {
    const connection = new AgentConnection(opts);
    this.binding = opts.binding ?? 'JSONRPC';
    this.transport = this.binding === 'HTTP+JSON' ? new HttpJsonTransport(connection) : new JsonRpcTransport(connection);
  }

  async sendMessage(params: SendMessageParams): Promise<SendMessageResult> {
    return parseSendMessageResult(await this.transport.sendMessage(params));
  }

  async getTask(params: { id: string; historyLength?: number }): Promise<Task> {
    return parseTask(await this.transport.getTask(params));
  }

  async cancelTask(params: { id: string }): Promise<Task> {
    return parseTask(await this.transport.cancelTask(params));
  }

  /**
   * SendStreamingMessage over SSE: `onEvent` runs (and is awaited) for each StreamResponse, in
   * order, as it arrives. Resolves with the number of events when the agent ends the stream;
   * throws A2AError (with `eventsSeen` when the connection drops) when it fails.
   */
  sendStreamingMessage(params: SendMessageParams, onEvent: OnStreamEvent): Promise<number> {
    return this.transport.sendStreamingMessage(params, onEvent);
  }

  /** SubscribeToTask: resumes the event stream of an existing task (SSE, as above). */
  subscribeToTask(params: { id: string }, onEvent: OnStreamEvent): Promise<number> {
    return this.transport.subscribeToTask(params, onEvent);
  }
}
