import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { makeFragmentData } from '../../gql';
import { McpCallFields, McpCallView, McpHeldCallFields } from './McpCall';

// A held MCP gateway call on the approval page: whether the caller is waiting, what became of the
// call after the decision, an edit's change to the arguments; a look-alike action is said to be one.

const call = (args: Record<string, unknown>, tool = 'get-sum', server = 'everything') => ({
  kind: 'send_message',
  text: `Call the tool "${tool}" of the MCP server "${server}"`,
  data: { server, tool, arguments: args },
});
const held = (over: Record<string, unknown> = {}) => ({
  server: 'everything',
  tool: 'get-sum',
  waiting: true,
  forwardedAt: null,
  resultDigest: null,
  resultIsError: null,
  ...over,
});

function render(opts: { status?: string; mcpCall?: ReturnType<typeof held> | null; revisions?: unknown[]; shown?: { number: number; action: unknown } }) {
  const revisions = opts.revisions ?? [call({ a: 2, b: 3 })];
  const approval = makeFragmentData(
    {
      id: 'A1',
      status: (opts.status ?? 'PENDING') as never,
      revisions: revisions.map((action, i) => ({ number: i + 1, action })),
      mcpCall: opts.mcpCall === null ? null : makeFragmentData(opts.mcpCall ?? held(), McpHeldCallFields),
    },
    McpCallFields,
  );
  const shown = opts.shown ?? { number: revisions.length, action: revisions[revisions.length - 1] };
  return renderToStaticMarkup(<McpCallView approval={approval} shown={shown} />);
}

describe('a held MCP call on the approval page', () => {
  it('pending: the caller is waiting, or no longer waiting and approving forwards nothing until it calls again', () => {
    expect(render({})).toContain('>The caller is waiting</p>');
    expect(render({ mcpCall: held({ waiting: false }) })).toContain('The caller is no longer waiting: approving forwards nothing until it calls again');
  });

  it('decided: forwarded once with the result digest prefix, or not forwarded', () => {
    const digest = 'ab'.repeat(32);
    const out = render({
      status: 'APPROVED',
      mcpCall: held({ waiting: false, forwardedAt: '2026-12-01T10:00:00.000Z', resultDigest: digest, resultIsError: false }),
    });
    expect(out).toContain(`Forwarded to everything once`);
    expect(out).toContain(`has digest ${digest.slice(0, 16)}…`);
    expect(out).not.toContain(digest);
    expect(out).not.toContain('The caller is');
    expect(render({ status: 'REJECTED', mcpCall: held({ waiting: false }) })).toContain('Not forwarded: rejected');
    expect(render({ status: 'APPROVED', mcpCall: held({ waiting: false }) })).toContain('Approved, not forwarded: the caller was no longer waiting.');
  });

  it("an edited call's arguments as the diff from the call as asked", () => {
    const out = render({ status: 'APPROVED', revisions: [call({ a: 2, b: 3 }), call({ a: 2, b: 30 })] });
    expect(out).toContain('The arguments, changed from the call as asked (revision 1)');
    expect(out).toMatch(/data-testid="changed-paths">Changed: (<!-- -->)?<span><code>b<\/code><\/span><\/p>/);
    expect(render({})).not.toContain('changed from the call as asked');
  });

  it('a revision naming another tool than the held call is said not to be forwarded', () => {
    const out = render({ revisions: [call({ a: 2 }), call({ a: 2 }, 'get-env')] });
    expect(out).toContain('does not call the tool get-sum of everything');
    expect(render({})).not.toContain('mcp-other-call');
  });

  it('no held call: nothing, or a warning when the action only looks like a tool call', () => {
    expect(render({ mcpCall: null, revisions: [{ kind: 'send_message', text: 'hi' }] })).toBe('');
    expect(render({ mcpCall: null })).toContain('holds no call for this request');
  });
});
