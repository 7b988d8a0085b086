import fc from 'fast-check';
import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { A2A_TASK_STATES } from '../../src/a2a/types.js';
import { SEALED_FIELDS } from '../../src/commands/rules.js';
import { APPROVAL_LIMITS, FORM_LIMITS, RISKS } from '../../src/limits.js';

// Generators of hostile input (issue 14, item 5): every shape Taskbay reads from an agent or a
// person, built so that a good share is valid (so the accepting paths run too) and the rest is
// hostile: wrong types, deep nesting, huge strings, NUL and lone surrogates, `__proto__` /
// `constructor` keys, NaN / ±Infinity / -0 / 1e308. Plain data only (what JSON.parse yields, plus
// numbers JSON cannot carry: NaN and ±Infinity, which a JSON body turns into null), so the same
// values can be sent over HTTP. Absent fields are absent, never `undefined`.

// ---------------------------------------------------------------------------------------------
// Leaves

/** Any UTF-16 code unit, lone surrogates and NUL included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udc00',
  'x\ud83dy',
  '\ud83d\ude00',
  '\\u0000',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '<script>alert(1)</script>',
  '"},{"',
  '${7*7}',
  '../../etc/passwd',
  'null',
  'NaN',
  '\u202e\u0041',
  '\ufeff',
  'ǅ\u0301\u0301\u0301',
];

/** Lengths around the limits, in code units or code points (the emoji is 2 units, 1 point, 4 bytes). */
const LIMIT_LENGTHS = [
  APPROVAL_LIMITS.titleMax,
  APPROVAL_LIMITS.titleMax + 1,
  APPROVAL_LIMITS.summaryMax,
  APPROVAL_LIMITS.summaryMax + 1,
  APPROVAL_LIMITS.textMax,
  APPROVAL_LIMITS.textMax + 1,
  500,
  501,
  512,
  513,
  2048,
  2049,
  10_000,
  10_001,
  16 * 1024 + 1,
  APPROVAL_LIMITS.dataMaxBytes + 1,
];

const hugeString = fc.tuple(fc.constantFrom(...LIMIT_LENGTHS), fc.constantFrom('x', '\u00e9', '\ud83d\ude00', '\u0000', '\ud800')).map(([n, c]) => c.repeat(n));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: codeUnit, maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: hugeString },
  // Random text of ~3 KB: repeated characters compress, this does not (a Postgres index entry holds ~2.7 KB).
  { weight: 1, arbitrary: fc.string({ minLength: 2800, maxLength: 3200 }) },
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1, -1, 0.5, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 2_592_000, 2_592_001),
  fc.integer(),
  fc.double(),
);

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', '$form', 'a b', 'ok') },
  { weight: 3, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: codeUnit, maxLength: 6 }) },
);

export const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
);

// ---------------------------------------------------------------------------------------------
// Structure

/**
 * An object from entries, with `__proto__` an own data key as JSON.parse makes it (a plain
 * assignment would set the prototype instead); sometimes without a prototype at all.
 */
export function objectOf(entries: [string, unknown][], nullProto = false): Record<string, unknown> {
  const out: Record<string, unknown> = nullProto ? Object.create(null) : {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Nested arrays and objects `depth` levels deep, built iteratively (depths far past any recursion limit). */
export function nested(depth: number, inner: unknown = 'deep', kind: 'array' | 'object' | 'mixed' = 'mixed'): unknown {
  let v = inner;
  for (let i = 0; i < depth; i++) {
    const asArray = kind === 'array' || (kind === 'mixed' && i % 2 === 0);
    v = asArray ? [v] : { a: v };
  }
  return v;
}

// Around the readers' depth limits (32, 64), within the byte limits (1000-4500: 6-27 KB) and past
// the JavaScript stack (JSON.stringify gives up near 5,000).
export const DEEP_DEPTHS = [30, 33, 64, 65, 200, 1_000, 3_000, 4_500, 6_000, 20_000];
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(...DEEP_DEPTHS), fc.constantFrom('array' as const, 'object' as const, 'mixed' as const))
  .map(([d, kind]) => nested(d, 'deep', kind));

/** Any hostile JSON-ish value: leaves, arrays, objects (hostile keys), and now and then a deep one. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 5, arbitrary: hostileLeaf },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 5 }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 5 }), fc.boolean())
        .map(([entries, nullProto]) => objectOf(entries, nullProto)),
    },
  ),
})).value;

/** An object (hostile keys and values): where a reader wants an object, such as metadata. */
export const hostileObject: fc.Arbitrary<unknown> = fc
  .tuple(fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 4 }), fc.boolean())
  .map(([entries, nullProto]) => objectOf(entries, nullProto));

