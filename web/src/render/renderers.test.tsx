import { describe, expect, it } from 'vitest';
import { editedAction, messageEdit } from './edit';
import { parseFormDefinition } from '../../../server/src/forms/form-subset.js';
import { ActionView } from './ActionView';
import { ActionDiff } from './Diff';
import { actionLines, changedPaths, collapseUnchanged, diffLines } from './diff';
import { FormView } from './FormView';
import { JsonTree } from './JsonTree';
import { coerce, readForm, rawFrom } from './form';
import { readToolCall } from './tool-call';
import { DEPLOY_FORM, HOSTILE, html, noActiveMarkup } from './renderers.test-support';

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
  it('shows an MCP tool call as the tool, the server and the arguments as a tree, all as text', () => {
    const call = {
      kind: 'send_message',
      text: 'Call the tool "get-sum" of the MCP server "everything"',
      data: { server: HOSTILE, tool: 'get-sum', arguments: { a: 2, note: HOSTILE } },
    };
    const out = html(<ActionView action={call} />);
    noActiveMarkup(out);
    expect(out).toContain('data-kind="tool_call"');
    expect(out).toContain('Tool <code>get-sum</code> on MCP server <code>&lt;img src=x');
    expect(out).toContain('aria-label="Tool arguments"');
    expect(out).toContain('a: </span><span class="j-num">2</span>');
    expect(out).toContain('aria-label="Message text">Call the tool &quot;get-sum&quot;');
  });
  it('takes only data of exactly {server, tool, arguments} for a tool call', () => {
    const msg = (data: unknown) => ({ kind: 'send_message', text: 't', data });
    expect(readToolCall(msg({ server: 's', tool: 't', arguments: {} }))).toEqual({ server: 's', tool: 't', arguments: {} });
    for (const data of [
      { server: 's', tool: 't', arguments: {}, extra: 1 },
      { server: 's', tool: 't' },
      { server: 's', tool: 't', arguments: [] },
      { server: 's', tool: 't', arguments: null },
      { server: 1, tool: 't', arguments: {} },
      { server: 's', tool: null, arguments: {} },
      null,
    ]) {
      expect(readToolCall(msg(data))).toBeNull();
      expect(html(<ActionView action={msg(data)} />)).not.toContain('tool_call');
    }
    expect(readToolCall({ kind: 'send_data', text: 't', data: { server: 's', tool: 't', arguments: {} } })).toBeNull();
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
