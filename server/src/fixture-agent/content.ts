import { MEDIA_TYPE } from '../a2a/extensions.js';
import type { Part } from '../a2a/types.js';

// What the fixture agent's variants send (seed 003, "Walkthrough: the fixture agent"). Exported
// so tests can compare against the exact payloads.

export const VARIANTS = [
  'showcase',
  'form',
  'approver',
  'a2ui',
  'plain',
  'invalid',
  'rogue',
  'unknown',
  'scripted',
  // Execution evidence (docs/VERIFYING-APPROVALS.md "Reporting execution"): reports what it executed; reports another digest; reports without advertising the extension.
  'reporter',
  'divergent',
  'unlisted',
  // Quorum (docs/POLICIES.md): a deploy agent whose card lists the `deploy` skill, which the shipped
  // example policy (docs/samples/deploy-policy.json) requires two approvals for.
  'deployer',
] as const;
export type Variant = (typeof VARIANTS)[number];

/** The variants the packaged `demo-agent` command lists (seed 003). */
export const DEMO_VARIANTS: readonly Variant[] = ['showcase', 'form', 'approver', 'a2ui'];

/** Seed 003 "Ask for a form": the Deploy request form. */
export const DEPLOY_REQUEST_FORM = {
  title: 'Deploy request',
  submitLabel: 'Request deploy',
  order: ['environment', 'replicas', 'note', 'dryRun'],
  schema: {
    type: 'object',
    required: ['environment', 'replicas'],
    properties: {
      environment: {
        type: 'string',
        title: 'Environment',
        enum: ['staging', 'production'],
        enumNames: ['Staging', 'Production'],
      },
      replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
      note: { type: 'string', title: 'Note', maxLength: 200 },
      dryRun: { type: 'boolean', title: 'Dry run' },
    },
  },
} as const satisfies Record<string, unknown>;

/** The start form advertised in the structured-form extension's params.startForm. */
export const NEW_DEPLOYMENT_START_FORM = {
  title: 'New deployment task',
  submitLabel: 'Start task',
  order: ['service', 'environment', 'replicas'],
  schema: {
    type: 'object',
    required: ['service', 'environment'],
    properties: {
      service: { type: 'string', title: 'Service', minLength: 1, maxLength: 100 },
      environment: {
        type: 'string',
        title: 'Environment',
        enum: ['staging', 'production'],
        enumNames: ['Staging', 'Production'],
      },
      replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
    },
  },
} as const satisfies Record<string, unknown>;

/** Seed 000 "Request": the showcase/approver approval request. */
export const APPROVAL_REQUEST = {
  title: 'Delete the staging cluster',
  summary: 'Removes all staging nodes and volumes.',
  risk: 'high',
  expiresInSeconds: 3600,
  action: { kind: 'send_message', text: 'Approved. Delete the staging cluster.' },
} as const;

/** Deployer "approve": the deploy it asks two reviewers to approve (docs/samples/deploy-policy.json). */
export const DEPLOY_APPROVAL_REQUEST = {
  title: 'Deploy checkout v2.4 to production',
  summary: 'Rolls out checkout v2.4 to all production regions.',
  risk: 'high',
  expiresInSeconds: 3600,
  action: { kind: 'send_message', text: 'Approved. Deploy checkout v2.4 to production.' },
} as const;

/** Approver "approve data": a send_data request over the Deploy request form. */
export const APPROVAL_REQUEST_SEND_DATA = {
  title: 'Deploy to staging',
  summary: 'Deploys 2 replicas to staging.',
  risk: 'medium',
  expiresInSeconds: 3600,
  action: { kind: 'send_data', form: DEPLOY_REQUEST_FORM, values: { environment: 'staging', replicas: 2 } },
} as const;

/** Rogue: valid, but names fields an agent may not set, and carries HTML in the summary. */
export const ROGUE_APPROVAL_REQUEST = {
  title: 'Rotate the production database password',
  summary: '<script>alert(1)</script><b>x</b>',
  risk: 'critical',
  expiresInSeconds: 600,
  assignee: 'mallory@example.com',
  reviewer: 'mallory@example.com',
  policy: 'auto-approve',
  status: 'APPROVED',
  taskId: 'someone-else',
  action: { kind: 'send_message', text: 'Approved. Rotate the production database password.' },
} as const;

export const UNKNOWN_MEDIA_TYPE = 'application/x-unknown+json';

/** Invalid variant: a form with a nested object property, outside the subset (seed 003). */
export const INVALID_FORM = {
  title: 'Deploy request',
  schema: {
    type: 'object',
    properties: {
      environment: { type: 'string', enum: ['staging', 'production'] },
      target: { type: 'object', properties: { region: { type: 'string' } } },
    },
  },
} as const;

export function approvalPart(data: unknown): Part {
  return { data: structuredClone(data), mediaType: MEDIA_TYPE.approvalRequest };
}

/** An A2UI v0.9 surface with hostile content (HTML text, a phishing openUrl, an external image). */
export function a2uiSurface(surfaceId = 'deploy-check'): unknown[] {
  return [
    {
      version: 'v0.9',
      createSurface: { surfaceId, catalogId: 'https://a2ui.org/specification/v0_9/standard_catalog.json' },
    },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId,
        components: [
          { id: 'root', component: 'Card', child: 'body' },
          { id: 'body', component: 'Column', children: ['title', 'html', 'divider', 'env', 'dry', 'size', 'buttons', 'image'] },
          { id: 'title', component: 'Text', text: 'Confirm the deploy', variant: 'h2' },
          { id: 'html', component: 'Text', text: '<img src=x onerror="alert(1)"><b>Not bold</b> **not markdown**' },
          { id: 'divider', component: 'Divider' },
          { id: 'env', component: 'TextField', label: 'Environment', value: { path: '/deploy/environment' } },
          { id: 'dry', component: 'CheckBox', label: 'Dry run', value: { path: '/deploy/dryRun' } },
          {
            id: 'size',
            component: 'ChoicePicker',
            label: 'Size',
            options: [
              { label: 'Small', value: 'small' },
              { label: 'Large', value: 'large' },
            ],
            value: { path: '/deploy/size' },
          },
          { id: 'buttons', component: 'Row', children: ['confirm', 'phish'] },
          {
            id: 'confirm',
            component: 'Button',
            child: 'confirm-label',
            action: {
              event: {
                name: 'confirm_deploy',
                context: {
                  environment: { path: '/deploy/environment' },
                  dryRun: { path: '/deploy/dryRun' },
                  size: { path: '/deploy/size' },
                },
              },
            },
          },
          { id: 'confirm-label', component: 'Text', text: 'Confirm' },
          {
            id: 'phish',
            component: 'Button',
            child: 'phish-label',
            action: { functionCall: { call: 'openUrl', args: { url: 'https://login.example-phish.test/verify' } } },
          },
          { id: 'phish-label', component: 'Text', text: 'Verify your account' },
          { id: 'image', component: 'Image', url: 'https://tracker.example-phish.test/pixel.png' },
        ],
      },
    },
    {
      version: 'v0.9',
      updateDataModel: { surfaceId, path: '/deploy', value: { environment: 'staging', dryRun: true, size: 'small' } },
    },
  ];
}
