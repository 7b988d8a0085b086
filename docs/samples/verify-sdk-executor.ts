// An agent built with @a2a-js/sdk 1.x acts on an approved message only once @taskbay/verify
// accepts it. The SDK hands the executor requestContext.userMessage in its own shape (a part is
// { content: { $case, value }, mediaType }); pass it as it is. The issuer and the JWKS URL are
// your configuration, never read from the message.
import { type Message, type Part, Role, TaskState, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { type ApprovalAction, executionEvidencePart, fetchJwks, type Verdict, verifyApprovedMessage } from '@taskbay/verify';

export interface ApprovalCheckingOptions {
  /** The Taskbay you trust: its public URL, and where its JWKS is (jwksUrl(issuer) by default). */
  trusted: () => { issuer: string; jwksUrl: string };
  /** A message without an approval: ask for one (an INPUT_REQUIRED task with the approval-request part). */
  ask: (requestContext: RequestContext, eventBus: ExecutionEventBus) => Promise<void>;
  /** Carries out the approved action; answers what happened, for reviewers. */
  act: (action: ApprovalAction) => Promise<string>;
  /** For a send_data approval: the form the task asked with (the digest covers it). */
  formOf?: (taskId: string) => Record<string, unknown> | undefined;
  onVerdict?: (verdict: Verdict, requestContext: RequestContext) => void;
}

const text = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined });

export class ApprovalCheckingExecutor implements AgentExecutor {
  private readonly executed = new Set<string>();
  constructor(private readonly opts: ApprovalCheckingOptions) {}

  cancelTask = async (): Promise<void> => {};

  async execute(requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = requestContext;
    if (!userMessage.metadata?.approval) return this.opts.ask(requestContext, eventBus);

    const { issuer, jwksUrl } = this.opts.trusted();
    const jwks = await fetchJwks(jwksUrl); // cache it; fetch again when a signature names an unknown kid
    const verdict = verifyApprovedMessage(userMessage, { jwks, issuer, taskId, form: this.opts.formOf?.(taskId) });
    this.opts.onVerdict?.(verdict, requestContext);
    const publish = (state: TaskState, parts: Part[]) => {
      const message: Message = { messageId: crypto.randomUUID(), role: Role.ROLE_AGENT, taskId, contextId, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
      const status: TaskStatus = { state, message, timestamp: new Date().toISOString() };
      eventBus.publish(AgentEvent.statusUpdate({ taskId, contextId, status, metadata: undefined }));
    };
    // Refused: do not act, and keep waiting for a genuine approval.
    if (!verdict.ok) return publish(TaskState.TASK_STATE_INPUT_REQUIRED, [text(`Approval refused: ${verdict.reason}`)]);

    // Act on a decision once: Taskbay sends the same message again after a crash.
    const { decisionId } = verdict.claims;
    if (this.executed.has(decisionId)) return publish(TaskState.TASK_STATE_COMPLETED, [text(`Decision ${decisionId} was executed already.`)]);
    this.executed.add(decisionId);
    const summary = await this.opts.act(verdict.action);
    // Report what was executed (docs/VERIFYING-APPROVALS.md "Reporting execution"), as an SDK data part.
    const evidence = executionEvidencePart(verdict.claims, verdict.action, 'succeeded', summary);
    const report: Part = { content: { $case: 'data', value: evidence.data }, mediaType: evidence.mediaType, filename: '', metadata: undefined };
    publish(TaskState.TASK_STATE_COMPLETED, [text(summary), report]);
  }
}
