import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { serve } from '../main.js';
import { jwksUrl } from '../verify-approval/index.js';
import { DEMO_VARIANTS, VARIANTS, type Variant } from './content.js';
import { startFixtureAgent } from './server.js';

// `npm run demo` (seed 003 "Demo"): starts Taskbay and the fixture agent, registers
// the packaged variants, starts one showcase task that asks for approval, and prints where to
// look, so a newcomer sees a live approval within a minute.
//   --agent-port N   fixture agent port (default 4010)
//   --streaming      the fixture's cards say capabilities.streaming
//   --push           the fixture's cards say capabilities.pushNotifications

export async function runDemo(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    args,
    options: {
      'agent-port': { type: 'string', default: '4010' },
      streaming: { type: 'boolean', default: false },
      push: { type: 'boolean', default: false },
    },
  });
  const adminToken = env.TASKBAY_ADMIN_TOKEN || `tb_demo_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({ ...env, TASKBAY_ADMIN_TOKEN: adminToken });
  const agent = await startFixtureAgent({ port: Number(values['agent-port']), streaming: values.streaming, push: values.push });
  const server = await serve(config);
  const base = server.instance.url.replace('127.0.0.1', 'localhost');
  // The demo's agent checks the signature of every approval it receives (docs/VERIFYING-APPROVALS.md).
  agent.trustApprovalsFrom({ issuer: config.publicUrl, jwksUrl: jwksUrl(server.instance.url) });
  const gql = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await server.instance.yoga.fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ query, variables }),
    });
    const json = (await res.json()) as { data?: any; errors?: { message: string }[] };
    if (json.errors?.length) throw new Error(json.errors.map((e) => e.message).join('; '));
    return json.data;
  };

  const known = new Map<string, string>(((await gql('{ agents { id cardUrl } }')).agents as { id: string; cardUrl: string }[]).map((a) => [a.cardUrl, a.id]));
  const ids = new Map<string, string>();
  for (const variant of DEMO_VARIANTS) {
    const url = agent.cardUrl(variant);
    let id = known.get(url);
    if (id) id = (await gql('mutation($id: ID!) { refreshAgentCard(id: $id) { id } }', { id })).refreshAgentCard.id;
    else id = (await gql('mutation($url: String!) { registerAgent(input: { cardUrl: $url }) { id } }', { url })).registerAgent.id;
    ids.set(variant, id!);
  }
  const task = (
    await gql('mutation($agentId: ID!) { startTask(input: { agentId: $agentId, text: "approve" }) { id state } }', { agentId: ids.get('showcase') })
  ).startTask;
  const pending = (await gql('{ approvals(first: 5, status: [PENDING]) { edges { node { id title } } } }')).approvals.edges as {
    node: { id: string; title: string };
  }[];

  const lines = [
    '',
    'Taskbay demo is running.',
    `  Console:        ${base}/`,
    `  GraphQL:        ${base}/graphql`,
    `  Admin token:    ${adminToken}   (Authorization: Bearer <token>)`,
    '',
    'Registered fixture agents (packaged demo variants):',
    ...DEMO_VARIANTS.map((v) => `  ${v.padEnd(9)} ${agent.cardUrl(v)}`),
    'Other fixture variants (register them to see the fallbacks):',
    ...VARIANTS.filter((v) => !DEMO_VARIANTS.includes(v)).map((v) => `  ${v.padEnd(9)} ${agent.cardUrl(v)}`),
    '',
    `A showcase task (${task.id}) asked for approval; it is ${task.state}.`,
    ...pending.slice(0, 1).map((e) => `  Pending approval: "${e.node.title}" (${e.node.id})`),
    'Try in the showcase agent: "approve", "approve data", "form", "surface".',
    'Stop with Ctrl+C.',
    '',
  ];
  console.log(lines.join('\n'));
  return {
    url: base,
    adminToken,
    agentIds: Object.fromEntries(ids),
    taskId: task.id as string,
    pendingApprovalId: pending[0]?.node.id ?? null,
    async stop() {
      await server.stop();
      await agent.close();
    },
  };
}

/**
 * The fixture agent alone with its modes: `[PORT] --port N --host H --streaming --push
 * --skill-routing --http-json`. Prints the card URLs, `first` variants first (default: the
 * packaged demo variants).
 */
export async function runDemoAgent(args: string[], first: readonly Variant[] = DEMO_VARIANTS) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      streaming: { type: 'boolean', default: false },
      push: { type: 'boolean', default: false },
      'skill-routing': { type: 'boolean', default: false },
      'http-json': { type: 'boolean', default: false },
    },
  });
  // Seed 003's reference command takes the port positionally (`... fixture-form-agent.mjs 4010`).
  if (positionals.length > 1 || (positionals[0] !== undefined && !/^\d{1,5}$/.test(positionals[0]))) {
    throw new Error(`usage: demo-agent [PORT] [--port N] [--host H] [--streaming] [--push] [--skill-routing] [--http-json]`);
  }
  const port = Number(positionals[0] ?? values.port);
  const agent = await startFixtureAgent({
    port,
    host: values.host,
    streaming: values.streaming,
    push: values.push,
    skillRouting: values['skill-routing'],
    httpJson: values['http-json'],
  });
  console.log('Fixture agent cards:');
  for (const v of first) console.log(`  ${agent.cardUrl(v)}`);
  console.log('Also served:');
  for (const v of VARIANTS.filter((x) => !first.includes(x))) console.log(`  ${agent.cardUrl(v)}`);
  return agent;
}
