// The two kinds of action a reviewer approves (seed 000, "The action"): what the digest covers
// (digest.ts) and what the approved message carries. Types only, importing nothing, so the
// console, which bundles the server's edit rules, can name them without node:crypto.

export type SendMessageAction = { kind: 'send_message'; text: string; data?: Record<string, unknown> | null };
export type SendDataAction = { kind: 'send_data'; form: Record<string, unknown>; values: Record<string, unknown> };
export type ApprovalAction = SendMessageAction | SendDataAction;
