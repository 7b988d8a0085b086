import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { editedAction, messageEdit } from './edit';
import { parseFormDefinition } from '../../../server/src/forms/form-subset.js';
import { parseA2uiEnvelopes } from '../../../server/src/forms/a2ui.js';
import { A2uiSurfaces } from './A2ui';
import { deletedLater } from './a2ui';
import { ActionView } from './ActionView';
import { ActionDiff } from './Diff';
import { actionLines, changedPaths, collapseUnchanged, diffLines } from './diff';
import { FormView } from './FormView';
import { JsonTree } from './JsonTree';
import { coerce, readForm, rawFrom } from './form';
import { MessageParts } from './Parts';
import { chooseOffers } from '../../../server/src/tasks/observe.js';
import type { Part } from '../../../server/src/a2a/types.js';

/** What the server offers from these parts (its own rule, both extensions advertised). */
const serverOffers = (parts: unknown[], shift = 0) => {
  const o = chooseOffers(parts as Part[], { form: true, a2ui: true });
  const at = (i: number | null) => (i === null ? null : i + shift);
  return { ...o, formPartIndex: at(o.formPartIndex), a2uiPartIndex: at(o.a2uiPartIndex) };
};
const chosenA2ui = (a2ui: unknown, a2uiPartIndex: number) => ({ form: null, formPartIndex: null, a2ui, a2uiPartIndex });

// Renderer tests: agent content is hostile. Everything must come out as escaped text, no
// element that loads a URL (img, a[href], iframe, script), and the exact values shown.

const HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script><a href="https://evil.test">x</a> **md**';
const html = (el: React.ReactElement) => renderToStaticMarkup(el);
const noActiveMarkup = (out: string) => {
  expect(out).not.toMatch(/<(img|script|iframe|object|embed|a|link|style)\b/i);
  expect(out).not.toMatch(/<[^>]*\son[a-z]+=/i);
  expect(out).not.toContain('https://evil.test"');
};

const DEPLOY_FORM = {
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

describe('JsonTree', () => {
  it('shows keys and values as text, nested, with hostile strings escaped', () => {
    const out = html(<JsonTree value={{ a: 1, b: [true, null], html: HOSTILE, nested: { deep: { url: 'https://evil.test/x.png' } } }} />);
    noActiveMarkup(out);
    expect(out).toContain('&lt;script&gt;');
    expect(out).toContain('<span class="j-key">a: </span><span class="j-num">1</span>');
    expect(out).toContain('j-null');
    expect(out).toContain('2 items');
    expect(out).toContain('&quot;https://evil.test/x.png&quot;');
  });
  it('renders scalars and empty containers', () => {
    expect(html(<JsonTree value="x" />)).toContain('&quot;x&quot;');
    expect(html(<JsonTree value={{}} />)).toContain('{}');
  });
});

describe('diff', () => {
  it('finds added and removed lines between two actions', () => {
    const before = { kind: 'send_message', text: 'line one\nline two' };
    const after = { kind: 'send_message', text: 'line one\nline 2', data: { x: 1 } };
    const d = diffLines(actionLines(before), actionLines(after));
    expect(d.filter((l) => l.op === '-').map((l) => l.text)).toEqual(['  line two']);
    expect(d.filter((l) => l.op === '+').map((l) => l.text)).toEqual(['  line 2', 'data:', '  {', '    "x": 1', '  }']);
    expect(d.filter((l) => l.op === '=').map((l) => l.text)).toEqual(['kind: send_message', 'text:', '  line one']);
  });
  it('is stable under key order and renders as text', () => {
    expect(diffLines(actionLines({ kind: 'x', b: 1, a: 2 }), actionLines({ a: 2, kind: 'x', b: 1 })).every((l) => l.op === '=')).toBe(true);
    const out = html(<ActionDiff before={{ kind: 'send_message', text: 'a' }} after={{ kind: 'send_message', text: HOSTILE }} label="r1 → r2" />);
    noActiveMarkup(out);
    expect(out).toContain('class="d-add"');
    expect(out).toContain('class="d-del"');
  });
});

describe('diff paths and context', () => {
  it('names the changed paths', () => {
    const form = { schema: { type: 'object', properties: { a: { type: 'string' } } } };
    expect(
      changedPaths(
        { kind: 'send_data', form, values: { env: 'staging', replicas: 2 } },
        { kind: 'send_data', form, values: { env: 'staging', replicas: 4, dryRun: true } },
      ),
    ).toEqual([
      { path: 'values.dryRun', op: 'added' },
      { path: 'values.replicas', op: 'changed' },
    ]);
    expect(changedPaths({ kind: 'send_message', text: 'a', data: { n: [1, 2] } }, { kind: 'send_message', text: 'b' })).toEqual([
      { path: 'data', op: 'removed' },
      { path: 'text', op: 'changed' },
    ]);
    expect(changedPaths({ a: [1, 2] }, { a: [1, 3, 4] })).toEqual([
      { path: 'a[1]', op: 'changed' },
      { path: 'a[2]', op: 'added' },
    ]);
    expect(changedPaths({ b: 1, a: { c: 2 } }, { a: { c: 2 }, b: 1 })).toEqual([]);
  });
  it('folds long unchanged stretches, keeping two lines of context', () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const after = [...text];
    after[15] = 'line fifteen';
    const chunks = collapseUnchanged(diffLines(text, after));
    const skips = chunks.filter((c) => c.op === 'skip');
    expect(skips).toHaveLength(2);
    expect(chunks.filter((c) => c.op !== 'skip').map((c) => (c as { text: string }).text)).toEqual([
      'line 13',
      'line 14',
      'line 15',
      'line fifteen',
      'line 16',
      'line 17',
    ]);
    const out = html(
      <ActionDiff before={{ kind: 'send_message', text: text.join('\n') }} after={{ kind: 'send_message', text: after.join('\n') }} label="r1 → r2" />,
    );
    expect(out).toContain('unchanged lines</summary>');
    expect(out).toContain('Changed: <span><code>text</code></span>');
  });
});

