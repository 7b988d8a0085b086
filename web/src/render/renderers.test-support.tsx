import { renderToStaticMarkup } from 'react-dom/server';
import { expect } from 'vitest';
import type { Part } from '../../../server/src/a2a/types.js';
import { chooseOffers } from '../../../server/src/tasks/observe.js';

// Shared by the renderer tests (renderers.test.tsx, parts.test.tsx); runs in Node under vitest only.

/** What the server offers from these parts (its own rule, both extensions advertised). */
export const serverOffers = (parts: unknown[], shift = 0) => {
  const o = chooseOffers(parts as Part[], { form: true, a2ui: true });
  const at = (i: number | null) => (i === null ? null : i + shift);
  return { ...o, formPartIndex: at(o.formPartIndex), a2uiPartIndex: at(o.a2uiPartIndex) };
};
export const chosenA2ui = (a2ui: unknown, a2uiPartIndex: number) => ({ form: null, formPartIndex: null, a2ui, a2uiPartIndex });

// Renderer tests: agent content is hostile. Everything must come out as escaped text, no
// element that loads a URL (img, a[href], iframe, script), and the exact values shown.

export const HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script><a href="https://evil.test">x</a> **md**';
export const html = (el: React.ReactElement) => renderToStaticMarkup(el);
export const noActiveMarkup = (out: string) => {
  expect(out).not.toMatch(/<(img|script|iframe|object|embed|a|link|style)\b/i);
  expect(out).not.toMatch(/<[^>]*\son[a-z]+=/i);
  expect(out).not.toContain('https://evil.test"');
};

export const DEPLOY_FORM = {
  title: 'Deploy request',
  submitLabel: 'Request deploy',
  order: ['environment', 'replicas', 'note', 'dryRun'],
  schema: {
    type: 'object',
    required: ['environment', 'replicas'],
    properties: {
      environment: { type: 'string', title: 'Environment', enum: ['staging', 'production'], enumNames: ['Staging', 'Production'] },
      replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
      note: { type: 'string', title: 'Note', maxLength: 5 },
      dryRun: { type: 'boolean', title: 'Dry run' },
    },
  },
};
