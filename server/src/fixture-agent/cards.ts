import {
  A2A_VERSION,
  A2UI_EXTENSION,
  APPROVAL_REQUEST_EXTENSION,
  EXECUTION_EVIDENCE_EXTENSION,
  SKILL_ROUTING_EXTENSION,
  STRUCTURED_FORM_EXTENSION,
} from '../a2a/extensions.js';
import type { AgentCard, AgentExtension } from '../a2a/types.js';
import { NEW_DEPLOYMENT_START_FORM, type Variant } from './content.js';

// The fixture agent's Agent Cards: one per variant, shaped by the modes the agent runs in.

/** The modes a fixture agent runs in (FixtureAgentOptions), as its cards advertise them. */
export interface Modes {
  streaming: boolean;
  push: boolean;
  skillRouting: boolean;
  httpJson?: boolean;
}

const STRUCTURED_FORM_WITH_START: AgentExtension = {
  uri: STRUCTURED_FORM_EXTENSION,
  required: false,
  params: { startForm: NEW_DEPLOYMENT_START_FORM },
};
const STRUCTURED_FORM_PLAIN: AgentExtension = { uri: STRUCTURED_FORM_EXTENSION, required: false };
const APPROVAL: AgentExtension = { uri: APPROVAL_REQUEST_EXTENSION, required: false };
const A2UI: AgentExtension = { uri: A2UI_EXTENSION, required: false };
const EVIDENCE: AgentExtension = { uri: EXECUTION_EVIDENCE_EXTENSION, required: false };

const VARIANT_INFO: Record<Variant, { description: string; extensions: AgentExtension[] }> = {
  showcase: {
    description: 'Everything Taskbay renders: approvals ("approve", "approve data"), forms ("form"), A2UI ("surface").',
    extensions: [APPROVAL, STRUCTURED_FORM_WITH_START, A2UI],
  },
  form: { description: 'Asks for a deploy request with a structured form.', extensions: [STRUCTURED_FORM_WITH_START] },
  approver: { description: 'Asks for approval ("approve", "approve data").', extensions: [APPROVAL] },
  a2ui: { description: 'Shows an A2UI surface with hostile content.', extensions: [A2UI] },
  plain: { description: 'Sends an approval request without advertising the extension.', extensions: [] },
  invalid: { description: 'Sends invalid approval requests.', extensions: [APPROVAL, STRUCTURED_FORM_PLAIN] },
  rogue: { description: 'Sends an approval request naming reviewers, policy and status.', extensions: [APPROVAL] },
  unknown: { description: 'Sends unknown media types and an unknown action kind.', extensions: [APPROVAL] },
  scripted: { description: 'Replies with whatever the test scripts.', extensions: [APPROVAL, STRUCTURED_FORM_PLAIN, A2UI, EVIDENCE] },
  reporter: {
    description: 'Asks for approval, verifies the approved message and reports executing exactly it (execution evidence).',
    extensions: [APPROVAL, EVIDENCE],
  },
  divergent: { description: 'Asks for approval, then reports executing something other than what was approved.', extensions: [APPROVAL, EVIDENCE] },
  unlisted: { description: 'Reports execution evidence without advertising the extension.', extensions: [APPROVAL] },
  deployer: {
    description: 'Asks for approval of a production deploy ("approve"); its deploy skill needs two approvals under the example policy.',
    extensions: [APPROVAL],
  },
};

const DEPLOY_SKILL = { id: 'deploy', name: 'Deploy', description: 'Plans and runs deployments.', tags: ['deploy'] };

/** The skills a variant's card lists (skill routing accepts only these). */
export function skillsOf(variant: Variant): AgentCard['skills'] {
  if (variant === 'showcase') return [DEPLOY_SKILL, { id: 'cleanup', name: 'Cleanup', description: 'Removes unused infrastructure.', tags: ['ops'] }];
  // The deployer's only skill is the one the shipped example policy targets (`skill == "deploy"`).
  if (variant === 'deployer') return [DEPLOY_SKILL];
  return [{ id: 'chat', name: 'Chat', description: VARIANT_INFO[variant].description, tags: ['fixture'] }];
}

export function buildCard(variant: Variant, baseUrl: string, modes: Modes = { streaming: false, push: false, skillRouting: false }): AgentCard {
  const info = VARIANT_INFO[variant];
  const extensions = structuredClone(info.extensions);
  if (modes.skillRouting) extensions.push({ uri: SKILL_ROUTING_EXTENSION, required: false });
  return {
    name: `Taskbay fixture: ${variant}`,
    description: info.description,
    version: '1.0.0',
    supportedInterfaces: [
      ...(modes.httpJson ? [{ url: `${baseUrl}/${variant}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_VERSION }] : []),
      { url: `${baseUrl}/${variant}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: A2A_VERSION },
    ],
    capabilities: { streaming: modes.streaming, pushNotifications: modes.push, extensions },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: skillsOf(variant),
  };
}