describe('ActionView', () => {
  it('shows send_message text verbatim as text and data as a tree', () => {
    const out = html(<ActionView action={{ kind: 'send_message', text: `Delete it.\n${HOSTILE}`, data: { cluster: 'staging' } }} />);
    noActiveMarkup(out);
    expect(out).toContain('<pre class="action-text" aria-label="Message text">Delete it.\n&lt;img src=x');
    expect(out).toContain('cluster: </span><span class="j-str">&quot;staging&quot;');
  });
  it('shows send_data as the agent form with the proposed values', () => {
    const out = html(<ActionView action={{ kind: 'send_data', form: DEPLOY_FORM, values: { environment: 'production', replicas: 7 } }} />);
    expect(out).toContain('Deploy request');
    expect(out).toMatch(/<option value="production" selected="">Production<\/option>/);
    expect(out).toMatch(/id="[^"]+-replicas"[^>]*value="7"/);
    expect(out).not.toContain('Request deploy'); // read-only: no submit button
  });
  it('shows a command approval verbatim, one command per block, with its sealed payload', () => {
    const out = html(
      <ActionView
        action={{
          kind: 'run_command',
          agent_id: 'a0c0ffee',
          commands: ['git push origin main', `rm -rf build ${HOSTILE}`],
          payload: { scope: 'git', risk_level: 'high' },
        }}
      />,
    );
    noActiveMarkup(out);
    expect(out).toContain('Let coding agent a0c0ffee run these 2 commands once');
    expect(out).toContain('<pre class="action-text" aria-label="Command 1">git push origin main</pre>');
    expect(out).toContain('aria-label="Command 2">rm -rf build &lt;img src=x');
    expect(out).toContain('risk_level');
    expect(out).not.toContain('Unrecognised action kind');
  });
  it('shows an unknown action kind whole as data, under a warning', () => {
    const out = html(<ActionView action={{ kind: 'run_tool', tool: 'shell', args: { command: 'rm -rf /' } }} />);
    expect(out).toContain('Unrecognised action kind');
    expect(out).toContain('rm -rf /');
  });
});

