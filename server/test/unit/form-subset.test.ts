import { describe, it, expect } from 'vitest';
import {
  FORM_ERROR_KEY,
  coerceFormReply,
  orderedPropertyNames,
  parseFormDefinition,
  validateFormValues,
  type FormDefinition,
} from '../../src/forms/form-subset.js';
import { FORM_LIMITS } from '../../src/limits.js';

// Seed 003 quotes used below:
// S1 "schema must be a flat type: "object" with 1 to 30 properties. Property names match
//     ^[A-Za-z_][A-Za-z0-9_]{0,63}$ and may not be names such as __proto__ or constructor."
// S2 "Each property is a string (optional minLength, maxLength, format: "multiline"), a number,
//     an integer (optional minimum, maximum), a boolean, or a string enum of at most 50 values
//     (optional enumNames)."
// S3 "order sits next to schema, not inside it. ... Properties not listed come last."
// S4 "A nested object, an unknown type, or more than 30 properties rejects the whole form"
// S5 "one application/json data part holding only the declared keys, coerced to the declared types"

/** The fixture's form from seed 003 ("This is the form the fixture sends"). */
function deployForm(): Record<string, unknown> {
  return {
    title: 'Deploy request',
    submitLabel: 'Request deploy',
    order: ['environment', 'replicas', 'note', 'dryRun'],
    schema: {
      type: 'object',
      required: ['environment', 'replicas'],
      properties: {
        environment: { type: 'string', title: 'Environment', enum: ['staging', 'production'], enumNames: ['Staging', 'Production'] },
        replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
        note: { type: 'string', title: 'Note', maxLength: 200 },
        dryRun: { type: 'boolean', title: 'Dry run' },
      },
    },
  };
}

function formWith(properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schema: { type: 'object', properties, ...extra } };
}

function nProps(n: number): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) props[`p${i}`] = { type: 'string' };
  return props;
}

function parsed(input: unknown): FormDefinition {
  const r = parseFormDefinition(input);
  if (!r.ok) throw new Error(`expected a valid form: ${r.error}`);
  return r.form;
}

function rejects(input: unknown, pattern?: RegExp): void {
  const r = parseFormDefinition(input);
  expect(r.ok).toBe(false);
  if (!r.ok && pattern) expect(r.error).toMatch(pattern);
}