export const anyValue: fc.Arbitrary<unknown> = fc.oneof({ weight: 12, arbitrary: hostileValue }, { weight: 1, arbitrary: deepValue });

/**
 * A record over `fields`: each field present or absent, valid (its arbitrary) or hostile; plus
 * extra hostile keys now and then. Valid fields dominate so that whole valid records are common.
 */
export function shaped(fields: Record<string, fc.Arbitrary<unknown>>, opts: { required?: string[]; extras?: boolean } = {}): fc.Arbitrary<unknown> {
  const names = Object.keys(fields);
  // Clean: every field from its own arbitrary (optional ones sometimes absent), nothing else.
  const clean = fc
    .tuple(
      ...names.map((n) =>
        (opts.required ?? []).includes(n)
          ? fields[n]!.map((v) => ({ v }))
          : fc.option(
              fields[n]!.map((v) => ({ v })),
              { freq: 3 },
            ),
      ),
    )
    .map((values) => objectOf(names.flatMap((n, i) => (values[i] ? [[n, values[i]!.v] as [string, unknown]] : []))));
  const fieldArb = (name: string) =>
    fc.oneof(
      { weight: 12, arbitrary: fields[name]!.map((v) => ({ v })) },
      { weight: 1, arbitrary: anyValue.map((v) => ({ v })) },
      { weight: (opts.required ?? []).includes(name) ? 1 : 4, arbitrary: fc.constant(null) },
    );
  const record = fc.tuple(
    fc.tuple(...names.map(fieldArb)),
    opts.extras === false
      ? fc.constant([] as [string, unknown][])
      : fc.oneof(
          { weight: 6, arbitrary: fc.constant([] as [string, unknown][]) },
          { weight: 1, arbitrary: fc.array(fc.tuple(hostileKey, anyValue), { maxLength: 3 }) },
        ),
    fc.boolean(),
  );
  const built = record.map(([values, extras, nullProto]) =>
    objectOf([...names.flatMap((n, i) => (values[i] ? [[n, values[i]!.v] as [string, unknown]] : [])), ...extras], nullProto && extras.length > 0),
  );
  // Clean or with hostile fields, and now and then not an object at all.
  return fc.oneof({ weight: 14, arbitrary: clean }, { weight: 12, arbitrary: built }, { weight: 1, arbitrary: anyValue });
}

// ---------------------------------------------------------------------------------------------
// Forms (seed 003 structured-form subset)

const validName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/).filter((n) => !FORM_LIMITS.reservedNames.includes(n));
const formPropertyName = fc.oneof({ weight: 30, arbitrary: validName }, { weight: 1, arbitrary: hostileKey });

const formProperty: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: shaped(
      {
        type: fc.constant('string'),
        title: fc.string({ maxLength: 20 }),
        minLength: fc.nat(5),
        maxLength: fc.integer({ min: 5, max: 50 }),
        format: fc.constant('multiline'),
      },
      { required: ['type'] },
    ),
  },
  {
    weight: 3,
    arbitrary: shaped(
      { type: fc.constant('string'), enum: fc.uniqueArray(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 6 }), title: fc.string({ maxLength: 20 }) },
      { required: ['type', 'enum'] },
    ),
  },
  {
    weight: 3,
    arbitrary: shaped(
      {
        type: fc.constantFrom('number', 'integer'),
        minimum: fc.integer({ min: -100, max: 0 }),
        maximum: fc.integer({ min: 1, max: 100 }),
        description: fc.string({ maxLength: 20 }),
      },
      { required: ['type'] },
    ),
  },
  { weight: 3, arbitrary: shaped({ type: fc.constant('boolean'), default: fc.boolean() }, { required: ['type'] }) },
  { weight: 1, arbitrary: shaped({ type: fc.constantFrom('object', 'array', 'null', 'String'), properties: anyValue }, { required: ['type'] }) },
);