describe('structured forms', () => {
  const form = readForm(DEPLOY_FORM)!;
  it('reads only the subset', () => {
    expect(form).not.toBeNull();
    expect(readForm({ schema: { type: 'object', properties: { a: { type: 'array' } } } })).toBeNull();
    expect(readForm({ schema: { type: 'object', properties: { __proto__x: { type: 'string' }, constructor: { type: 'string' } } } })).toBeNull();
  });
  it('coerces to declared types and validates like the server', () => {
    const ok = coerce(form, { environment: 'staging', replicas: '3', note: '', dryRun: true });
    expect(ok).toEqual({ values: { environment: 'staging', replicas: 3, dryRun: true }, errors: {} });
    const bad = coerce(form, { environment: 'moon', replicas: '2.5', note: 'too long', dryRun: false });
    expect(Object.keys(bad.errors).sort()).toEqual(['environment', 'note', 'replicas']);
    expect(coerce(form, { ...rawFrom(form, {}), environment: '' }).errors.environment).toBe('Required.');
    expect(coerce(form, { environment: 'staging', replicas: '11', dryRun: false }).errors.replicas).toBe('At most 10.');
    expect(rawFrom(form, null).replicas).toBe('2'); // default
  });
  it('counts string lengths in code points, as the server does (G1)', () => {
    const lengths = readForm({ schema: { type: 'object', properties: { note: { type: 'string', minLength: 2, maxLength: 200 } } } })!;
    const rocket = '\u{1F680}'; // one code point, two UTF-16 units
    expect(coerce(lengths, { note: rocket.repeat(150) })).toEqual({ values: { note: rocket.repeat(150) }, errors: {} });
    expect(coerce(lengths, { note: rocket.repeat(201) }).errors.note).toBe('At most 200 characters.');
    expect(coerce(lengths, { note: rocket }).errors.note).toBe('At least 2 characters.');
  });
  it('renders labels and a submit button when editable', () => {
    const out = html(<FormView form={form} onSubmit={() => {}} />);
    expect(out).toContain('Environment *');
    expect(out).toContain('>Request deploy</button>');
  });
});

describe('edit-then-approve (shared rules)', () => {
  it('applies the server limits', () => {
    expect(messageEdit({}, '', '')).toMatchObject({ ok: false, field: 'text', error: expect.stringMatching(/1 to 20000/) });
    expect(messageEdit({}, 'x'.repeat(20001), '')).toMatchObject({ ok: false, error: expect.stringMatching(/1 to 20000/) });
    expect(messageEdit({}, 'ok', '[1]')).toMatchObject({ ok: false, field: 'data', error: expect.stringMatching(/object/) });
    expect(messageEdit({}, 'ok', '{bad')).toMatchObject({ ok: false, error: expect.stringMatching(/JSON/) });
    expect(messageEdit({}, 'ok', '{"a":1}')).toEqual({ ok: true, edit: { kind: 'send_message', text: 'ok', data: { a: 1 } } });
  });
  it('an emptied Data box removes the data, in the edit and in the preview', () => {
    const original = { kind: 'send_message', text: 'Delete it.', data: { cluster: 'staging' } };
    const r = messageEdit(original, 'Delete it.', '');
    expect(r).toEqual({ ok: true, edit: { kind: 'send_message', text: 'Delete it.', data: null } });
    if (r.ok) expect(editedAction(original, r.edit)).toEqual({ kind: 'send_message', text: 'Delete it.' });
  });
});

