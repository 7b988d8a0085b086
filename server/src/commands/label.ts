// Seed 002's nonce label: what the reviewer's Approve button reads for a command approval, and
// what its SHOWN event records as seen ("Approve [P-xxxxxxxx]"). Plain TypeScript with no Node
// built-ins, so the console imports the same rule as the server and the CLI.

/** The first ten characters of a `P-…` approval id: `P-` and eight hex digits. */
export const noncePrefix = (approvalId: string): string => approvalId.slice(0, 10);

/** The label of the Approve button of a command approval. */
export const approveLabel = (approvalId: string): string => `Approve [${noncePrefix(approvalId)}]`;
