import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyActionEdit, parseApprovalAction } from '../../src/approvals/request-part.js';
import type { ApprovalAction } from '../../src/approvals/digest.js';
import {
  coerceFieldInput,
  dataBoxText,
  fieldValueProblem,
  mergeActionEdit,
  messageEditFromInputs,
  parseNumberText,
  valuesFromInputs,
  type FieldRule,
} from '../../src/edit-rules.js';
import { DEPLOY_REQUEST_FORM } from '../../src/fixture-agent/content.js';
import { coerceFormReply, parseFormDefinition, validateFormValues, type FormDefinition } from '../../src/forms/form-subset.js';

// The one module of edit and form-value rules the server and the console share (issue 9, item 3):
// an edit changes only what the reviewer changed. Clearing Data removes the data; an optional
// field the reviewer never touched stays absent; lengths count code points; numbers parse alike.

const form = (() => {
  const r = parseFormDefinition(structuredClone(DEPLOY_REQUEST_FORM));
  if (!r.ok) throw new Error(r.error);
  return r.form;
})();

const message: ApprovalAction = { kind: 'send_message', text: 'Approved. Delete the cluster.', data: { ticket: 7, keep: ['backups'] } };
const deploy: ApprovalAction = { kind: 'send_data', form: form as unknown as Record<string, unknown>, values: { environment: 'staging', replicas: 2 } };

/** What the console sends for these boxes, through the server's edit. */
function serverEditOfBoxes(original: ApprovalAction & { kind: 'send_message' }, text: string, dataText: string) {
  const edit = messageEditFromInputs(original, text, dataText);
  if (!edit.ok) throw new Error(edit.error);
  return applyActionEdit(original, edit.edit);
}

describe('send_message edit from the Text and Data boxes', () => {
  it('clearing the Data box removes the data on the server', () => {
    const r = serverEditOfBoxes(message as ApprovalAction & { kind: 'send_message' }, 'Approved.', '');
    expect(r).toEqual({ ok: true, action: { kind: 'send_message', text: 'Approved.' } });
    // Whitespace only counts as cleared too.
    expect(serverEditOfBoxes(message as ApprovalAction & { kind: 'send_message' }, 'Approved.', '  \n')).toEqual({
      ok: true,
      action: { kind: 'send_message', text: 'Approved.' },
    });
  });
  it('a Data box left as shown keeps the original data exactly', () => {
    const shown = dataBoxText(message.kind === 'send_message' ? message.data : null);
    expect(serverEditOfBoxes(message as ApprovalAction & { kind: 'send_message' }, 'Approved, carefully.', shown)).toEqual({
      ok: true,
      action: { kind: 'send_message', text: 'Approved, carefully.', data: { ticket: 7, keep: ['backups'] } },
    });
  });
  it('a changed Data box replaces the data', () => {
    expect(serverEditOfBoxes(message as ApprovalAction & { kind: 'send_message' }, 'ok', '{"ticket": 8}')).toEqual({
      ok: true,
      action: { kind: 'send_message', text: 'ok', data: { ticket: 8 } },
    });
  });
  it('refuses what the server refuses, with the field named', () => {
    expect(messageEditFromInputs({}, '', '')).toMatchObject({ ok: false, field: 'text' });
    expect(messageEditFromInputs({}, 'ok', '[1]')).toMatchObject({ ok: false, field: 'data', error: expect.stringMatching(/object/) });
    expect(messageEditFromInputs({}, 'ok', '{bad')).toMatchObject({ ok: false, field: 'data', error: expect.stringMatching(/JSON/) });
    expect(messageEditFromInputs({}, 'ok', JSON.stringify({ a: 'x'.repeat(64 * 1024) }))).toMatchObject({ ok: false, field: 'data' });
  });
  it('counts text length in code points, like the server', () => {
    const emoji = '😀'.repeat(20_000); // 40 000 UTF-16 units, 20 000 code points
    expect(messageEditFromInputs({}, emoji, '').ok).toBe(true);
    expect(parseApprovalAction({ kind: 'send_message', text: emoji }).ok).toBe(true);
    expect(messageEditFromInputs({}, `${emoji}x`, '').ok).toBe(false);
    expect(parseApprovalAction({ kind: 'send_message', text: `${emoji}x` }).ok).toBe(false);
  });
  it('an edit without data keeps the data (API), data null removes it', () => {
    expect(mergeActionEdit(message as never, { text: 'x' })).toEqual({
      ok: true,
      candidate: { kind: 'send_message', text: 'x', data: message.kind === 'send_message' ? message.data : null },
    });
    expect(mergeActionEdit(message as never, { text: 'x', data: null })).toEqual({ ok: true, candidate: { kind: 'send_message', text: 'x' } });
  });
});

