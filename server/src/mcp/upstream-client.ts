import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Config } from '../config.js';
import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/sdk/types.js';
import { MCP_GATEWAY_LIMITS } from '../limits.js';
import type { McpUpstreamRow } from './entities.js';
import { NetworkPolicyRefusal } from '../net/agent-network.js';

// The gateway's connection to an upstream MCP server, one per client session (an MCP session
// has state: subscriptions, a log level, elicitations in flight). Everything it answers is
// hostile: each HTTP answer is cut at MCP_GATEWAY_LIMITS.upstreamAnswerMaxBytes (the call then
// fails with a clear error), and every request it is sent ends within upstreamTimeoutSeconds.

export class UpstreamTooLarge extends Error {}

/**
 * The requests in flight to one upstream: when one of its answers goes over the limit, they all
 * fail with that error (a streamed answer cut short would otherwise leave its request waiting).
 */
export class UpstreamGuard {
  private readonly inFlight = new Set<AbortController>();
  readonly fail = (e: Error) => {
    for (const c of this.inFlight) c.abort(e);
  };
  track(): { signal: AbortSignal; done(): void } {
    const c = new AbortController();
    this.inFlight.add(c);
    return { signal: c.signal, done: () => void this.inFlight.delete(c) };
  }
}

/** fetch whose answers stop at `maxBytes` of body (a larger or endless one errors the stream, and `onTooLarge` hears of it). */
export function cappedFetch(base: typeof fetch, maxBytes: number, onTooLarge: (e: Error) => void = () => {}): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (!res.body) return res;
    let seen = 0;
    const capped = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            const e = new UpstreamTooLarge(`the MCP server's answer is larger than ${maxBytes} bytes`);
            controller.error(e);
            onTooLarge(e);
          } else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(capped, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

export const upstreamTimeoutMs = () => MCP_GATEWAY_LIMITS.upstreamTimeoutSeconds * 1000;

export class StdioOff extends Error {}

/**
 * Connects as the downstream client said it is (its name and capabilities): over HTTP through
 * the agent network's fetch, or by running the server's command (stdio, with the SDK's default
 * environment: no secret of Taskbay's is passed) while the setting allows it.
 */
export async function connectUpstream(
  row: McpUpstreamRow,
  deps: { network: { fetch: typeof fetch }; config: Pick<Config, 'mcpStdio'> },
  client: { info: Implementation; capabilities: ClientCapabilities },
  guard: UpstreamGuard,
): Promise<Client> {
  const upstream = new Client(client.info, { capabilities: client.capabilities });
  let transport: Transport;
  if (row.transport === 'STDIO') {
    if (!deps.config.mcpStdio) throw new StdioOff('MCP servers run as a command are off on this Taskbay (TASKBAY_MCP_STDIO)');
    transport = new StdioClientTransport({ command: row.command!, args: row.args ?? [], env: getDefaultEnvironment(), stderr: 'ignore' });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(row.url!), {
      fetch: cappedFetch(deps.network.fetch, MCP_GATEWAY_LIMITS.upstreamAnswerMaxBytes, guard.fail),
    });
  }
  await upstream.connect(transport, { timeout: upstreamTimeoutMs() });
  return upstream;
}

/** What went wrong reaching an upstream, in words that quote nothing it sent. */
export function upstreamProblem(e: unknown): string {
  if (e instanceof NetworkPolicyRefusal) return e.message;
  const cause = e instanceof Error && e.cause instanceof NetworkPolicyRefusal ? e.cause : null;
  if (cause) return cause.message;
  return e instanceof Error ? e.message.slice(0, 300) : 'it failed';
}
