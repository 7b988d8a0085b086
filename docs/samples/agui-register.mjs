// Register an AG-UI agent by its endpoint and start a task with it (Node 20+, no dependencies).
// TASKBAY_URL: Taskbay's URL; TASKBAY_TOKEN: an admin's API token; AGUI_ENDPOINT: where the agent takes runs.
const { TASKBAY_URL, TASKBAY_TOKEN, AGUI_ENDPOINT } = process.env;

async function gql(query, variables) {
  const res = await fetch(`${TASKBAY_URL}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TASKBAY_TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(`${body.errors[0].extensions?.code}: ${body.errors[0].message}`);
  return body.data;
}

const { registerAgUiAgent: agent } = await gql(
  `mutation($url: String!, $name: String!) { registerAgUiAgent(input: { endpointUrl: $url, name: $name }) { id kind } }`,
  { url: AGUI_ENDPOINT, name: 'Mailer' },
);
const { startTask: task } = await gql(
  `mutation($agentId: ID!, $text: String) { startTask(input: { agentId: $agentId, text: $text }) { id state aguiRuns { runId status } } }`,
  { agentId: agent.id, text: 'Please send the Q3 report.' },
);
// A run that ended with the interrupt outcome leaves the task INPUT_REQUIRED, one approval per interrupt.
const { approvals } = await gql(`query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { id title status } } } }`, { taskId: task.id });
console.log(JSON.stringify({ agent, task, approvals: approvals.edges.map((e) => e.node) }));
