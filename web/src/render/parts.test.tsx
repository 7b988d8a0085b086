import { describe, expect, it } from 'vitest';
import { parseA2uiEnvelopes } from '../../../server/src/forms/a2ui.js';
import { A2uiSurfaces } from './A2ui';
import { deletedLater } from './a2ui';
import { MessageParts } from './Parts';
import { chosenA2ui, DEPLOY_FORM, HOSTILE, html, noActiveMarkup, serverOffers } from './renderers.test-support';

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