describe('parseFormDefinition', () => {
  it('accepts the fixture form of seed 003 and returns an equal copy', () => {
    const input = deployForm();
    const form = parsed(input);
    expect(form).toEqual(input);
    expect(form).not.toBe(input);
    expect(form.schema.properties).not.toBe((input.schema as { properties: unknown }).properties);
  });

  describe('S1 "1 to 30 properties"', () => {
    it('30 properties pass', () => {
      expect(Object.keys(parsed(formWith(nProps(30))).schema.properties)).toHaveLength(FORM_LIMITS.propertiesMax);
    });
    it('31 properties reject the whole form', () => rejects(formWith(nProps(31)), /1 to 30 properties, has 31/));
    it('1 property passes, 0 properties reject', () => {
      expect(parseFormDefinition(formWith(nProps(1))).ok).toBe(true);
      rejects(formWith({}), /has 0/);
    });
  });

  describe('S1 "Property names match ^[A-Za-z_][A-Za-z0-9_]{0,63}$"', () => {
    it('a 64-character name passes', () => {
      const name = 'a'.repeat(64);
      expect(Object.keys(parsed(formWith({ [name]: { type: 'string' } })).schema.properties)).toEqual([name]);
    });
    it('a 65-character name is rejected', () => rejects(formWith({ ['a'.repeat(65)]: { type: 'string' } }), /must match/));
    it('a leading digit is rejected', () => rejects(formWith({ '1abc': { type: 'string' } }), /must match/));
    it('a leading underscore passes, a dash or a dot is rejected', () => {
      expect(parseFormDefinition(formWith({ _x9: { type: 'string' } })).ok).toBe(true);
      rejects(formWith({ 'a-b': { type: 'string' } }), /must match/);
      rejects(formWith({ 'a.b': { type: 'string' } }), /must match/);
      rejects(formWith({ '': { type: 'string' } }), /must match/);
    });
  });

  describe('S1 "may not be names such as __proto__ or constructor"', () => {
    for (const name of FORM_LIMITS.reservedNames) {
      it(`reserved name ${name} is rejected (also as an own key from JSON.parse)`, () => {
        const json = `{"schema":{"type":"object","properties":{"ok":{"type":"string"},"${name}":{"type":"string"}}}}`;
        rejects(JSON.parse(json), /reserved/);
      });
    }
  });

  describe('S4 "A nested object, an unknown type ... rejects the whole form"', () => {
    it('a nested object property rejects the whole form', () =>
      rejects(formWith({ a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'string' } } } }), /nested objects/));
    it('an array property rejects the whole form', () =>
      rejects(formWith({ a: { type: 'string' }, b: { type: 'array', items: { type: 'string' } } }), /arrays are not supported/));
    it('an unknown type rejects the whole form', () => rejects(formWith({ a: { type: 'date' } }), /unknown type "date"/));
    it('a missing type, a type list and type null reject', () => {
      rejects(formWith({ a: { title: 'A' } }), /unknown type/);
      rejects(formWith({ a: { type: ['string', 'null'] } }), /unknown type/);
      rejects(formWith({ a: { type: 'null' } }), /unknown type/);
    });
    it('schema.type other than "object" rejects', () => {
      rejects({ schema: { type: 'array', properties: { a: { type: 'string' } } } }, /schema.type/);
      rejects({ schema: { properties: { a: { type: 'string' } } } }, /schema.type/);
    });
    it('an unknown property key rejects the whole form ("Anything else rejects the whole form")', () => {
      rejects(formWith({ a: { type: 'string', pattern: '^x$' } }), /"pattern"/);
      rejects(formWith({ a: { type: 'integer', multipleOf: 2 } }), /"multipleOf"/);
      rejects(formWith({ a: { type: 'string', $ref: '#/x' } }), /"\$ref"/);
    });
    it('an unknown key on the schema or beside it rejects', () => {
      rejects(formWith({ a: { type: 'string' } }, { additionalProperties: true }), /"additionalProperties"/);
      rejects({ ...formWith({ a: { type: 'string' } }), onSubmit: 'x' }, /"onSubmit"/);
    });
    it('order inside the schema is rejected ("order sits next to schema, not inside it")', () =>
      rejects(formWith({ a: { type: 'string' } }, { order: ['a'] }), /"order"/));
  });

  describe('S2 property kinds', () => {
    it('string with minLength, maxLength and format multiline passes', () => {
      const form = parsed(formWith({ s: { type: 'string', minLength: 0, maxLength: 5, format: 'multiline', description: 'd' } }));
      expect(form.schema.properties.s).toEqual({ type: 'string', minLength: 0, maxLength: 5, format: 'multiline', description: 'd' });
    });
    it('format other than multiline rejects', () => rejects(formWith({ s: { type: 'string', format: 'email' } }), /multiline/));
    it('minLength/maxLength must be non-negative integers', () => {
      rejects(formWith({ s: { type: 'string', minLength: -1 } }), /minLength/);
      rejects(formWith({ s: { type: 'string', maxLength: 1.5 } }), /maxLength/);
      rejects(formWith({ s: { type: 'string', maxLength: '5' } }), /maxLength/);
    });
    it('minLength greater than maxLength rejects', () => rejects(formWith({ s: { type: 'string', minLength: 3, maxLength: 2 } }), /greater/));
    it('number and integer with minimum/maximum pass; non-numbers reject', () => {
      expect(parseFormDefinition(formWith({ n: { type: 'number', minimum: -1.5, maximum: 2.5 }, i: { type: 'integer', minimum: 0 } })).ok).toBe(true);
      rejects(formWith({ n: { type: 'number', minimum: '1' } }), /minimum/);
      rejects(formWith({ n: { type: 'integer', maximum: null } }), /maximum/);
      rejects(formWith({ n: { type: 'integer', minimum: 5, maximum: 4 } }), /greater/);
    });
    it('minLength is not allowed on a number, minimum not on a string', () => {
      rejects(formWith({ n: { type: 'number', minLength: 1 } }), /"minLength"/);
      rejects(formWith({ s: { type: 'string', minimum: 1 } }), /"minimum"/);
    });
    it('boolean passes with a boolean default, rejects other keys', () => {
      expect(parsed(formWith({ b: { type: 'boolean', default: false } })).schema.properties.b).toEqual({ type: 'boolean', default: false });
      rejects(formWith({ b: { type: 'boolean', enum: [true] } }), /"enum"/);
    });
  });

  describe('S2 "a string enum of at most 50 values (optional enumNames)"', () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    it('50 enum values pass', () => {
      const form = parsed(formWith({ e: { type: 'string', enum: values(50) } }));
      expect(form.schema.properties.e).toMatchObject({ enum: values(50) });
    });
    it('51 enum values reject', () => rejects(formWith({ e: { type: 'string', enum: values(51) } }), /1 to 50 values, has 51/));
    it('an empty enum rejects', () => rejects(formWith({ e: { type: 'string', enum: [] } }), /has 0/));
    it('non-string enum values reject, duplicates reject', () => {
      rejects(formWith({ e: { type: 'string', enum: ['a', 1] } }), /only strings/);
      rejects(formWith({ e: { type: 'integer', enum: [1, 2] } }), /"enum"/);
      rejects(formWith({ e: { type: 'string', enum: ['a', 'a'] } }), /twice/);
    });
    it('enumNames must be strings of the same length as enum', () => {
      expect(parseFormDefinition(formWith({ e: { type: 'string', enum: ['a', 'b'], enumNames: ['A', 'B'] } })).ok).toBe(true);
      rejects(formWith({ e: { type: 'string', enum: ['a', 'b'], enumNames: ['A'] } }), /enumNames/);
      rejects(formWith({ e: { type: 'string', enum: ['a'], enumNames: [1] } }), /enumNames/);
    });
    it('an enum property cannot also carry string length keys', () => rejects(formWith({ e: { type: 'string', enum: ['a'], maxLength: 3 } }), /"maxLength"/));
  });

  describe('descriptive keys and default', () => {
    it('title and description must be strings', () => {
      rejects(formWith({ a: { type: 'string', title: 5 } }), /title must be a string/);
      rejects(formWith({ a: { type: 'string', description: {} } }), /description must be a string/);
    });
    it('default must match the type', () => {
      rejects(formWith({ a: { type: 'integer', default: '2' } }), /default/);
      rejects(formWith({ a: { type: 'integer', default: 2.5 } }), /default/);
      rejects(formWith({ a: { type: 'boolean', default: 'true' } }), /default/);
      rejects(formWith({ a: { type: 'string', default: 3 } }), /default/);
    });
    it('default must satisfy the property constraints', () => {
      rejects(formWith({ a: { type: 'integer', minimum: 1, maximum: 10, default: 11 } }), /default/);
      rejects(formWith({ a: { type: 'string', enum: ['x'], default: 'y' } }), /default/);
      rejects(formWith({ a: { type: 'string', maxLength: 2, default: 'abc' } }), /default/);
      expect(parseFormDefinition(formWith({ a: { type: 'integer', minimum: 1, maximum: 10, default: 10 } })).ok).toBe(true);
    });
    it('form title and submitLabel must be strings', () => {
      rejects({ ...formWith({ a: { type: 'string' } }), title: 1 }, /title/);
      rejects({ ...formWith({ a: { type: 'string' } }), submitLabel: [] }, /submitLabel/);
    });
  });

  describe('required and order', () => {
    it('required must list declared names', () => {
      rejects(formWith({ a: { type: 'string' } }, { required: ['b'] }), /not a declared property/);
      rejects(formWith({ a: { type: 'string' } }, { required: 'a' }), /array/);
      rejects(formWith({ a: { type: 'string' } }, { required: ['a', 'a'] }), /twice/);
    });
    it('order must list declared names', () => {
      rejects({ ...formWith({ a: { type: 'string' } }), order: ['a', 'zz'] }, /not a declared property/);
      rejects({ ...formWith({ a: { type: 'string' } }), order: [1] }, /only strings/);
    });
  });

  describe('hostile input never throws', () => {
    const inputs: unknown[] = [
      null,
      undefined,
      42,
      'form',
      [],
      [deployForm()],
      { schema: null },
      { schema: [] },
      { schema: { type: 'object', properties: [] } },
      { schema: { type: 'object', properties: { a: null } } },
      { schema: { type: 'object', properties: { a: [] } } },
      { schema: { type: 'object', properties: { a: 'string' } } },
      JSON.parse('{"__proto__":{"polluted":true},"schema":{"type":"object","properties":{"a":{"type":"string"}}}}'),
      JSON.parse('{"schema":{"type":"object","properties":{"a":{"type":"string","__proto__":{"x":1}}}}}'),
      JSON.parse('{"schema":{"__proto__":{"type":"object"},"properties":{"a":{"type":"string"}}}}'),
      Object.create({ schema: { type: 'object', properties: { a: { type: 'string' } } } }),
      new Date(),
    ];
    inputs.forEach((input, i) => {
      it(`input #${i} is rejected without throwing`, () => {
        const r = parseFormDefinition(input);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(typeof r.error).toBe('string');
      });
    });
    it('a key inherited through a prototype is not read', () => {
      const props = Object.create({ b: { type: 'string' } }) as Record<string, unknown>;
      props.a = { type: 'string' };
      // Object.create(...) is not a plain object: the whole properties object is refused.
      rejects({ schema: { type: 'object', properties: props } }, /properties must be an object/);
    });
    it('does not pollute Object.prototype', () => {
      parseFormDefinition(JSON.parse('{"__proto__":{"polluted":true},"schema":{"type":"object","properties":{"a":{"type":"string"}}}}'));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
});

describe('validateFormValues (strict)', () => {
  const form = parsed(deployForm());

  it('accepts values valid against the form and returns a fresh object', () => {
    const values = { environment: 'staging', replicas: 2, note: 'hi', dryRun: true };
    const r = validateFormValues(form, values);
    expect(r).toEqual({ ok: true, values });
    if (r.ok) expect(r.values).not.toBe(values);
  });
  it('optional keys may be absent', () => expect(validateFormValues(form, { environment: 'production', replicas: 1 }).ok).toBe(true));
  it('undeclared keys are rejected', () => {
    const r = validateFormValues(form, { environment: 'staging', replicas: 2, extra: 1 });
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/extra/) });
  });
  it('missing required keys are rejected', () => {
    expect(validateFormValues(form, { environment: 'staging' })).toMatchObject({ ok: false, error: expect.stringMatching(/replicas: is required/) });
  });
  it('types are exact: integer must be an integer, no string numbers', () => {
    expect(validateFormValues(form, { environment: 'staging', replicas: 2.5 }).ok).toBe(false);
    expect(validateFormValues(form, { environment: 'staging', replicas: '2' }).ok).toBe(false);
    expect(validateFormValues(form, { environment: 'staging', replicas: 2, dryRun: 'true' }).ok).toBe(false);
    expect(validateFormValues(form, { environment: 'staging', replicas: 2, note: 5 }).ok).toBe(false);
    expect(validateFormValues(form, { environment: 'staging', replicas: 2, note: null }).ok).toBe(false);
  });
  it('minimum and maximum are inclusive bounds', () => {
    expect(validateFormValues(form, { environment: 'staging', replicas: 1 }).ok).toBe(true);
    expect(validateFormValues(form, { environment: 'staging', replicas: 10 }).ok).toBe(true);
    expect(validateFormValues(form, { environment: 'staging', replicas: 0 }).ok).toBe(false);
    expect(validateFormValues(form, { environment: 'staging', replicas: 11 }).ok).toBe(false);
  });
  it('NaN and Infinity are not numbers', () => {
    const f = parsed(formWith({ n: { type: 'number' } }));
    expect(validateFormValues(f, { n: 1.25 }).ok).toBe(true);
    expect(validateFormValues(f, { n: Number.NaN }).ok).toBe(false);
    expect(validateFormValues(f, { n: Number.POSITIVE_INFINITY }).ok).toBe(false);
  });
  it('enum membership is checked', () => {
    expect(validateFormValues(form, { environment: 'Staging', replicas: 2 }).ok).toBe(false);
  });
  it('string lengths count Unicode code points', () => {
    const f = parsed(formWith({ s: { type: 'string', minLength: 2, maxLength: 3 } }));
    expect(validateFormValues(f, { s: '😀😀😀' }).ok).toBe(true); // 3 code points, 6 UTF-16 units
    expect(validateFormValues(f, { s: '😀😀😀😀' }).ok).toBe(false);
    expect(validateFormValues(f, { s: '😀' }).ok).toBe(false);
    expect(validateFormValues(f, { s: 'ab' }).ok).toBe(true);
  });
  it('maxLength boundary: 200 passes, 201 fails', () => {
    expect(validateFormValues(form, { environment: 'staging', replicas: 2, note: 'x'.repeat(200) }).ok).toBe(true);
    expect(validateFormValues(form, { environment: 'staging', replicas: 2, note: 'x'.repeat(201) }).ok).toBe(false);
  });
  it('a property named like an Object.prototype member is not seen as present when absent', () => {
    const f = parsed(formWith({ toString: { type: 'integer' }, valueOf: { type: 'string' } }));
    expect(validateFormValues(f, {}).ok).toBe(true);
    expect(validateFormValues(f, { toString: 3 })).toEqual({ ok: true, values: { toString: 3 } });
    const req = parsed(formWith({ toString: { type: 'integer' } }, { required: ['toString'] }));
    expect(validateFormValues(req, {}).ok).toBe(false);
  });
  it('hostile values are rejected without throwing', () => {
    for (const v of [null, undefined, 3, 'x', [], [{ environment: 'staging', replicas: 2 }], new Date()]) {
      const r = validateFormValues(form, v);
      expect(r.ok).toBe(false);
    }
    const proto = JSON.parse('{"environment":"staging","replicas":2,"__proto__":{"x":1}}');
    expect(validateFormValues(form, proto)).toMatchObject({ ok: false, error: expect.stringMatching(/__proto__/) });
  });
});

