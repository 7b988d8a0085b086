import {
  APPROVAL_REQUEST_EXTENSION,
  APPROVAL_REQUEST_MEDIA_TYPE,
  EXECUTION_EVIDENCE_EXTENSION,
  EXECUTION_EVIDENCE_MEDIA_TYPE,
  JSON_MEDIA_TYPE,
} from '../../../packages/taskbay-verify/src/constants.js';

// Extension URIs and media types of seeds 000 and 003, in one place. Those an agent needs to ask
// for approvals and report executing them are spelled in the package agents verify with
// (@taskbay/verify, packages/taskbay-verify/src/constants.ts) and taken from there.
export { APPROVAL_REQUEST_EXTENSION, EXECUTION_EVIDENCE_EXTENSION };
export const STRUCTURED_FORM_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/structured-form/v1';
export const A2UI_EXTENSION = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
export const SKILL_ROUTING_EXTENSION = 'https://extensions.allsrc.dev/agent-taskbay/skill-routing/v1';

/** The Taskbay URIs this server understands; A2A-Extensions names those an agent advertises. */
export const TASKBAY_EXTENSIONS = [
  APPROVAL_REQUEST_EXTENSION,
  STRUCTURED_FORM_EXTENSION,
  A2UI_EXTENSION,
  SKILL_ROUTING_EXTENSION,
  EXECUTION_EVIDENCE_EXTENSION,
] as const;

export const MEDIA_TYPE = {
  approvalRequest: APPROVAL_REQUEST_MEDIA_TYPE,
  form: 'application/vnd.agent-taskbay.form+json',
  a2ui: 'application/a2ui+json',
  /** An agent reports executing an approved action (docs/VERIFYING-APPROVALS.md "Reporting execution"). */
  executionEvidence: EXECUTION_EVIDENCE_MEDIA_TYPE,
  json: JSON_MEDIA_TYPE,
  /**
   * Taskbay's own: a part it could not read (over a limit, nested too deeply), kept as data with
   * the reason and the media type it was sent as, so it is never read as anything else (a2a/wire.ts).
   */
  malformedPart: 'application/vnd.agent-taskbay.malformed-part+json',
} as const;

export const A2A_VERSION = '1.0';
