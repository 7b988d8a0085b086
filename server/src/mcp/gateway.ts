import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Notification,
  type Request,
  ResultSchema,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Viewer } from '../access.js';
import type { ApprovalKeys } from '../approval-signing/module.js';
import type { Config } from '../config.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { isPlainObject, nestedDeeperThan } from '../lib/untrusted.js';
import { JSON_DEPTH_MAX, MCP_GATEWAY_LIMITS } from '../limits.js';
import { errorForLog, log } from '../log.js';
import { approvalState, requestWithDecision, signedApprovalField, stateInWords, verifiedApproval } from './approval-state.js';
import { toolCallOf } from './tool-call.js';
import { Decision, type DecisionRow } from '../decisions/entities.js';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { callFacts, decideCall } from './call-rules.js';
import { rulesCacheOf } from './rules-cache.js';
import { clientNameOf, mcpClientAgent } from './client-agent.js';
import type { McpUpstreamRow } from './entities.js';
import { claimForward, holdCall, noteWaiting, recordAnswer } from './held-call.js';
import { McpInputError } from './request-approval.js';
import { type UpstreamGuard, upstreamTimeoutMs } from './upstream-client.js';
import { progressNotes } from './progress.js';
import { PassThrough, relayable } from './pass-through.js';
import { waitForDecision } from './wait.js';

// The gateway (docs/MCP.md "The gateway"): an MCP server at /mcp/servers/<name> that is the
// upstream server as its clients see it (its name, capabilities and instructions), passing every
// request, notification and error through unchanged, except tools/call, which the server's call
// rules pass, hold for a person's approval, or refuse. A held call is forwarded once, after its
// approval, as approved (a reviewer may edit the arguments), carrying the signed approval in
// `_meta` (MCP_APPROVAL_META_KEY) for an upstream that checks it.

// The `_meta` key of a forwarded held call: the signed approval (@taskbay/verify's verifyToolCallApproval checks it).
import { MCP_APPROVAL_META_KEY } from '../../../packages/taskbay-verify/src/mcp.js';

export interface GatewayContext {
  orm: MikroORM;
  pubsub: TaskbayPubSub;
  config: Config;
  approvalKeys: ApprovalKeys;
  who(): Viewer;
  tokenKey: string;
  row: McpUpstreamRow;
  upstream: Client;
  /** Fails the requests in flight when an answer of the upstream goes over the limit. */
  guard: UpstreamGuard;
  /** Aborted when the HTTP request that carried this JSON-RPC request closed before its answer. */
  abandoned(requestId: string | number): AbortSignal | null;
  /** The agent network's fetch, for the fast path of passed calls (pass-through.ts). */
  fetch: typeof fetch;
}

/**
 * Takes a POST of the session before the SDK transport does, when it is a tools/call the fast
 * path may relay (pass-through.ts); false: the SDK transport handles it as before.
 */
export type GatewayRelay = (req: IncomingMessage, res: ServerResponse, body: unknown, sessionId: string) => Promise<boolean>;