describe('coerceFormReply (S5 "holding only the declared keys, coerced to the declared types")', () => {
  const form = parsed(deployForm());

  it('coerces strings to the declared types and keeps only declared keys', () => {
    const r = coerceFormReply(form, { environment: 'staging', replicas: '3', dryRun: 'true', note: ' spaced ', extra: 'x' });
    expect(r).toEqual({ ok: true, values: { environment: 'staging', replicas: 3, dryRun: true, note: ' spaced ' } });
  });
  it('"on" becomes true, "false" becomes false', () => {
    expect(coerceFormReply(form, { environment: 'staging', replicas: 2, dryRun: 'on' })).toMatchObject({ ok: true, values: { dryRun: true } });
    expect(coerceFormReply(form, { environment: 'staging', replicas: 2, dryRun: 'false' })).toMatchObject({ ok: true, values: { dryRun: false } });
  });
  it('a number property accepts "2.5", an integer property refuses it', () => {
    const f = parsed(formWith({ n: { type: 'number' }, i: { type: 'integer' } }));
    expect(coerceFormReply(f, { n: '2.5' })).toEqual({ ok: true, values: { n: 2.5 } });
    expect(coerceFormReply(f, { i: '2.5' })).toMatchObject({ ok: false, errors: { i: expect.any(String) } });
  });
  it('non-numeric text for a number is an error on that field', () => {
    const r = coerceFormReply(form, { environment: 'staging', replicas: 'three' });
    expect(r).toMatchObject({ ok: false, errors: { replicas: expect.stringMatching(/integer/) } });
  });
  it('"Infinity" and " 3" are not coerced to numbers', () => {
    expect(coerceFormReply(form, { environment: 'staging', replicas: 'Infinity' }).ok).toBe(false);
    expect(coerceFormReply(form, { environment: 'staging', replicas: ' 3' }).ok).toBe(false);
  });
  it('empty strings for number, boolean and enum fields count as not answered', () => {
    expect(coerceFormReply(form, { environment: 'staging', replicas: 2, dryRun: '' })).toEqual({
      ok: true,
      values: { environment: 'staging', replicas: 2 },
    });
    expect(coerceFormReply(form, { environment: '', replicas: '' })).toMatchObject({
      ok: false,
      errors: { environment: 'is required', replicas: 'is required' },
    });
  });
  it('an empty string for a plain string field stays an answer', () => {
    expect(coerceFormReply(form, { environment: 'staging', replicas: 2, note: '' })).toMatchObject({ ok: true, values: { note: '' } });
  });
  it('out-of-range values produce per-field errors', () => {
    const r = coerceFormReply(form, { environment: 'prod', replicas: '11' });
    expect(r).toMatchObject({ ok: false, errors: { environment: expect.any(String), replicas: expect.stringMatching(/<= 10/) } });
  });
  it('a non-object reply is an error of the whole reply', () => {
    for (const v of [null, 'x', 3, [], undefined]) {
      expect(coerceFormReply(form, v)).toMatchObject({ ok: false, errors: { [FORM_ERROR_KEY]: expect.any(String) } });
    }
  });
  it('a __proto__ key in the reply is dropped, not applied', () => {
    const r = coerceFormReply(form, JSON.parse('{"environment":"staging","replicas":"2","__proto__":{"admin":true}}'));
    expect(r).toEqual({ ok: true, values: { environment: 'staging', replicas: 2 } });
    if (r.ok) expect(Object.getPrototypeOf(r.values)).toBe(Object.prototype);
  });
});

describe('orderedPropertyNames (S3 "Properties not listed come last")', () => {
  it('lists order first, then the rest in declaration order', () => {
    const form = parsed({
      order: ['c', 'a'],
      schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' }, d: { type: 'string' } } },
    });
    expect(orderedPropertyNames(form)).toEqual(['c', 'a', 'b', 'd']);
  });
  it('without order, declaration order', () => {
    expect(orderedPropertyNames(parsed(formWith({ z: { type: 'string' }, y: { type: 'boolean' } })))).toEqual(['z', 'y']);
  });
  it('the fixture form follows its order', () => {
    expect(orderedPropertyNames(parsed(deployForm()))).toEqual(['environment', 'replicas', 'note', 'dryRun']);
  });
});
