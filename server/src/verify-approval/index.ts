// The approval verifier for agent authors is the package @taskbay/verify
// (packages/taskbay-verify/src, docs/VERIFYING-APPROVALS.md); this folder is the server's way in
// to the same code, not a copy. The fixture agent verifies with it, Taskbay's signer
// (approval-signing/keys.ts) takes the token type and the JWKS path from it, and
// `agent-taskbay/verify-approval` is this file bundled (packages/agent-taskbay/build.mjs).
export * from '../../../packages/taskbay-verify/src/index.js';