describe('send_data edit from form inputs', () => {
  // What an editor could show for fields the agent left out: an empty note, an unticked box.
  const inputs = { environment: 'staging', replicas: '4', note: '', dryRun: false };
  it('an optional field the reviewer never touched stays absent', () => {
    const r = valuesFromInputs(form, inputs, { original: { environment: 'staging', replicas: 2 }, touched: new Set(['replicas']) });
    expect(r).toEqual({ values: { environment: 'staging', replicas: 4 }, errors: {} });
    expect(Object.hasOwn(r.values, 'dryRun')).toBe(false);
    expect(applyActionEdit(deploy, { kind: 'send_data', values: r.values })).toEqual({
      ok: true,
      action: { kind: 'send_data', form, values: { environment: 'staging', replicas: 4 } },
    });
  });
  it('an untouched field keeps its original value even when the input shows something else', () => {
    const r = valuesFromInputs(
      form,
      { environment: 'production', replicas: '9', dryRun: 'false' },
      {
        original: { environment: 'staging', replicas: 2, dryRun: true },
        touched: new Set(),
      },
    );
    expect(r.values).toEqual({ environment: 'staging', replicas: 2, dryRun: true });
  });
  it('a touched field emptied is removed; a touched boolean set is sent', () => {
    const r = valuesFromInputs(
      form,
      { environment: 'staging', replicas: '2', note: '', dryRun: 'false' },
      {
        original: { environment: 'staging', replicas: 2, note: 'hi' },
        touched: new Set(['note', 'dryRun']),
      },
    );
    expect(r.values).toEqual({ environment: 'staging', replicas: 2, dryRun: false });
  });
  it('a required field emptied is an error, never silently dropped', () => {
    expect(valuesFromInputs(form, { replicas: '' }, { original: { environment: 'staging', replicas: 2 }, touched: new Set(['replicas']) }).errors).toEqual({
      replicas: 'Required.',
    });
  });
  it('without an original (a fresh answer) every field is read from its input', () => {
    expect(valuesFromInputs(form, { environment: 'production', replicas: '3', note: '', dryRun: false })).toEqual({
      values: { environment: 'production', replicas: 3, dryRun: false },
      errors: {},
    });
  });
  it('only declared keys come out', () => {
    const r = valuesFromInputs(form, JSON.parse('{"environment":"staging","replicas":"2","extra":"x","__proto__":{"admin":true}}'));
    expect(Object.keys(r.values).sort()).toEqual(['environment', 'replicas']);
  });
});

describe('numbers and lengths', () => {
  it('parses decimal text only', () => {
    for (const [text, n] of [
      ['3', 3],
      ['+3', 3],
      ['-2.5', -2.5],
      ['1e3', 1000],
      ['.5', 0.5],
      ['4.', 4],
    ] as const)
      expect(parseNumberText(text)).toBe(n);
    for (const text of [' 3', '3 ', '0x10', 'Infinity', '', '1_000', '1e999', 'NaN', '١']) expect(parseNumberText(text)).toBeNull();
  });
  it('the console and the server coerce a typed number the same way', () => {
    const int: FieldRule = { type: 'integer', minimum: 1, maximum: 10 };
    expect(coerceFieldInput(int, '3')).toEqual({ keep: true, value: 3 });
    expect(coerceFieldInput(int, ' 3')).toEqual({ keep: true, value: ' 3' }); // kept as text: fails validation
    expect(fieldValueProblem(int, ' 3')).toBe('A whole number.');
    expect(fieldValueProblem(int, 2.5)).toBe('A whole number.');
    expect(coerceFormReply(form, { environment: 'staging', replicas: ' 3' }).ok).toBe(false);
  });
  it('string lengths count code points on both sides', () => {
    const f = parseFormDefinition({ schema: { type: 'object', properties: { s: { type: 'string', minLength: 2, maxLength: 3 } } } });
    if (!f.ok) throw new Error(f.error);
    const rule = f.form.schema.properties.s as FieldRule;
    expect(fieldValueProblem(rule, '😀😀😀')).toBeNull();
    expect(validateFormValues(f.form, { s: '😀😀😀' }).ok).toBe(true);
    expect(fieldValueProblem(rule, '😀😀😀😀')).toMatch(/At most 3/);
    expect(validateFormValues(f.form, { s: '😀😀😀😀' }).ok).toBe(false);
    expect(fieldValueProblem(rule, '😀')).toMatch(/At least 2/);
    expect(validateFormValues(f.form, { s: '😀' }).ok).toBe(false);
  });
});

describe('the console check and the server check agree (property)', () => {
  const consoleAccepts = (f: FormDefinition, values: Record<string, unknown>) => {
    const props = f.schema.properties;
    if (Object.keys(values).some((k) => !Object.hasOwn(props, k))) return false;
    if ((f.schema.required ?? []).some((k) => !Object.hasOwn(values, k))) return false;
    return Object.keys(values).every((k) => fieldValueProblem(props[k] as FieldRule, values[k]) === null);
  };
  const anyValue = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 6 }),
    fc.constantFrom('staging', 'production', 'Staging', '3', ''),
    fc.integer({ min: -3, max: 14 }),
    fc.integer({ min: -48, max: 48 }).map((q) => q / 4), // quarters: 2.25, 2.5, 10.75, ...
    fc.constantFrom(-1.75, -1.5, -1.25, 0, 0.5, 1, 2, 2.25, 2.5, 2.75, 10, 10.25, 10.5, 11), // around the bounds
    fc.boolean(),
    fc.constant(null),
  );
  const noteForm = (() => {
    const r = parseFormDefinition({
      schema: {
        type: 'object',
        required: ['n'],
        properties: { n: { type: 'number', minimum: -1.5, maximum: 2.25 }, s: { type: 'string', minLength: 1, maxLength: 3 }, b: { type: 'boolean' } },
      },
    });
    if (!r.ok) throw new Error(r.error);
    return r.form;
  })();
  // Valid values with some keys replaced, added or removed, so each field's rule decides.
  for (const [name, f, valid] of [
    ['deploy form', form, { environment: 'staging', replicas: 2 }],
    ['number/string/boolean form', noteForm, { n: 0 }],
  ] as const) {
    it(name, () => {
      const keys = [...Object.keys(f.schema.properties), 'extra'];
      const arb = fc.tuple(fc.dictionary(fc.constantFrom(...keys), anyValue, { maxKeys: 2 }), fc.option(fc.constantFrom(...keys)));
      fc.assert(
        fc.property(arb, ([changes, removed]) => {
          const values: Record<string, unknown> = { ...valid, ...changes };
          if (removed) delete values[removed];
          expect(consoleAccepts(f, values)).toBe(validateFormValues(f, values).ok);
        }),
        { numRuns: 1000 },
      );
    });
  }
});
