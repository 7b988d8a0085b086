// deploy-agent.mjs: a small A2A agent (JSON-RPC, Node 20+, no dependencies) that uses every
// Taskbay extension. It reads its card and the parts it sends from the JSON files beside it.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const load = (name) => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8'));
const card = load('./agent-card.json');
const PARTS = {
  deploy: load('./approval-request-part.json'), // ask for approval of a message
  scale: load('./approval-request-send-data.json'), // ask for approval of form values
  form: load('./form-part.json'), // ask for typed input
  rollout: load('./a2ui-part.json'), // show an A2UI surface
};
const SKILL_ROUTING = 'https://extensions.allsrc.dev/agent-taskbay/skill-routing/v1';

// SHA-256 hex of canonical JSON (keys sorted at every level): Taskbay's revisionDigest.
const canonical = (v) =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(',')}]`
    : v !== null && typeof v === 'object'
      ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
      : JSON.stringify(v);
const digest = (action) => createHash('sha256').update(canonical(action)).digest('hex');

const tasks = new Map(); // task id -> { contextId, skill }
const handledDecisions = new Set(); // a delivery retry repeats the message: act once

function reply(message, task) {
  const parts = message.parts ?? [];
  const text = parts.filter((p) => typeof p.text === 'string').map((p) => p.text).join('\n');
  const data = parts.find((p) => p.mediaType === 'application/json')?.data;
  const a2ui = parts.find((p) => p.mediaType === 'application/a2ui+json')?.data?.action;
  const approval = message.metadata?.approval;
  if (approval) {
    if (handledDecisions.has(approval.decisionId)) return ['TASK_STATE_COMPLETED', [{ text: 'Already done.' }]];
    // Rebuild the approved action from what arrived; it must hash to the approved digest.
    const action = data
      ? { kind: 'send_data', form: PARTS.scale.data.action.form, values: data }
      : { kind: 'send_message', text, data: message.metadata.decision ?? null };
    if (digest(action) !== approval.revisionDigest) return ['TASK_STATE_FAILED', [{ text: 'Not what was approved; nothing done.' }]];
    handledDecisions.add(approval.decisionId);
    return ['TASK_STATE_COMPLETED', [{ text: `Done as approved (revision ${approval.revision}, ${approval.revisionDigest}).` }]];
  }
  if (a2ui) return ['TASK_STATE_COMPLETED', [{ text: `Scheduled for ${a2ui.context.window}.` }]];
  if (data) {
    // A form reply or a start form: Taskbay validated it, and so do we.
    if (!['staging', 'production'].includes(data.environment)) return ['TASK_STATE_INPUT_REQUIRED', [{ text: 'Which environment?' }, PARTS.form]];
    return ['TASK_STATE_COMPLETED', [{ text: `Noted ${JSON.stringify(data)} for skill ${task.skill ?? 'any'}.` }]];
  }
  const ask = PARTS[text.trim().toLowerCase()];
  if (ask) return ['TASK_STATE_INPUT_REQUIRED', [{ text: `About "${text.trim()}":` }, ask]];
  return ['TASK_STATE_COMPLETED', [{ text: 'Say deploy, scale, form or rollout.' }]];
}

function sendMessage(params) {
  const { message } = params;
  const route = params.metadata?.[SKILL_ROUTING]?.skillId ?? null; // present only when Taskbay routes to one skill
  if (route !== null && !card.skills.some((s) => s.id === route)) throw { code: -32602, message: `unsupported skill ${route}` };
  let id = message.taskId;
  let task = id && tasks.get(id);
  if (id && !task) throw { code: -32001, message: `no task ${id}` };
  if (task && task.skill !== route) throw { code: -32602, message: `task ${id} belongs to skill ${task.skill ?? 'none'}` };
  if (!task) {
    id = randomUUID();
    task = { contextId: message.contextId ?? randomUUID(), skill: route };
    tasks.set(id, task);
  }
  const [state, parts] = reply(message, task);
  const status = { state, message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts, taskId: id, contextId: task.contextId } };
  return { task: { id, contextId: task.contextId, status } };
}

const server = createServer((req, res) => {
  const base = `http://127.0.0.1:${server.address().port}`;
  if (req.method === 'GET' && req.url === '/card.json') {
    const body = { ...card, supportedInterfaces: [{ ...card.supportedInterfaces[0], url: `${base}/a2a` }] };
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
  if (req.method !== 'POST' || req.url !== '/a2a') return res.writeHead(404).end();
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    let rpc;
    try {
      rpc = JSON.parse(body);
      const result = rpc.method === 'SendMessage' ? sendMessage(rpc.params) : undefined;
      if (!result) throw { code: -32601, message: `${rpc.method} is not supported` };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result }));
    } catch (e) {
      const error = typeof e?.code === 'number' ? e : { code: -32700, message: 'invalid request' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc?.id ?? null, error }));
    }
  });
});
server.listen(Number(process.env.PORT ?? 4010), '127.0.0.1', () => console.log(`card: http://127.0.0.1:${server.address().port}/card.json`));