export const formDefinition: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.array(fc.tuple(formPropertyName, formProperty), { minLength: 1, maxLength: 6 }),
    fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constantFrom(FORM_LIMITS.propertiesMax, FORM_LIMITS.propertiesMax + 1) }),
    fc.option(fc.string({ maxLength: 30 })),
    fc.boolean(),
    fc.boolean(),
    fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: anyValue }),
  )
  .map(([entries, total, title, requireFirst, orderAll, hostileSchemaExtra]) => {
    // Now and then padded to exactly the property limit, or one past it.
    const base = objectOf(entries);
    const props = Object.entries(base);
    for (let i = 0; props.length < total; i++) if (!Object.hasOwn(base, `pad${i}`)) props.push([`pad${i}`, { type: 'boolean' }]);
    const properties = objectOf(props);
    const names = Object.keys(properties);
    const schema: Record<string, unknown> = { type: 'object', properties };
    if (requireFirst && names[0] !== undefined) schema.required = [names[0]];
    if (hostileSchemaExtra !== null) schema.required = hostileSchemaExtra;
    const form: Record<string, unknown> = { schema };
    if (title !== null) form.title = title;
    if (orderAll) form.order = [...names].reverse();
    return form;
  });

/** Values for a form: per declared property a valid-looking value or a hostile one, plus stray keys. */
export function formValuesFor(form: { schema: { properties: Record<string, unknown> } }): fc.Arbitrary<unknown> {
  const names = Object.keys(form.schema.properties);
  const valueFor = (name: string) => {
    // The form may be a generated (unchecked) one: read it defensively.
    const raw = form.schema.properties[name];
    const p = (raw && typeof raw === 'object' ? raw : {}) as { type?: unknown; enum?: unknown };
    const enumValues = Array.isArray(p.enum) && p.enum.length > 0 ? (p.enum as unknown[]) : null;
    const typed = enumValues
      ? fc.constantFrom(...enumValues)
      : p.type === 'string'
        ? fc.string({ maxLength: 8 })
        : p.type === 'boolean'
          ? fc.boolean()
          : p.type === 'integer'
            ? fc.integer({ min: -5, max: 5 })
            : fc.double({ min: -5, max: 5, noNaN: true });
    // A person's reply arrives as strings from inputs (coerceFormReply's job).
    const asText = typed.map((v) => (v !== null && typeof v === 'object' ? '[object]' : String(v)));
    return fc.oneof(
      { weight: 8, arbitrary: typed },
      { weight: 2, arbitrary: asText },
      { weight: 1, arbitrary: anyValue },
      { weight: 2, arbitrary: fc.constant(undefined) },
    );
  };
  return fc.oneof(
    {
      weight: 15,
      arbitrary: fc
        .tuple(
          fc.tuple(...names.map(valueFor)),
          fc.oneof(
            { weight: 6, arbitrary: fc.constant([] as [string, unknown][]) },
            { weight: 1, arbitrary: fc.array(fc.tuple(hostileKey, anyValue), { minLength: 1, maxLength: 2 }) },
          ),
        )
        .map(([vals, extras]) => objectOf([...names.flatMap((n, i) => (vals[i] === undefined ? [] : [[n, vals[i]] as [string, unknown]])), ...extras])),
    },
    { weight: 1, arbitrary: anyValue },
  );
}

/** A few real forms (from the fixture agent) and generated ones: the form a send_data action carries. */
export const FIXED_FORMS = [
  {
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
    order: ['environment', 'replicas', 'note', 'dryRun'],
  },
  {
    schema: {
      type: 'object',
      properties: { amount: { type: 'number', minimum: -1e308, maximum: 1e308 }, label: { type: 'string', minLength: 2, maxLength: 3 } },
    },
  },
] as const;

// ---------------------------------------------------------------------------------------------
// Approval requests (seed 000)

const sendMessageAction = shaped(
  {
    kind: fc.constant('send_message'),
    text: fc.oneof({ weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) }, { weight: 1, arbitrary: hostileString }),
    data: fc.oneof(
      { weight: 3, arbitrary: hostileValue },
      { weight: 2, arbitrary: fc.constant(null) },
      { weight: 3, arbitrary: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }) },
      { weight: 1, arbitrary: deepValue.map((v) => ({ nested: v })) },
    ),
  },
  { required: ['kind', 'text'] },
);

