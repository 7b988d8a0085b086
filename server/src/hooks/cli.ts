import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseArgs } from 'node:util';
import { env as taskbayEnv } from '../lib/taskbay-env.js';
import { APPROVAL_LIMITS, HOOK_LIMITS } from '../limits.js';
import { blocked, eventOf, hostReply, isHookHost, type HookAnswer, type HookHost, type HostReply } from './contracts.js';

// `taskbay hook claude-code|codex`: a coding agent's command hook. A thin relay: the host's hook
// JSON on stdin is posted to Taskbay (POST /api/hooks/<host>, hooks/routes.ts, which decides and
// words the answer in the host's terms), and what Taskbay answers is printed and exited with.
// What it adds is failing closed when Taskbay cannot answer: unreachable, a 5xx or anything but
// its answer, no answer within the wait and a margin, malformed stdin, an unknown host, a bad
// option, no token, or a crash here. Each is a blocking answer in the host's terms for the event
// (contracts.ts hostReply): never another exit code, never output the host would take for a
// non-blocking error. It imports nothing of the server, so it starts fast.

const USAGE =
  "usage: taskbay hook claude-code|codex [--wait SECONDS] [--expires SECONDS]   (the host's hook JSON on stdin; TASKBAY_URL, TASKBAY_TOKEN, TASKBAY_HOOK_WAIT, TASKBAY_HOOK_EXPIRES)";

/** The longest answer read from Taskbay (a deny with seed 002's envelope is a few KiB). */
const ANSWER_MAX_BYTES = 1024 * 1024;

class Refused extends Error {}

/** The host and event as far as they are known, for an answer after a crash nothing here caught. */
const known: { host: HookHost | null; event: string | null } = { host: null, event: null };

/** stdin, at most `max` bytes (more is refused), within `ms`. */
function readInput(input: NodeJS.ReadableStream, max: number, ms: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | null) => {
      clearTimeout(timer);
      input.removeListener('data', onData).removeListener('end', onEnd).removeListener('error', onError);
      input.pause?.();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer | string) => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > max) done(new Refused(`the hook input on stdin is larger than ${max} bytes`));
      else chunks.push(b);
    };
    const onEnd = () => done(null);
    const onError = (e: Error) => done(new Refused(`stdin could not be read: ${e.message}`));
    const timer = setTimeout(() => done(new Refused(`stdin did not end within ${Math.round(ms / 1000)}s`)), ms);
    input.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** POST the input to Taskbay and read the relay answer; throws Refused with why it got none. */
function post(url: URL, token: string, body: Buffer, ms: number): Promise<HostReply> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const fail = (why: string) => reject(new Refused(why));
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          authorization: `Bearer ${token}`,
          'taskbay-hook-relay': '1',
        },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > ANSWER_MAX_BYTES) req.destroy(new Error(`its answer is larger than ${ANSWER_MAX_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('error', (e) => fail(`Taskbay at ${url.origin} broke off its answer: ${e.message}`));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return fail(`Taskbay at ${url.origin} answered HTTP ${res.statusCode}${text ? `: ${text.slice(0, 200)}` : ''}`);
          let a: unknown;
          try {
            a = JSON.parse(text);
          } catch {
            return fail(`Taskbay at ${url.origin} answered something that is not its hook answer`);
          }
          const r = a as { exit_code?: unknown; stdout?: unknown; stderr?: unknown };
          if ((r?.exit_code !== 0 && r?.exit_code !== 2) || typeof r.stdout !== 'string' || typeof r.stderr !== 'string') {
            return fail(`Taskbay at ${url.origin} answered something that is not its hook answer`);
          }
          resolve({ exitCode: r.exit_code, stdout: r.stdout, stderr: r.stderr });
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${Math.round(ms / 1000)}s`)), ms);
    req.on('error', (e) => {
      clearTimeout(timer);
      fail(`cannot reach Taskbay at ${url.origin}: ${e.message}`);
    });
    req.end(body);
  });
}

