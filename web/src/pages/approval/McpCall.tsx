import { useEffect } from 'react';
import { useClient } from 'urql';
import { MCP_LIMITS } from '../../../../server/src/limits.js';
import { graphql, getFragmentData, type FragmentType } from '../../gql';
import type { McpHeldCallFragment } from '../../gql/graphql';
import { when } from '../../lib/time';
import { ActionDiff } from '../../render/Diff';
import { readToolCall } from '../../render/tool-call';

// A tools/call the MCP gateway holds for this request (docs/MCP.md "A held call"): whether its
// caller is waiting now, what became of it after the decision, and how a reviewer's edit changed
// its arguments. The action itself is shown by render/ActionView.tsx.

export const McpCallFields = graphql(`
  fragment ApprovalMcpCall on Approval {
    id
    status
    revisions {
      number
      action
    }
    mcpCall {
      ...McpHeldCall
    }
  }
`);

export const McpHeldCallFields = graphql(`
  fragment McpHeldCall on McpHeldCall {
    server
    tool
    waiting
    forwardedAt
    resultDigest
    resultIsError
  }
`);

// Whether the caller waits is a heartbeat, not an audit event, so no live update carries it: the
// page asks for it again while the request is pending.
const McpCallNow = graphql(`
  query McpCallNow($id: ID!) {
    approval(id: $id) {
      id
      mcpCall {
        ...McpHeldCall
      }
    }
  }
`);

type Props = { approval: FragmentType<typeof McpCallFields>; shown: { number: number; action: unknown } };

/** The view, asking again every progress interval whether the caller still waits while the request is pending. */
export function McpCallPanel(props: Props) {
  const a = getFragmentData(McpCallFields, props.approval);
  const client = useClient();
  const watch = a.status === 'PENDING' && a.mcpCall !== null && a.mcpCall !== undefined;
  useEffect(() => {
    if (!watch) return;
    const timer = setInterval(
      () => void client.query(McpCallNow, { id: a.id }, { requestPolicy: 'network-only' }).toPromise(),
      MCP_LIMITS.progressSeconds * 1000,
    );
    return () => clearInterval(timer);
  }, [client, a.id, watch]);
  return <McpCallView {...props} />;
}

export function McpCallView(props: Props) {
  const a = getFragmentData(McpCallFields, props.approval);
  const { shown } = props;
  const call = readToolCall(shown.action);
  const held = getFragmentData(McpHeldCallFields, a.mcpCall);
  if (!held) {
    if (!call) return null;
    // Anyone can send an action of this shape; only the gateway's own held call is one.
    return (
      <p className="banner warn" data-testid="mcp-lookalike">
        This action is shaped like an MCP tool call, but Taskbay's MCP gateway holds no call for this request: approving calls no tool, it hands this action to
        whoever asked, as any other.
      </p>
    );
  }
  const asked = readToolCall(a.revisions.find((r) => r.number === 1)?.action);
  const other = !call || call.server !== held.server || call.tool !== held.tool;
  return (
    <div className="mcp-call" data-testid="mcp-call">
      {a.status === 'PENDING' ? (
        <p className={held.waiting ? 'ok' : 'warn'} role="status" data-testid="mcp-waiting">
          {held.waiting ? 'The caller is waiting' : 'The caller is no longer waiting: approving forwards nothing until it calls again'}
        </p>
      ) : (
        <p data-testid="mcp-outcome">{outcome(a.status, held)}</p>
      )}
      {other && (
        <p className="banner warn" data-testid="mcp-other-call">
          {`This revision does not call the tool ${held.tool} of ${held.server}, the call that was held: the gateway does not forward it.`}
        </p>
      )}
      {call && asked && shown.number !== 1 && (
        <ActionDiff before={asked.arguments} after={call.arguments} label="The arguments, changed from the call as asked (revision 1)" />
      )}
    </div>
  );
}

function outcome(status: string, held: McpHeldCallFragment): string {
  if (held.forwardedAt) {
    const result = held.resultDigest
      ? `its result${held.resultIsError ? ' (a tool error)' : ''} has digest ${held.resultDigest.slice(0, 16)}…`
      : 'no result was recorded';
    return `Forwarded to ${held.server} once, ${when(held.forwardedAt)}; ${result}`;
  }
  if (status === 'APPROVED')
    return held.waiting
      ? 'Approved: being forwarded to the server now'
      : 'Approved, not forwarded: the caller was no longer waiting. The same call asked again is forwarded once.';
  return `Not forwarded: ${status.toLowerCase().replace('_', ' ')}`;
}