const sendDataAction = fc.oneof(fc.constantFrom(...FIXED_FORMS), formDefinition).chain((form) => {
  const props = (form as { schema?: { properties?: unknown } }).schema?.properties;
  const values = props && typeof props === 'object' ? formValuesFor(form as never) : anyValue;
  return shaped({ kind: fc.constant('send_data'), form: fc.constant(form), values }, { required: ['kind', 'form', 'values'] });
});

export const approvalAction: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: sendMessageAction },
  { weight: 4, arbitrary: sendDataAction },
  { weight: 1, arbitrary: shaped({ kind: fc.constantFrom('run_tool', 'SEND_MESSAGE', '', 'run_command'), text: fc.string(), args: anyValue }) },
);

export const approvalRequest: fc.Arbitrary<unknown> = shaped(
  {
    title: fc.oneof({ weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) }, { weight: 1, arbitrary: hostileString }),
    summary: fc.oneof(fc.string({ maxLength: 60 }), hostileString),
    risk: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...RISKS) }, { weight: 1, arbitrary: fc.constantFrom('HIGH', 'none', '') }),
    expiresInSeconds: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: APPROVAL_LIMITS.expiresMinSeconds, max: APPROVAL_LIMITS.expiresMaxSeconds }) },
      { weight: 1, arbitrary: hostileNumber },
    ),
    action: approvalAction,
    // Fields an agent may not set (rogue variant): never read.
    assignee: fc.constant('mallory@example.com'),
    status: fc.constant('APPROVED'),
  },
  { required: ['title', 'action'] },
);

/** Message parts as an agent sends them: approval parts (valid and not), forms, A2UI, text, junk. */
export const agentPart: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: approvalRequest.map((data) => ({ mediaType: MEDIA_TYPE.approvalRequest, data })) },
  { weight: 2, arbitrary: formDefinition.map((data) => ({ mediaType: MEDIA_TYPE.form, data })) },
  {
    weight: 2,
    arbitrary: fc
      .constant(null)
      .chain(() => a2uiEnvelopes)
      .map((data) => ({ mediaType: MEDIA_TYPE.a2ui, data })),
  },
  { weight: 2, arbitrary: shaped({ text: hostileString, metadata: hostileObject }) },
  {
    weight: 1,
    arbitrary: shaped({
      data: anyValue,
      mediaType: fc.oneof(hostileString, fc.constantFrom(MEDIA_TYPE.approvalRequest, MEDIA_TYPE.json)),
      url: hostileString,
      raw: hostileString,
      filename: hostileString,
    }),
  },
  { weight: 1, arbitrary: anyValue },
);

// ---------------------------------------------------------------------------------------------
// A2UI v0.9

const a2uiEnvelope = fc.oneof(
  shaped(
    {
      version: fc.constant('v0.9'),
      createSurface: shaped({ surfaceId: fc.string({ minLength: 1, maxLength: 10 }), catalogId: fc.string() }, { required: ['surfaceId'] }),
    },
    { required: ['version', 'createSurface'] },
  ),
  shaped(
    {
      version: fc.constant('v0.9'),
      updateComponents: shaped(
        { surfaceId: fc.string({ minLength: 1, maxLength: 10 }), components: fc.array(anyValue, { maxLength: 4 }) },
        { required: ['surfaceId'] },
      ),
    },
    { required: ['version', 'updateComponents'] },
  ),
  shaped(
    {
      version: fc.constant('v0.9'),
      updateDataModel: shaped({ surfaceId: fc.string({ minLength: 1, maxLength: 10 }), path: fc.string(), value: anyValue }, { required: ['surfaceId'] }),
    },
    { required: ['version', 'updateDataModel'] },
  ),
  shaped({
    version: fc.constantFrom('v0.9', 'v0.8'),
    deleteSurface: shaped({ surfaceId: hostileString }),
    createSurface: shaped({ surfaceId: hostileString }),
  }),
);

export const a2uiEnvelopes: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 10, arbitrary: fc.array(a2uiEnvelope, { minLength: 1, maxLength: 5 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(100, 101).chain((n) => fc.constant(Array.from({ length: n }, () => ({ version: 'v0.9', deleteSurface: { surfaceId: 's' } })))),
  },
  { weight: 2, arbitrary: anyValue },
);

