import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Viewer } from '../access.js';
import type { ApprovalRow } from '../approvals/entities.js';
import type { ApprovalKeys } from '../approval-signing/module.js';
import type { Config } from '../config.js';
import { DomainError } from '../errors.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { isPlainObject, own } from '../lib/untrusted.js';
import { MCP_LIMITS } from '../limits.js';
import { errorForLog, log } from '../log.js';
import { approvalState, requestOfClient, stateInWords, type ApprovalState } from './approval-state.js';
import { clientNameOf, mcpClientAgent } from './client-agent.js';
import { McpInputError, parseRequestArguments, requestApproval } from './request-approval.js';
import { GET_APPROVAL, REQUEST_APPROVAL, TOOLS } from './tools.js';
import { progressNotes } from './progress.js';
import { waitForDecision } from './wait.js';

// One MCP session's server (the SDK's Server, low level: the tools' arguments are parsed by
// Taskbay's own rules, limits.ts, never by a second schema library). The session's person is
// checked on every HTTP request (routes.ts), which keeps `who()` current.

export const MCP_SERVER_INFO = { name: 'taskbay', title: 'Taskbay', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'Taskbay asks a person before you act. Call request_approval with the exact action before anything risky, ' +
  'then do exactly the approved action (approved: true), once, or nothing. A rejection, a request for changes or an expiry means: do not do it.';

export interface McpServerContext {
  orm: MikroORM;
  pubsub: TaskbayPubSub;
  config: Config;
  approvalKeys: ApprovalKeys;
  /** The session's person, as the latest request's token says. */
  who(): Viewer;
  tokenKey: string;
}

const answer = (state: ApprovalState): CallToolResult => ({
  content: [{ type: 'text', text: `${stateInWords(state)}\n\n${JSON.stringify(state)}` }],
  structuredContent: state as unknown as Record<string, unknown>,
});

const refused = (why: string): CallToolResult => ({ content: [{ type: 'text', text: `Taskbay refused: ${why}` }], isError: true });

function waitOf(args: Record<string, unknown>, fallback: number): number {
  const raw = own(args, 'wait_seconds');
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0 || raw > MCP_LIMITS.waitMaxSeconds) {
    throw new McpInputError(`wait_seconds must be a whole number 0..${MCP_LIMITS.waitMaxSeconds}`);
  }
  return raw;
}

export function taskbayMcpServer(ctx: McpServerContext): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const em = () => ctx.orm.em.fork() as unknown as EntityManager;
  const agentOfClient = () => mcpClientAgent(em(), ctx.who(), ctx.tokenKey, clientNameOf(server.getClientVersion()?.name));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS] }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    if (name !== REQUEST_APPROVAL.name && name !== GET_APPROVAL.name) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Taskbay has no tool ${JSON.stringify(name.slice(0, 100))}: it has ${TOOLS.map((t) => t.name).join(' and ')}`,
      );
    }
    const args = request.params.arguments ?? {};
    const progress = progressNotes(extra);
    try {
      if (!isPlainObject(args)) throw new McpInputError('the arguments must be an object');
      const viewer = ctx.who();
      const agentId = await agentOfClient();
      let approval: ApprovalRow;
      let wait: number;
      if (name === REQUEST_APPROVAL.name) {
        wait = waitOf(args, MCP_LIMITS.defaultWaitSeconds);
        const asked = parseRequestArguments(args);
        approval = await requestApproval(em(), ctx.config, viewer, agentId, asked);
      } else {
        wait = waitOf(args, 0);
        const id = own(args, 'request_id');
        if (typeof id !== 'string' || !id || id.length > 200) throw new McpInputError('request_id must be the request_id request_approval answered with');
        const mine = await requestOfClient(em(), viewer.tenantId, agentId, id);
        if (!mine) throw new McpInputError(`this client opened no request ${JSON.stringify(id.slice(0, 200))}`);
        approval = mine;
      }
      const state = async () => approvalState(em(), ctx.approvalKeys, ctx.config.publicUrl, approval);
      if (approval.status === 'PENDING' && wait > 0) {
        const first = await state();
        // Said at once, so a client that loses the connection still knows what to poll.
        progress(`Waiting for a person's decision on ${first.request_id}: ${first.approval_url}`);
        approval = await waitForDecision(ctx.orm, ctx.pubsub, approval, (e) => requestOfClient(e, viewer.tenantId, agentId, approval.id), {
          until: Date.now() + wait * 1000,
          signal: extra.signal,
          onProgress: (waited) => progress(`Still waiting for a person's decision on ${first.request_id} (${waited} s)`),
        });
      }
      return answer(await state());
    } catch (e) {
      if (e instanceof McpInputError) return refused(e.message);
      if (e instanceof DomainError) return refused(`${e.message} (${e.code})`);
      log.error({ err: errorForLog(e) }, `[mcp] ${name} failed`);
      return refused('an internal error; see the server log');
    }
  });
  return server;
}
