import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { makeFragmentData } from '../../gql';
import { ExecutionEvidenceFields, ExecutionEvidenceView } from './ExecutionEvidence';

// The delivery ledger tells the agent's report apart from the observed task state
// (docs/VERIFYING-APPROVALS.md "Reporting execution"); a report with another digest is a loud warning.

const APPROVED = 'ab'.repeat(32);
const report = (over: Record<string, unknown> = {}) => ({
  id: 'e1',
  outcome: 'SUCCEEDED',
  detail: '<b>done</b>',
  reportedDigest: APPROVED,
  approvedDigest: APPROVED,
  digestMatches: true,
  messageId: 'm1',
  reportedAt: '2026-12-01T10:00:00.000Z',
  ...over,
});

function render(evidence: ReturnType<typeof report>[], observedTaskState: string | null = 'COMPLETED') {
  const execution = makeFragmentData(
    {
      observedTaskState: observedTaskState as never,
      observedAt: '2026-12-01T10:00:00.000Z',
      digestMismatch: evidence.some((e) => !e.digestMatches),
      evidence: evidence as never,
    },
    ExecutionEvidenceFields,
  );
  return renderToStaticMarkup(<ExecutionEvidenceView execution={execution} />);
}

describe('the execution part of the delivery ledger', () => {
  it('a matching report: "Executed as approved, reported by the agent", apart from the observed state; the detail as text', () => {
    const html = render([report()]);
    expect(html).toContain('Executed as approved, reported by the agent.');
    expect(html).toContain('Task completed afterwards (observed):');
    expect(html).toContain('&lt;b&gt;done&lt;/b&gt;');
    expect(html).not.toContain('role="alert"');
  });

  it('no report: only the observation, never "executed as approved"', () => {
    const html = render([]);
    expect(html).toContain('The agent reported no execution.');
    expect(html).toContain('Task completed afterwards (observed):');
    expect(html).not.toContain('Executed as approved');
  });

  it('a report with another digest is a loud warning naming both digests', () => {
    const other = 'cd'.repeat(32);
    const html = render([report({ reportedDigest: other, digestMatches: false })]);
    expect(html).toMatch(/<p class="error refusal" role="alert" data-testid="evidence-mismatch">Warning: /);
    expect(html).toContain(other);
    expect(html).toContain(APPROVED);
    expect(html).not.toContain('Executed as approved');
  });

  it('a failed execution, reported, and another observed state', () => {
    const html = render([report({ outcome: 'FAILED' })], 'FAILED');
    expect(html).toContain('Execution failed, reported by the agent.');
    expect(html).toContain('Task state afterwards (observed):');
  });
});