export const a2uiAction: fc.Arbitrary<unknown> = shaped(
  {
    name: fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), hostileString),
    surfaceId: fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), hostileString),
    sourceComponentId: hostileString,
    timestamp: fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      hostileString,
    ),
    context: fc.oneof(hostileValue, deepValue),
  },
  { required: ['name', 'surfaceId'] },
);

// ---------------------------------------------------------------------------------------------
// A2A messages, tasks, stream events (push bodies)

const taskState = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...A2A_TASK_STATES) },
  { weight: 1, arbitrary: fc.constantFrom('TASK_STATE_UNKNOWN', 'completed', '') },
);

export const agentMessage: fc.Arbitrary<unknown> = shaped(
  {
    messageId: fc.oneof({ weight: 8, arbitrary: fc.uuid() }, { weight: 1, arbitrary: hostileString }),
    role: fc.oneof({ weight: 8, arbitrary: fc.constant('ROLE_AGENT') }, { weight: 1, arbitrary: fc.constantFrom('ROLE_USER', 'agent', '') }),
    parts: fc.oneof({ weight: 8, arbitrary: fc.array(agentPart, { maxLength: 4 }) }, { weight: 1, arbitrary: anyValue }),
    contextId: hostileString,
    taskId: hostileString,
    metadata: hostileObject,
    extensions: fc.array(hostileValue, { maxLength: 3 }),
  },
  { required: ['messageId', 'role', 'parts'] },
);

const taskStatus = shaped({ state: taskState, message: agentMessage, timestamp: hostileString }, { required: ['state'] });

/** A remote task; `id`/`contextId` given so a push can name the task it is sent for. */
export function remoteTask(ids: fc.Arbitrary<{ id: string; contextId: string }>): fc.Arbitrary<unknown> {
  return ids.chain(({ id, contextId }) =>
    shaped(
      {
        id: fc.oneof({ weight: 10, arbitrary: fc.constant(id) }, { weight: 1, arbitrary: hostileString }),
        contextId: fc.oneof({ weight: 10, arbitrary: fc.constant(contextId) }, { weight: 1, arbitrary: hostileString }),
        status: taskStatus,
        history: fc.array(agentMessage, { maxLength: 2 }),
        artifacts: fc.array(anyValue, { maxLength: 2 }),
        metadata: hostileObject,
      },
      { required: ['id', 'contextId', 'status'] },
    ),
  );
}

/** A push body (A2A v1.0 StreamResponse, or a bare Task as pre-1.0 agents push). */
export function pushBody(ids: fc.Arbitrary<{ id: string; contextId: string }>): fc.Arbitrary<unknown> {
  const task = remoteTask(ids);
  const statusUpdate = ids.chain(({ id, contextId }) =>
    shaped(
      { taskId: fc.constant(id), contextId: fc.constant(contextId), status: taskStatus, metadata: hostileObject, final: fc.boolean() },
      { required: ['taskId', 'contextId', 'status'] },
    ),
  );
  const artifactUpdate = ids.chain(({ id, contextId }) =>
    shaped({ taskId: fc.constant(id), contextId: fc.constant(contextId), artifact: anyValue }, { required: ['taskId', 'contextId'] }),
  );
  return fc.oneof(
    { weight: 4, arbitrary: shaped({ statusUpdate }, { required: ['statusUpdate'] }) },
    { weight: 2, arbitrary: shaped({ task }, { required: ['task'] }) },
    { weight: 1, arbitrary: shaped({ message: agentMessage }, { required: ['message'] }) },
    { weight: 1, arbitrary: shaped({ artifactUpdate }, { required: ['artifactUpdate'] }) },
    { weight: 1, arbitrary: task },
    { weight: 1, arbitrary: shaped({ task, statusUpdate }) },
    { weight: 1, arbitrary: anyValue },
  );
}

/** Remote task ids: fresh ones, and a few shared ones (an agent naming another task's id). */
export const anyIds = fc.record({
  id: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom('shared-task-1', 'shared-task-2')),
  contextId: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 8 }), fc.constant('shared-context')),
});

// ---------------------------------------------------------------------------------------------
// Agent cards

const httpUrl = fc.oneof(
  { weight: 6, arbitrary: fc.webUrl() },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'ftp://x.test/a',
      'javascript:alert(1)',
      'http://',
      'http://[::1]:80/a2a',
      'file:///etc/passwd',
      `http://x.test/${'a'.repeat(2050)}`,
    ),
  },
  { weight: 1, arbitrary: hostileString },
);

