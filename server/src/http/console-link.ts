import { encodeGlobalID } from '@pothos/plugin-relay';

/** The console's page of an approval: what a chat message, a ticket or an MCP client links to. */
export function consoleLink(publicUrl: string, approvalId: string): string {
  return `${publicUrl}/approvals/${encodeURIComponent(encodeGlobalID('Approval', approvalId))}`;
}
