// A LangGraph graph whose send_email node waits for a person in Taskbay. The node interrupts with
// the call (approveToolCall) and, resumed, verifies the decision itself; the code that runs the
// graph asks Taskbay and resumes it (resumeWithTaskbay answers the Command to invoke it with).
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { approveToolCall, resumeWithTaskbay, taskbayInterrupts } from '@taskbay/agent/langgraph';

const taskbay = { url: process.env.TASKBAY_URL, token: process.env.TASKBAY_TOKEN };

const State = Annotation.Root({ call: Annotation(), result: Annotation() });

export const graph = new StateGraph(State)
  .addNode('send_email', async ({ call }) => {
    // The node runs again from the top when resumed: nothing with side effects before this line.
    const decision = await approveToolCall(call, { url: taskbay.url });
    if (!decision.approved) return { result: decision.reason };
    return { result: await sendEmail(decision.arguments) }; // the approved, possibly edited, arguments
  })
  .addEdge(START, 'send_email')
  .addEdge('send_email', END)
  .compile({ checkpointer: new MemorySaver() }); // any checkpointer: interrupts need one

export async function send(call, threadId) {
  const config = { configurable: { thread_id: threadId } };
  let output = await graph.invoke({ call }, config);
  while (taskbayInterrupts(output).length > 0) {
    output = await graph.invoke(await resumeWithTaskbay(output, taskbay), config);
  }
  return output.result;
}

async function sendEmail({ to, subject }) {
  console.log(`sent "${subject}" to ${to}`); // your mailer here
  return `sent to ${to}`;
}