/** The whole hook: never throws, always a reply the host reads as intended. */
export async function hook(args: string[], stdin: NodeJS.ReadableStream = process.stdin, env: NodeJS.ProcessEnv = process.env): Promise<HostReply> {
  let host: HookHost | null = null;
  let event: string | null = null;
  const no = (a: HookAnswer) => hostReply(host, event, a);
  try {
    const [hostArg, ...rest] = args;
    let opts: { wait?: string; expires?: string };
    let usage: string | null = null;
    try {
      opts = parseArgs({ args: rest, options: { wait: { type: 'string' }, expires: { type: 'string' } } }).values;
    } catch (e) {
      opts = {};
      usage = `${(e as Error).message}; ${USAGE}`;
    }
    // An option, else the environment (TASKBAY_HOOK_WAIT, TASKBAY_HOOK_EXPIRES), else the default.
    const wait = Number(opts.wait ?? (env.TASKBAY_HOOK_WAIT || HOOK_LIMITS.defaultWaitSeconds));
    const expires = Number(opts.expires ?? (env.TASKBAY_HOOK_EXPIRES || HOOK_LIMITS.defaultExpiresSeconds));
    // The input first: its hook_event_name says which form a refusal takes.
    const input = await readInput(stdin, HOOK_LIMITS.bodyMaxBytes, (Number.isFinite(wait) ? wait : HOOK_LIMITS.defaultWaitSeconds) * 1000);
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.toString('utf8'));
    } catch {
      return no(blocked('the hook input on stdin is not JSON'));
    }
    event = known.event = eventOf(parsed);
    if (isHookHost(hostArg)) host = known.host = hostArg;
    else return no(blocked(`taskbay hook answers claude-code and codex, not ${JSON.stringify(String(hostArg ?? '').slice(0, 50))}; ${USAGE}`));
    if (usage) return no(blocked(usage));
    if (!Number.isInteger(wait) || wait < HOOK_LIMITS.waitMinSeconds || wait > HOOK_LIMITS.waitMaxSeconds) {
      return no(blocked(`--wait (TASKBAY_HOOK_WAIT) must be a whole number of seconds ${HOOK_LIMITS.waitMinSeconds}..${HOOK_LIMITS.waitMaxSeconds}`));
    }
    const { expiresMinSeconds: minExpiry, expiresMaxSeconds: maxExpiry } = APPROVAL_LIMITS;
    if (!Number.isInteger(expires) || expires < minExpiry || expires > maxExpiry)
      return no(blocked(`--expires (TASKBAY_HOOK_EXPIRES) must be a whole number of seconds ${minExpiry}..${maxExpiry}`));
    const { url: base, token } = taskbayEnv(env);
    if (!token) return no(blocked('TASKBAY_TOKEN is not set (an API token of the person the hook acts for)'));
    let url: URL;
    try {
      url = new URL(`${base}/api/hooks/${host}?wait=${wait}&expires=${expires}`);
    } catch {
      return no(blocked(`TASKBAY_URL is not a URL: ${JSON.stringify(base.slice(0, 200))}`));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return no(blocked(`TASKBAY_URL must be http or https, not ${url.protocol}`));
    return await post(url, token, input, (wait + HOOK_LIMITS.relayMarginSeconds) * 1000);
  } catch (e) {
    return no(blocked(e instanceof Refused ? e.message : `taskbay hook failed: ${e instanceof Error ? e.message : String(e)}`));
  }
}

/** Writes the reply and exits with its code once both streams are flushed. */
function emit(reply: HostReply): Promise<never> {
  const write = (stream: NodeJS.WriteStream, text: string) => new Promise<void>((resolve) => (text ? stream.write(text, () => resolve()) : resolve()));
  return Promise.all([write(process.stdout, reply.stdout), write(process.stderr, reply.stderr)]).then(() => process.exit(reply.exitCode));
}

/** Entry from cli.ts: even an error nothing here expected ends as a blocking answer. */
export async function runHookCli(args: string[]): Promise<never> {
  const lastResort = (e: unknown) => {
    const reply = hostReply(known.host, known.event, blocked(`taskbay hook crashed: ${e instanceof Error ? e.message : String(e)}`));
    process.stdout.write(reply.stdout);
    process.stderr.write(reply.stderr);
    process.exit(reply.exitCode);
  };
  process.on('uncaughtException', lastResort);
  process.on('unhandledRejection', lastResort);
  return emit(await hook(args));
}