describe('form modes', () => {
  const form = readForm(DEPLOY_FORM)!;
  it('read-only shows exactly the values: an absent field is "not set", never its default or an unticked box', () => {
    const out = html(<FormView form={form} values={{ environment: 'staging', replicas: 4 }} readOnly />);
    expect(out).toMatch(/id="[^"]+-replicas"[^>]*value="4"/);
    expect(out).not.toMatch(/value="2"/); // the default is not shown as a value
    expect(out).not.toContain('type="checkbox"');
    expect(out).toMatch(/<select id="[^"]+-dryRun"[^>]*data-unset="true"/);
    expect(out).toMatch(/<option value="" selected="">— not set —<\/option><option value="true">Yes/);
  });
  it('edit mode starts from the values exactly and offers "not set" for an absent boolean', () => {
    const out = html(<FormView form={form} values={{ environment: 'staging', replicas: 3 }} edit onSubmit={() => {}} />);
    expect(out).toMatch(/-replicas"[^>]*value="3"/);
    expect(out).toMatch(
      /<select id="[^"]+-dryRun"[^>]*><option value="" selected="">— not set —<\/option><option value="true">Yes<\/option><option value="false">No<\/option>/,
    );
  });
  it('fill mode starts from the defaults with checkboxes', () => {
    const out = html(<FormView form={form} onSubmit={() => {}} />);
    expect(out).toMatch(/-replicas"[^>]*value="2"/);
    expect(out).toContain('type="checkbox"');
  });
});

describe('readForm follows the server subset', () => {
  const variants: [string, unknown][] = [
    ['the deploy form', DEPLOY_FORM],
    ['a top-level description', { ...DEPLOY_FORM, description: 'x' }],
    ['an unknown schema key', { ...DEPLOY_FORM, schema: { ...DEPLOY_FORM.schema, additionalProperties: false } }],
    ['a pattern on a string', { schema: { type: 'object', properties: { a: { type: 'string', pattern: '.*' } } } }],
    ['minimum on a string', { schema: { type: 'object', properties: { a: { type: 'string', minimum: 1 } } } }],
    ['an enum on a number', { schema: { type: 'object', properties: { a: { type: 'number', enum: ['1'] } } } }],
    ['a reserved name', JSON.parse('{"schema":{"type":"object","properties":{"constructor":{"type":"string"}}}}')],
    ['a nested object', { schema: { type: 'object', properties: { a: { type: 'object' } } } }],
  ];
  for (const [name, f] of variants) {
    it(name, () => expect(readForm(f) !== null).toBe(parseFormDefinition(f).ok));
  }
});

describe('A2UI', () => {
  const surface = [
    { version: 'v0.9', createSurface: { surfaceId: 's', catalogId: 'c' } },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId: 's',
        components: [
          { id: 'root', component: 'Card', child: 'col' },
          { id: 'col', component: 'Column', children: ['t', 'html', 'd', 'env', 'dry', 'size', 'row', 'img', 'loop'] },
          { id: 't', component: 'Text', text: 'Confirm the deploy', variant: 'h2' },
          { id: 'html', component: 'Text', text: HOSTILE },
          { id: 'd', component: 'Divider' },
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
          { id: 'row', component: 'Row', children: ['ok', 'phish'] },
          { id: 'ok', component: 'Button', child: 'ok-l', action: { event: { name: 'confirm', context: { env: { path: '/deploy/environment' } } } } },
          { id: 'ok-l', component: 'Text', text: 'Confirm' },
          { id: 'phish', component: 'Button', child: 'phish-l', action: { functionCall: { call: 'openUrl', args: { url: 'https://evil.test/login' } } } },
          { id: 'phish-l', component: 'Text', text: 'Verify your account' },
          { id: 'img', component: 'Image', url: 'https://evil.test/pixel.png' },
          { id: 'loop', component: 'Column', children: ['loop'] },
        ],
      },
    },
    { version: 'v0.9', updateDataModel: { surfaceId: 's', path: '/deploy', value: { environment: 'staging', dryRun: true, size: 'large' } } },
  ];
  it('renders the closed set inertly, binds data, and labels everything else', () => {
    const out = html(<A2uiSurfaces envelopes={surface} />);
    noActiveMarkup(out);
    expect(out).toContain('<strong class="a2ui-heading">Confirm the deploy</strong>');
    expect(out).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(out).toContain('<hr class="a2ui-divider"/>');
    expect(out).toMatch(/<input type="text" readonly="" value="staging"\/>/i);
    expect(out).toMatch(/<input type="checkbox" readonly="" disabled="" checked=""\/>/i);
    expect(out).toMatch(/<option value="large" selected="">Large<\/option>/);
    expect(out).toContain('Not rendered: Image component');
    expect(out).not.toContain('pixel.png');
    expect(out).toContain('(action openUrl not run)');
    expect(out).not.toContain('evil.test/login');
    expect(out).toContain('[cycle at loop]');
  });
  it('honours deleteSurface as the server accepts it: the surface disappears, later envelopes start a new one', () => {
    const del = { version: 'v0.9', deleteSurface: { surfaceId: 's' } };
    expect(parseA2uiEnvelopes([...surface, del])).not.toBeNull(); // the server stores this message
    const gone = html(<A2uiSurfaces envelopes={[...surface, del]} />);
    expect(gone).not.toContain('Confirm the deploy');
    expect(gone).not.toContain('a2ui-button');
    expect(gone).toContain('The agent removed surface s.');
    // Another surface in the same message stays; a surface created again after its deletion is new.
    const other = [{ version: 'v0.9', updateComponents: { surfaceId: 'o', components: [{ id: 'root', component: 'Text', text: 'Still here' }] } }];
    const again = [{ version: 'v0.9', updateComponents: { surfaceId: 's', components: [{ id: 'root', component: 'Text', text: 'Fresh' }] } }];
    const mixed = html(<A2uiSurfaces envelopes={[...surface, ...other, del, ...again]} />);
    expect(mixed).toContain('Still here');
    expect(mixed).toContain('Fresh');
    expect(mixed).not.toContain('Confirm the deploy');
    expect(mixed).not.toContain('removed surface s');
  });
  it('a deleteSurface in a later message removes the surface an earlier message showed', () => {
    const del = [{ version: 'v0.9', deleteSurface: { surfaceId: 's' } }];
    const removed = deletedLater([surface, null, del]);
    expect(removed.map((r) => [...r])).toEqual([['s'], ['s'], []]);
    const earlier = html(
      <MessageParts parts={[{ data: surface, mediaType: 'application/a2ui+json' }]} offers={chosenA2ui(surface, 0)} a2uiRemoved={removed[0]} />,
    );
    expect(earlier).not.toContain('Confirm the deploy');
    expect(earlier).toContain('The agent removed surface s.');
    expect(
      html(<MessageParts parts={[{ data: surface, mediaType: 'application/a2ui+json' }]} offers={chosenA2ui(surface, 0)} a2uiRemoved={removed[2]} />),
    ).toContain('Confirm the deploy');
  });
  it('survives malformed envelopes', () => {
    expect(html(<A2uiSurfaces envelopes={[null, 1, { updateComponents: { surfaceId: 'x', components: 'no' } }]} />)).toContain('Empty A2UI message');
    expect(
      html(
        <A2uiSurfaces
          envelopes={[{ updateComponents: { surfaceId: 'x', components: [{ id: 'root', component: 'Text', text: { path: '/__proto__/x' } }] } }]}
        />,
      ),
    ).toContain('a2ui-text');
    expect(html(<A2uiSurfaces envelopes="nope" />)).toContain('Empty A2UI message');
  });
});