/** Client capabilities under which the upstream may ask the client something during a call: those calls take the SDK path. */
const ASKED_OF_THE_CLIENT = ['sampling', 'elicitation', 'roots', 'tasks', 'experimental'];

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A JSON-RPC error of the upstream (or the SDK client's timeout), passed on with its code, message and data as they are. */
class UpstreamError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** The SDK client's McpError puts "MCP error <code>: " before the upstream's message; the client is given the message as sent. */
function asSent(e: unknown): unknown {
  if (!(e instanceof McpError)) return e;
  const prefix = `MCP error ${e.code}: `;
  return new UpstreamError(e.code, e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message, e.data);
}

const toolError = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

function withoutProgressToken(params: Request['params']): Request['params'] {
  if (!params?._meta || !('progressToken' in params._meta)) return params;
  const { progressToken: _, ...meta } = params._meta;
  return { ...params, _meta: meta };
}

export function gatewayServer(ctx: GatewayContext): { server: Server; relay: GatewayRelay } {
  const { upstream, row } = ctx;
  const capabilities = upstream.getServerCapabilities() ?? {};
  const server = new Server(upstream.getServerVersion() ?? { name: row.name, version: '0' }, {
    capabilities,
    ...(upstream.getInstructions() ? { instructions: upstream.getInstructions() } : {}),
  });
  const em = () => ctx.orm.em.fork() as unknown as EntityManager;
  // The client's requests in flight, newest last: what the upstream sends meanwhile (a log
  // message, a progress note, an elicitation) goes to the client on that request's stream.
  const inFlight: Extra[] = [];
  const tools = new Map<string, Tool>();

  const forward = async (request: Request, extra: Extra) => {
    const token = extra._meta?.progressToken;
    inFlight.push(extra);
    const tracked = ctx.guard.track();
    try {
      return await upstream.request({ method: request.method, params: withoutProgressToken(request.params) } as never, ResultSchema, {
        signal: AbortSignal.any([extra.signal, tracked.signal]),
        timeout: upstreamTimeoutMs(),
        ...(token !== undefined
          ? {
              resetTimeoutOnProgress: true,
              maxTotalTimeout: upstreamTimeoutMs() * 10,
              onprogress: (p) => {
                extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => {});
              },
            }
          : {}),
      });
    } catch (e) {
      throw asSent(e);
    } finally {
      tracked.done();
      inFlight.splice(inFlight.indexOf(extra), 1);
    }
  };

  server.fallbackRequestHandler = (request, extra) => forward(request, extra) as never;
  // The Server answers logging/setLevel itself when the capability is there; the upstream must hear it.
  if (capabilities.logging) server.setRequestHandler(SetLevelRequestSchema, (request, extra) => forward(request, extra) as never);

  const transport = upstream.transport;
  const passThrough =
    transport instanceof StreamableHTTPClientTransport && row.url
      ? new PassThrough({
          fetch: ctx.fetch,
          url: row.url,
          transport,
          onNotification: (method) => {
            if (method === 'notifications/tools/list_changed') tools.clear();
          },
        })
      : null;
  const relay: GatewayRelay = async (req, res, body, sessionId) => {
    if (!passThrough) return false;
    passThrough.cancels(body);
    const call = relayable(req, body);
    if (!call) return false;
    const caps = server.getClientCapabilities();
    if (!caps || ASKED_OF_THE_CLIENT.some((k) => k in caps)) return false;
    // Only a tool already listed, an argument depth within bounds, and the rules saying PASS;
    // everything else (a list to read, a tool error, a hold) is the SDK path's, as before.
    const tool = tools.get(call.name);
    if (!tool || nestedDeeperThan(call.arguments, JSON_DEPTH_MAX)) return false;
    // A failed read is the SDK path's to report, as a call's error.
    const rules = await rulesCacheOf(ctx.orm)
      .rulesOf(em, row.id)
      .catch(() => null);
    if (!rules || decideCall(rules, callFacts(row.name, tool, call.name, call.arguments)).outcome !== 'PASS') return false;
    await passThrough.relay(res, call, sessionId, ctx.abandoned(call.message.id));
    return true;
  };

  upstream.fallbackNotificationHandler = async (n: Notification) => {
    if (n.method === 'notifications/tools/list_changed') tools.clear();
    const target = inFlight.at(-1);
    await (target ? target.sendNotification(n as ServerNotification) : server.notification(n as ServerNotification)).catch(() => {});
  };
  upstream.fallbackRequestHandler = async (request, extra) => {
    const target = inFlight.at(-1);
    const options = { signal: extra.signal, timeout: upstreamTimeoutMs() * 10 };
    return (
      target ? target.sendRequest(request as ServerRequest, ResultSchema, options) : server.request(request as ServerRequest, ResultSchema, options)
    ) as never;
  };

  /** The upstream's description of a tool: from its lists so far, else read again (bounded). */
  const toolNamed = async (name: string, extra: Extra): Promise<Tool | null> => {
    if (tools.has(name)) return tools.get(name)!;
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = (await forward({ method: 'tools/list', params: cursor ? { cursor } : {} }, extra)) as { tools?: Tool[]; nextCursor?: string };
      remember(page.tools);
      if (tools.has(name)) return tools.get(name)!;
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
      if (!cursor) break;
    }
    return null;
  };
  const remember = (list: unknown) => {
    if (!Array.isArray(list)) return;
    if (list.length + tools.size > MCP_GATEWAY_LIMITS.toolsMax) {
      throw new McpError(
        ErrorCode.InternalError,
        `the MCP server ${row.name} lists more than ${MCP_GATEWAY_LIMITS.toolsMax} tools; Taskbay serves at most that many`,
      );
    }
    for (const t of list) if (isPlainObject(t) && typeof t.name === 'string') tools.set(t.name, t as unknown as Tool);
  };

  if (capabilities.tools) {
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      const result = (await forward(request, extra)) as { tools?: unknown };
      remember(result.tools);
      return result as never;
    });

    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name;
      const args = request.params.arguments ?? {};
      if (nestedDeeperThan(args, JSON_DEPTH_MAX)) return toolError(`Taskbay refused this call: its arguments are nested deeper than ${JSON_DEPTH_MAX} levels`);
      const tool = await toolNamed(name, extra);
      // A tool the server does not list is never forwarded: no rule or person judged a hidden tool.
      if (!tool) return toolError(`Unknown tool: ${name.slice(0, 200)} (the MCP server ${row.name} does not list it); Taskbay did not forward the call.`);
      // The rules as they are now: an admin's change applies to the next call of every open session.
      const rules = await rulesCacheOf(ctx.orm).rulesOf(em, row.id);
      if (!rules) return toolError(`The MCP server ${row.name} is no longer registered; Taskbay did not forward the call.`);
      const verdict = decideCall(rules, callFacts(row.name, tool, name, args));
      if (verdict.outcome === 'PASS') return (await forward(request, extra)) as CallToolResult;
      if (verdict.outcome === 'REFUSE') {
        return toolError(
          `Taskbay refused this call${verdict.reason ? `: ${verdict.reason}` : ''} (call rule ${verdict.rule ?? '-'} of ${row.name}). It was not forwarded.`,
        );
      }
      return held(request, extra, { server: row.name, tool: name, arguments: args }, tool);
    });
  }

  const held = async (
    request: { params: { name: string; _meta?: Record<string, unknown> } },
    extra: Extra,
    call: { server: string; tool: string; arguments: Record<string, unknown> },
    tool: Tool | null,
  ): Promise<CallToolResult> => {
    const viewer = ctx.who();
    const progress = progressNotes(extra);
    // mcp_held_call.waiting_seen_at set by this call and not cleared yet (the claim's UPDATE clears it).
    let noted: string | null = null;
    try {
      const agentId = await mcpClientAgent(em(), viewer, ctx.tokenKey, clientNameOf(server.getClientVersion()?.name));
      let approval = await holdCall(em(), ctx.config, viewer, agentId, row, call, tool);
      // undefined: not read with the request (approvalState reads it).
      let final: DecisionRow | null | undefined;
      if (approval.status === 'PENDING') {
        const first = await approvalState(em(), ctx.approvalKeys, ctx.config.publicUrl, approval, null);
        progress(`Held for a person's approval: ${first.request_id}: ${first.approval_url}`);
        const gone = ctx.abandoned(extra.requestId);
        const signal = gone ? AbortSignal.any([extra.signal, gone]) : extra.signal;
        const id = approval.id;
        noted = id;
        await noteWaiting(em(), id, true);
        // Each read brings the final decision too, so a decided call goes on to its claim without another read.
        const read = async (e: EntityManager) => {
          const r = await requestWithDecision(e, viewer.tenantId, agentId, id);
          final = r?.final;
          return r?.approval ?? null;
        };
        approval = await waitForDecision(ctx.orm, ctx.pubsub, approval, read, {
          until: approval.expiresAt?.getTime() ?? Date.now(),
          signal,
          onProgress: (waited) => {
            progress(`Still held for a person's approval: ${first.request_id} (${waited} s)`);
            void noteWaiting(em(), id, true).catch(() => {});
          },
        });
        // The client is gone: nothing is forwarded for this call; the same call asked again resumes the request.
        if (signal.aborted) return toolError(`The call was abandoned while held (${first.request_id}); nothing was forwarded.`);
      }
      if (final === undefined) {
        final = await em().findOne(Decision, { approvalId: approval.id, vote: false, outcome: { $ne: 'DELEGATE' } }, { refresh: true });
      }
      const signed = verifiedApproval(ctx.approvalKeys, approval, final);
      // Not approved: the words for the client, with the reviewer's name (read only here).
      if (!signed)
        return toolError(`${stateInWords(await approvalState(em(), ctx.approvalKeys, ctx.config.publicUrl, approval, final))} The call was not forwarded.`);
      const requestId = encodeGlobalID('Approval', approval.id);
      const approved = toolCallOf(signed.action);
      if (!approved || approved.server !== call.server || approved.tool !== call.tool) {
        return toolError(`The approved action of ${requestId} is not a call of ${call.tool} on ${call.server}; Taskbay does not forward it.`);
      }
      if (!(await claimForward(em(), approval, approved, viewer))) {
        return toolError(`The approved call of ${requestId} was forwarded already; a call is forwarded once.`);
      }
      noted = null;
      const meta = { ...(withoutProgressToken(request.params as Request['params'])?._meta ?? {}), [MCP_APPROVAL_META_KEY]: signedApprovalField(signed) };
      let result: CallToolResult;
      try {
        result = (await forward(
          { method: 'tools/call', params: { name: approved.tool, arguments: approved.arguments, _meta: meta } },
          extra,
        )) as CallToolResult;
      } catch (e) {
        await recordAnswer(em(), approval, approved, { error: e instanceof Error ? e.message : String(e) }, true, viewer);
        throw e;
      }
      await recordAnswer(em(), approval, approved, result, result.isError === true, viewer);
      return result;
    } catch (e) {
      if (e instanceof McpInputError) return toolError(`Taskbay refused this call: ${e.message}`);
      if (e instanceof McpError || e instanceof UpstreamError) throw e;
      log.error({ err: errorForLog(e) }, `[mcp] held call of ${call.tool} on ${call.server} failed`);
      return toolError('Taskbay failed while holding this call (an internal error; see the server log). It was not forwarded.');
    } finally {
      if (noted) await noteWaiting(em(), noted, false).catch(() => {});
    }
  };

  return { server, relay };
}