export const agentCard: fc.Arbitrary<unknown> = shaped(
  {
    name: fc.oneof({ weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }, { weight: 1, arbitrary: hostileString }),
    description: hostileString,
    version: hostileString,
    supportedInterfaces: fc.oneof(
      {
        weight: 8,
        arbitrary: fc.array(
          shaped(
            { url: httpUrl, protocolBinding: fc.constantFrom('JSONRPC', 'JSONRPC', 'HTTP+JSON', 'GRPC', ''), protocolVersion: fc.constantFrom('1.0', '0.3') },
            { required: ['url', 'protocolBinding'] },
          ),
          { minLength: 1, maxLength: 4 },
        ),
      },
      { weight: 1, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.constant(Array.from({ length: 40 }, (_, i) => ({ url: `http://a${i}.test/a2a`, protocolBinding: 'JSONRPC' }))) },
    ),
    capabilities: shaped({
      streaming: fc.boolean(),
      pushNotifications: fc.boolean(),
      extensions: fc.oneof(
        {
          weight: 8,
          arbitrary: fc.array(
            shaped(
              {
                uri: fc.oneof({ weight: 4, arbitrary: fc.webUrl() }, { weight: 1, arbitrary: hostileString }),
                required: fc.boolean(),
                description: hostileString,
                params: fc.oneof({ weight: 4, arbitrary: hostileObject }, { weight: 1, arbitrary: deepValue.map((v) => ({ v })) }),
              },
              { required: ['uri'] },
            ),
            { maxLength: 4 },
          ),
        },
        { weight: 1, arbitrary: fc.constant(Array.from({ length: 65 }, (_, i) => ({ uri: `urn:x:${i}` }))) },
      ),
    }),
    skills: fc.oneof(
      {
        weight: 8,
        arbitrary: fc.array(
          shaped(
            {
              // Mostly distinct ids; now and then the same one twice.
              id: fc.oneof(
                { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
                { weight: 1, arbitrary: fc.constant('chat') },
                { weight: 1, arbitrary: hostileString },
              ),
              name: fc.oneof({ weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) }, { weight: 1, arbitrary: hostileString }),
              description: hostileString,
              tags: fc.array(hostileValue, { maxLength: 3 }),
            },
            { required: ['id', 'name'] },
          ),
          { maxLength: 4 },
        ),
      },
      { weight: 1, arbitrary: fc.constant(Array.from({ length: 201 }, (_, i) => ({ id: `s${i}`, name: `S${i}` }))) },
    ),
    defaultInputModes: fc.array(hostileValue, { maxLength: 3 }),
    defaultOutputModes: fc.array(hostileValue, { maxLength: 3 }),
  },
  { required: ['name', 'supportedInterfaces', 'capabilities', 'skills'] },
);

// ---------------------------------------------------------------------------------------------
// Command approvals (seed 002)

const sealedLimits: Record<string, number> = { operation: 500, exact_content: 20_000, scope: 200, rationale: 4000, verification: 4000 };

export const sealedPayload: fc.Arbitrary<unknown> = shaped(
  Object.fromEntries(
    SEALED_FIELDS.map((f) => {
      if (f === 'risk_level')
        return [f, fc.oneof({ weight: 6, arbitrary: fc.constantFrom('high', 'medium') }, { weight: 1, arbitrary: fc.constantFrom('low', 'critical', 'HIGH') })];
      if (f === 'rollback') return [f, fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: anyValue })];
      const max = sealedLimits[f]!;
      return [
        f,
        fc.oneof(
          { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
          { weight: 1, arbitrary: fc.constantFrom(max, max + 1).map((n) => 'c'.repeat(n)) },
          { weight: 1, arbitrary: hostileString },
        ),
      ];
    }),
  ),
  { required: [...SEALED_FIELDS] },
);

export const commandList: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc.array(fc.oneof({ weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }, { weight: 1, arbitrary: hostileValue }), {
      minLength: 1,
      maxLength: 4,
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom(32, 33).map((n) => Array.from({ length: n }, (_, i) => `echo ${i}`)) },
  { weight: 1, arbitrary: anyValue },
);

export const agentIdText: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^a[0-9a-f]{5,20}$/) },
  { weight: 1, arbitrary: hostileValue },
);