describe('message parts', () => {
  it('renders text as text, forms as forms, files without loading them', () => {
    const out = html(
      <MessageParts
        parts={[
          { text: HOSTILE },
          { data: DEPLOY_FORM, mediaType: 'application/vnd.agent-taskbay.form+json' },
          { url: 'https://evil.test/file.pdf', mediaType: 'application/pdf', filename: 'f.pdf' },
          { data: { a: 1 }, mediaType: 'application/json' },
        ]}
        offers={serverOffers([{ data: DEPLOY_FORM, mediaType: 'application/vnd.agent-taskbay.form+json' }], 1)}
      />,
    );
    noActiveMarkup(out);
    expect(out).toContain('<pre class="part-text">&lt;img');
    expect(out).toContain('Deploy request');
    expect(out).toContain('not loaded');
    expect(out).not.toContain('evil.test/file.pdf');
  });
});

// Docs/CONFORMANCE.md G2: the server's chosen form and surface are rendered once, at the part
// they were read from; every other part of the kind, valid or not, is ordinary data.
describe('two parts of one kind', () => {
  const FORM = 'application/vnd.agent-taskbay.form+json';
  const A2UI = 'application/a2ui+json';
  const invalid = { title: 'Outside the subset', schema: { type: 'object', properties: { target: { type: 'object' } } } };
  const second = { ...DEPLOY_FORM, title: 'A second valid form' };
  const count = (out: string, s: string) => out.split(s).length - 1;
  const surface = [
    { version: 'v0.9', createSurface: { surfaceId: 's', catalogId: 'basic' } },
    { version: 'v0.9', updateComponents: { surfaceId: 's', components: [{ id: 'root', component: 'Text', text: 'Confirm the deploy', variant: 'h2' }] } },
  ];

  it('an invalid form part then a valid one: the valid one is the form, at its index; the invalid one is data', () => {
    const parts = [{ text: 'Pick one.' }, { data: invalid, mediaType: FORM }, { data: DEPLOY_FORM, mediaType: FORM }, { data: second, mediaType: FORM }];
    const out = html(<MessageParts parts={parts} offers={serverOffers(parts)} onFormSubmit={() => {}} />);
    expect(count(out, '<form ')).toBe(1);
    expect(count(out, 'aria-label="Deploy request"')).toBe(1);
    // In part order: the invalid form and the second valid one as data trees, around the form.
    const invalidAt = out.indexOf('&quot;Outside the subset&quot;');
    const formAt = out.indexOf('<form ');
    const secondAt = out.indexOf('&quot;A second valid form&quot;');
    expect(invalidAt).toBeGreaterThan(-1);
    expect(invalidAt).toBeLessThan(formAt);
    expect(secondAt).toBeGreaterThan(formAt);
    expect(count(out, `Data (${FORM})`)).toBe(2);
  });

  it('two A2UI parts: the chosen surface once, the other as data', () => {
    const other = [{ version: 'v0.9', createSurface: { surfaceId: 'other', catalogId: 'basic' } }];
    const parts = [
      { data: surface, mediaType: A2UI },
      { data: other, mediaType: A2UI },
    ];
    const out = html(<MessageParts parts={parts} offers={serverOffers(parts)} />);
    expect(count(out, 'Confirm the deploy')).toBe(1);
    expect(count(out, `Data (${A2UI})`)).toBe(1);
    expect(out).toContain('&quot;other&quot;');
  });

  it('a message the server offers nothing from shows every part as data', () => {
    const parts = [
      { data: DEPLOY_FORM, mediaType: FORM },
      { data: surface, mediaType: A2UI },
    ];
    const out = html(<MessageParts parts={parts} offers={null} />);
    expect(out).not.toContain('<form ');
    expect(out).not.toContain('a2ui-heading');
    expect(count(out, 'Data (')).toBe(2);
  });
});

describe('a part the server could not read', () => {
  it('says why and what it was sent as, instead of showing an empty data tree', () => {
    const out = html(
      <MessageParts
        parts={[
          {
            data: null,
            mediaType: 'application/vnd.agent-taskbay.malformed-part+json',
            metadata: {
              taskbayMalformed: 'message.parts[1].data is nested more than 64 levels deep',
              taskbaySentAs: 'application/vnd.agent-taskbay.approval-request+json',
            },
          },
        ]}
      />,
    );
    expect(out).toContain(
      'Part not read (sent as application/vnd.agent-taskbay.approval-request+json): message.parts[1].data is nested more than 64 levels deep',
    );
  });
});

describe('console source', () => {
  it('never sets HTML from strings', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = join(import.meta.dirname, '..');
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => /\.tsx?$/.test(f) && !f.startsWith('gql') && !f.endsWith('.test.tsx'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const src = readFileSync(join(root, f), 'utf8');
      expect(src, f).not.toMatch(/dangerouslySetInnerHTML|\.innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(/);
    }
  });
});
