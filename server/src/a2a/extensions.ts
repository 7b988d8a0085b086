// Extension URIs and media types of seeds 000 and 003, in one place.
export const APPROVAL_REQUEST_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/approval-request/v1';
export const STRUCTURED_FORM_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/structured-form/v1';
export const A2UI_EXTENSION = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
export const SKILL_ROUTING_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/skill-routing/v1';
/** Issue 12 item 3: an agent reports executing an approved action (docs/VERIFYING-APPROVALS.md "Reporting execution"). */
export const EXECUTION_EVIDENCE_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/execution-evidence/v1';

/** The Taskbay URIs this server understands; A2A-Extensions names those an agent advertises. */
export const TASKBAY_EXTENSIONS = [
  APPROVAL_REQUEST_EXTENSION,
  STRUCTURED_FORM_EXTENSION,
  A2UI_EXTENSION,
  SKILL_ROUTING_EXTENSION,
  EXECUTION_EVIDENCE_EXTENSION,
] as const;

export const MEDIA_TYPE = {
  approvalRequest: 'application/vnd.agent-taskbay.approval-request+json',
  form: 'application/vnd.agent-taskbay.form+json',
  a2ui: 'application/a2ui+json',
  executionEvidence: 'application/vnd.agent-taskbay.execution-evidence+json',
  json: 'application/json',
} as const;

export const A2A_VERSION = '1.0';
