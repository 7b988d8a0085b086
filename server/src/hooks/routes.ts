import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Access } from '../access.js';
import { viewerForToken } from '../auth/module.js';
import { unstorableReason } from '../db/storable.js';
import { bearerToken, readJsonBody } from '../http/json.js';
import type { Route, RouteContext } from '../http/route.js';
import { APPROVAL_LIMITS, HOOK_LIMITS } from '../limits.js';
import { errorForLog, log } from '../log.js';
import { blocked, eventOf, hostReply, isHookHost, parseHookInput, type HookAnswer, type HookHost } from './contracts.js';
import { answerHook } from './service.js';

// The hosts' hook contracts over HTTP (docs/COMMAND-APPROVALS.md): POST /api/hooks/claude-code and
// /api/hooks/codex take the host's hook JSON as the body (Bearer API token, as the command-approval
// REST) and answer the host's JSON, so Claude Code's HTTP hook (`"type": "http"`) works against
// Taskbay directly, and `taskbay hook <host>` is a relay of stdin to here.
//
// Every answer is 200: an HTTP hook's non-2xx status is a non-blocking error ("execution
// continues"), so a refusal (no token, a body too large or not the host's JSON, an unknown host,
// a failure inside Taskbay) is a deny in the body. The body is the host's JSON (empty: no decision).
// With the header `taskbay-hook-relay: 1` (the relay) it is instead {exit_code, stdout, stderr},
// what the command hook prints and exits with.
//
// Query: `wait` (seconds a held command waits for a decision, default HOOK_LIMITS.defaultWaitSeconds:
// keep it below the host's hook timeout) and `expires` (seconds the request stays open for a
// re-run to resume, default HOOK_LIMITS.defaultExpiresSeconds).

export const RELAY_HEADER = 'taskbay-hook-relay';

function seconds(params: URLSearchParams, name: string, fallback: number, min: number, max: number): number | Error {
  const raw = params.get(name);
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  return /^\d+$/.test(raw) && n >= min && n <= max ? n : new Error(`${name} must be a whole number of seconds ${min}..${max}`);
}

async function handle(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, hostParam: string) {
  const relay = req.headers[RELAY_HEADER] === '1';
  let host: HookHost | null = null;
  let event: string | null = null;
  const answer = (a: HookAnswer, headers: Record<string, string> = {}) => {
    if (res.headersSent || res.destroyed) return;
    const reply = hostReply(host, event, a);
    const common = { 'cache-control': 'no-store', ...headers };
    if (relay) {
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...common })
        .end(JSON.stringify({ exit_code: reply.exitCode, stdout: reply.stdout, stderr: reply.stderr }));
    } else if (reply.stdout) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...common }).end(reply.stdout);
    } else {
      // Claude Code: "2xx with an empty body: success, equivalent to exit code 0 with no output".
      res.writeHead(200, common).end();
    }
  };
  try {
    if (isHookHost(hostParam)) host = hostParam;
    const params = new URL(req.url ?? '/', 'http://taskbay.invalid').searchParams;
    const wait = seconds(params, 'wait', HOOK_LIMITS.defaultWaitSeconds, HOOK_LIMITS.waitMinSeconds, HOOK_LIMITS.waitMaxSeconds);
    const expires = seconds(params, 'expires', HOOK_LIMITS.defaultExpiresSeconds, APPROVAL_LIMITS.expiresMinSeconds, APPROVAL_LIMITS.expiresMaxSeconds);
    const body = await readJsonBody(req, HOOK_LIMITS.bodyMaxBytes);
    if (!body.ok) return answer(blocked(`the hook input was refused (${body.error})`), body.tooLarge ? { connection: 'close' } : {});
    event = eventOf(body.value);
    if (!host) return answer(blocked(`Taskbay answers the hooks of claude-code and codex, not ${JSON.stringify(hostParam.slice(0, 50))}`));
    if (wait instanceof Error) return answer(blocked(wait.message));
    if (expires instanceof Error) return answer(blocked(expires.message));
    const em = ctx.orm.em.fork() as unknown as EntityManager;
    const token = bearerToken(req);
    const viewer = token ? await viewerForToken(em, token) : null;
    if (!viewer) return answer(blocked('Taskbay refused the API token (send Authorization: Bearer <api token>, TASKBAY_TOKEN)'));
    const unstorable = unstorableReason(body.value);
    if (unstorable) return answer(blocked(`the hook input cannot be stored: ${unstorable}`));
    const parsed = parseHookInput(body.value);
    if (!parsed.ok) return answer(blocked(parsed.error));
    const closed = new AbortController();
    res.once('close', () => closed.abort());
    const a = await answerHook({ em, orm: ctx.orm, access: new Access(em, viewer), config: ctx.deps.config, pubsub: ctx.pubsub }, host, parsed.input, {
      waitSeconds: wait,
      expiresSeconds: expires,
      signal: closed.signal,
    });
    answer(a);
  } catch (e) {
    log.error({ err: errorForLog(e) }, `[hooks] ${hostParam} failed`);
    answer(blocked('Taskbay failed while deciding (an internal error; see the server log)'));
  }
}

export const hookRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/api\/hooks\/([^/]+)$/,
    handler: (req, res, ctx, [host]) => handle(req, res, ctx, host ?? ''),
  },
];
