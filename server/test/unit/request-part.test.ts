import { describe, it, expect } from 'vitest';
import {
  applyActionEdit,
  findApprovalRequest,
  parseApprovalAction,
  parseApprovalRequest,
  type ApprovalRequestInput,
} from '../../src/approvals/request-part.js';
import { APPROVAL_LIMITS, RISKS, jsonBytes } from '../../src/limits.js';
import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { actionDigest, type ApprovalAction } from '../../src/approvals/digest.js';

// Seed 000 quotes used below:
// R1 "{ "kind": "send_message", "text": "<1-20000 chars>", "data": { ... } } (data optional, an
//     object of at most 64 KB)"
// R2 "{ "kind": "send_data", "form": { ... }, "values": { ... } }. form is a definition in the
//     structured-form subset (at most 64 KB) and values must validate against it."
// R3 "The whole part may be at most 128 KB of JSON."
// R4 "The part cannot name an assignee, reviewer, policy, status or another task; such fields
//     are not read."
// R5 "A malformed, over-limit or non-advertised request is ignored and the message stays
//     ordinary content; it never fails the observation."
// R6 "The first valid part in the message wins."
// docs/ARCHITECTURE.md "Rules that must hold": "`title` 1..200 chars, `summary` at most 4000, `risk` one of low|medium|high|critical
//     (default medium), `expiresInSeconds` an integer 1..2592000 (absent: the configured default)"

const KIB = 1024;

function baseRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Delete the staging cluster',
    summary: 'Removes all staging nodes and volumes.',
    risk: 'high',
    expiresInSeconds: 3600,
    action: { kind: 'send_message', text: 'Approved. Delete the staging cluster.' },
    ...overrides,
  };
}

function part(data: unknown, mediaType: string = MEDIA_TYPE.approvalRequest): Record<string, unknown> {
  return { data, mediaType };
}

function deployForm(): Record<string, unknown> {
  return {
    title: 'Deploy request',
    order: ['environment', 'replicas'],
    schema: {
      type: 'object',
      required: ['environment', 'replicas'],
      properties: {
        environment: { type: 'string', enum: ['staging', 'production'] },
        replicas: { type: 'integer', minimum: 1, maximum: 10 },
        note: { type: 'string', maxLength: 20 },
      },
    },
  };
}

function sendData(values: unknown = { environment: 'staging', replicas: 2 }, form: unknown = deployForm()): Record<string, unknown> {
  return { kind: 'send_data', form, values };
}

/** An object of exactly `bytes` bytes of JSON, padded through one string field. */
function objectOfBytes(bytes: number, base: Record<string, unknown> = {}, field = 'pad'): Record<string, unknown> {
  const empty = jsonBytes({ ...base, [field]: '' });
  return { ...base, [field]: 'x'.repeat(bytes - empty) };
}

function requestOk(data: unknown): ApprovalRequestInput {
  const r = parseApprovalRequest(data);
  if (!r.ok) throw new Error(`expected a valid request: ${r.error}`);
  return r.request;
}

function requestError(data: unknown): string {
  const r = parseApprovalRequest(data);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.error;
}

describe('parseApprovalRequest', () => {
  it('accepts the example of seed 000', () => {
    expect(requestOk(baseRequest())).toEqual({
      title: 'Delete the staging cluster',
      summary: 'Removes all staging nodes and volumes.',
      risk: 'high',
      expiresInSeconds: 3600,
      action: { kind: 'send_message', text: 'Approved. Delete the staging cluster.' },
    });
  });

  describe('title 1..200 chars', () => {
    it('200 characters pass', () => expect(requestOk(baseRequest({ title: 't'.repeat(200) })).title).toHaveLength(200));
    it('201 characters are rejected', () => expect(requestError(baseRequest({ title: 't'.repeat(201) }))).toMatch(/title/));
    it('an empty title is rejected', () => expect(requestError(baseRequest({ title: '' }))).toMatch(/title/));
    it('a missing or non-string title is rejected', () => {
      const { title: _omit, ...rest } = baseRequest();
      expect(requestError(rest)).toMatch(/title/);
      expect(requestError(baseRequest({ title: 5 }))).toMatch(/title/);
    });
    it('counts code points: 200 emoji pass, 201 fail', () => {
      expect(requestOk(baseRequest({ title: '🚀'.repeat(200) })).title).toBe('🚀'.repeat(200));
      requestError(baseRequest({ title: '🚀'.repeat(201) }));
    });
  });

  describe('summary at most 4000', () => {
    it('4000 characters pass', () => expect(requestOk(baseRequest({ summary: 's'.repeat(4000) })).summary).toHaveLength(4000));
    it('4001 characters are rejected', () => expect(requestError(baseRequest({ summary: 's'.repeat(4001) }))).toMatch(/summary/));
    it('absent summary becomes null', () => {
      const { summary: _omit, ...rest } = baseRequest();
      expect(requestOk(rest).summary).toBeNull();
    });
    it('a non-string summary is rejected', () => expect(requestError(baseRequest({ summary: 12 }))).toMatch(/summary/));
  });

  describe('risk "one of low|medium|high|critical (default medium)"', () => {
    for (const risk of RISKS) {
      it(`${risk} is accepted`, () => expect(requestOk(baseRequest({ risk })).risk).toBe(risk));
    }
    it('absent risk defaults to medium', () => {
      const { risk: _omit, ...rest } = baseRequest();
      expect(requestOk(rest).risk).toBe('medium');
    });
    it('"urgent" is rejected', () => expect(requestError(baseRequest({ risk: 'urgent' }))).toMatch(/risk/));
    it('"HIGH" and 3 are rejected', () => {
      requestError(baseRequest({ risk: 'HIGH' }));
      requestError(baseRequest({ risk: 3 }));
    });
  });

  describe('expiresInSeconds "an integer 1..2592000"', () => {
    it('1 is accepted', () => expect(requestOk(baseRequest({ expiresInSeconds: 1 })).expiresInSeconds).toBe(1));
    it('2592000 is accepted', () => expect(requestOk(baseRequest({ expiresInSeconds: 2_592_000 })).expiresInSeconds).toBe(2_592_000));
    for (const bad of [0, 2_592_001, 1.5, '60', -1, Number.NaN, true]) {
      it(`${JSON.stringify(bad) ?? String(bad)} is rejected`, () => expect(requestError(baseRequest({ expiresInSeconds: bad }))).toMatch(/expiresInSeconds/));
    }
    it('absent becomes null (the configured default applies later)', () => {
      const { expiresInSeconds: _omit, ...rest } = baseRequest();
      expect(requestOk(rest).expiresInSeconds).toBeNull();
    });
  });

  describe('R4 "such fields are not read"', () => {
    const ignored = {
      assignee: 'mallory',
      assigneeId: 'u-1',
      reviewer: 'mallory',
      reviewers: ['mallory'],
      policy: { separationOfDuties: false },
      status: 'APPROVED',
      taskId: 'other-task',
      task: { id: 'other-task' },
      requester: 'agent',
      requesterUserId: 'u-2',
    };
    it('they do not invalidate the request and never appear in the result', () => {
      const request = requestOk(baseRequest(ignored));
      expect(Object.keys(request).sort()).toEqual(['action', 'expiresInSeconds', 'risk', 'summary', 'title']);
      expect(request).toEqual(requestOk(baseRequest()));
    });
    it('even malformed values of unread fields do not invalidate', () => {
      expect(parseApprovalRequest(baseRequest({ status: { nested: [1, 2] }, assignee: null, policy: 42 })).ok).toBe(true);
    });
    it('unknown action fields are dropped', () => {
      const request = requestOk(baseRequest({ action: { kind: 'send_message', text: 'hi', assignee: 'x', form: {}, values: {} } }));
      expect(request.action).toEqual({ kind: 'send_message', text: 'hi' });
    });
  });

  it('a missing action is rejected', () => {
    const { action: _omit, ...rest } = baseRequest();
    expect(requestError(rest)).toMatch(/action/);
  });

  describe('hostile input never throws', () => {
    for (const input of [null, undefined, 0, 'x', [], [baseRequest()], true]) {
      it(`${JSON.stringify(input) ?? 'undefined'} is rejected`, () => expect(parseApprovalRequest(input).ok).toBe(false));
    }
    it('__proto__ keys from JSON.parse are neither read nor applied', () => {
      const onlyProto = JSON.parse('{"__proto__":{"title":"t","action":{"kind":"send_message","text":"x"}}}');
      expect(parseApprovalRequest(onlyProto).ok).toBe(false);
      const withProto = JSON.parse('{"title":"t","action":{"kind":"send_message","text":"x","__proto__":{"data":{"a":1}}},"__proto__":{"risk":"low"}}');
      const request = requestOk(withProto);
      expect(request.risk).toBe('medium');
      expect(request.action).toEqual({ kind: 'send_message', text: 'x' });
      expect(({} as Record<string, unknown>).risk).toBeUndefined();
    });
    it('a throwing getter is reported as an error, not thrown', () => {
      const data = baseRequest();
      Object.defineProperty(data, 'title', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      });
      expect(parseApprovalRequest(data).ok).toBe(false);
    });
  });
});

describe('parseApprovalAction', () => {
  describe('R1 send_message text "1-20000 chars"', () => {
    it('20000 characters pass', () => {
      expect(parseApprovalAction({ kind: 'send_message', text: 'a'.repeat(20_000) }).ok).toBe(true);
    });
    it('20001 characters are rejected', () => {
      expect(parseApprovalAction({ kind: 'send_message', text: 'a'.repeat(20_001) })).toMatchObject({ ok: false, error: expect.stringMatching(/text/) });
    });
    it('an empty text is rejected', () => expect(parseApprovalAction({ kind: 'send_message', text: '' }).ok).toBe(false));
    it('a missing or non-string text is rejected', () => {
      expect(parseApprovalAction({ kind: 'send_message' }).ok).toBe(false);
      expect(parseApprovalAction({ kind: 'send_message', text: ['a'] }).ok).toBe(false);
    });
    it('text length counts code points: 20000 emoji pass, 20001 fail', () => {
      const text = '😀'.repeat(20_000);
      expect(text.length).toBe(40_000); // UTF-16 units, which must not be what is counted
      expect(parseApprovalAction({ kind: 'send_message', text })).toEqual({ ok: true, action: { kind: 'send_message', text } });
      expect(parseApprovalAction({ kind: 'send_message', text: text + '😀' }).ok).toBe(false);
    });
  });

  describe('R1 data "an object of at most 64 KB"', () => {
    it('data of exactly 64 KiB passes', () => {
      const data = objectOfBytes(64 * KIB);
      expect(jsonBytes(data)).toBe(APPROVAL_LIMITS.dataMaxBytes);
      const r = parseApprovalAction({ kind: 'send_message', text: 'ok', data });
      expect(r).toEqual({ ok: true, action: { kind: 'send_message', text: 'ok', data } });
    });
    it('data one byte over 64 KiB is rejected', () => {
      const data = objectOfBytes(64 * KIB + 1);
      expect(jsonBytes(data)).toBe(APPROVAL_LIMITS.dataMaxBytes + 1);
      expect(parseApprovalAction({ kind: 'send_message', text: 'ok', data })).toMatchObject({ ok: false, error: expect.stringMatching(/data/) });
    });
    it('multi-byte characters count as UTF-8 bytes', () => {
      const data = { pad: 'é'.repeat(32 * KIB) }; // 65536 bytes of characters + 10 of JSON
      expect(parseApprovalAction({ kind: 'send_message', text: 'ok', data }).ok).toBe(false);
    });
    it('null or absent data means no data key', () => {
      expect(parseApprovalAction({ kind: 'send_message', text: 'ok', data: null })).toEqual({ ok: true, action: { kind: 'send_message', text: 'ok' } });
      const r = parseApprovalAction({ kind: 'send_message', text: 'ok' });
      expect(r.ok && Object.hasOwn(r.action, 'data')).toBe(false);
    });
    it('array, string and number data are rejected', () => {
      for (const data of [[1, 2], 'x', 3, true]) {
        expect(parseApprovalAction({ kind: 'send_message', text: 'ok', data }).ok).toBe(false);
      }
    });
    it('data is copied, not shared with the input', () => {
      const data = { a: { b: 1 } };
      const r = parseApprovalAction({ kind: 'send_message', text: 'ok', data });
      data.a.b = 2;
      expect(r).toMatchObject({ ok: true, action: { data: { a: { b: 1 } } } });
    });
  });

  describe('R2 send_data', () => {
    it('a valid form and values pass; the digest equals the digest of the input', () => {
      const input = sendData();
      const r = parseApprovalAction(input);
      expect(r).toEqual({ ok: true, action: input });
      if (r.ok) expect(actionDigest(r.action)).toBe(actionDigest(input as ApprovalAction));
    });
    it('an invalid form rejects the action', () => {
      const form = deployForm();
      (form.schema as { properties: Record<string, unknown> }).properties.nested = { type: 'object' };
      expect(parseApprovalAction(sendData(undefined, form))).toMatchObject({ ok: false, error: expect.stringMatching(/action.form/) });
    });
    it('values that do not validate against the form reject the action', () => {
      expect(parseApprovalAction(sendData({ environment: 'staging', replicas: 11 })).ok).toBe(false);
      expect(parseApprovalAction(sendData({ environment: 'staging' })).ok).toBe(false);
      expect(parseApprovalAction(sendData({ environment: 'staging', replicas: 2, extra: true })).ok).toBe(false);
    });
    it('missing values or form are rejected', () => {
      expect(parseApprovalAction({ kind: 'send_data', form: deployForm() }).ok).toBe(false);
      expect(parseApprovalAction({ kind: 'send_data', values: {} }).ok).toBe(false);
    });
    it('a form of exactly 64 KiB passes', () => {
      const form = deployForm();
      const pad = 'x'.repeat(64 * KIB - jsonBytes({ ...form, submitLabel: '' }));
      const big = { ...form, submitLabel: pad };
      expect(jsonBytes(big)).toBe(APPROVAL_LIMITS.formMaxBytes);
      expect(parseApprovalAction(sendData(undefined, big)).ok).toBe(true);
    });
    it('a form one byte over 64 KiB is rejected', () => {
      const form = deployForm();
      const pad = 'x'.repeat(64 * KIB + 1 - jsonBytes({ ...form, submitLabel: '' }));
      const big = { ...form, submitLabel: pad };
      expect(jsonBytes(big)).toBe(APPROVAL_LIMITS.formMaxBytes + 1);
      expect(parseApprovalAction(sendData(undefined, big))).toMatchObject({ ok: false, error: expect.stringMatching(/form/) });
    });
  });

  it('an unknown kind is rejected', () => {
    for (const kind of ['run_tool', 'SEND_MESSAGE', undefined, null, 1]) {
      expect(parseApprovalAction({ kind, text: 'x' }).ok).toBe(false);
    }
  });
  it('hostile actions never throw', () => {
    for (const input of [null, undefined, 'send_message', 7, [], [{ kind: 'send_message', text: 'x' }]]) {
      expect(parseApprovalAction(input).ok).toBe(false);
    }
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(parseApprovalAction({ kind: 'send_message', text: 'x', data: cyclic }).ok).toBe(false);
    expect(parseApprovalAction({ kind: 'send_message', text: 'x', data: { n: 10n } }).ok).toBe(false);
  });
});

describe('findApprovalRequest', () => {
  it('finds a valid part and reports its index', () => {
    const found = findApprovalRequest([{ text: 'Please approve' }, part(baseRequest())]);
    expect(found).toEqual({ partIndex: 1, request: requestOk(baseRequest()) });
  });

  describe('R3 "The whole part may be at most 128 KB of JSON"', () => {
    it('a part of exactly 131072 bytes is accepted', () => {
      const p = objectOfBytes(128 * KIB, { mediaType: MEDIA_TYPE.approvalRequest, data: baseRequest() }, 'padding');
      expect(jsonBytes(p)).toBe(131_072);
      expect(findApprovalRequest([p])?.partIndex).toBe(0);
    });
    it('a part of 131073 bytes is ignored', () => {
      const p = objectOfBytes(128 * KIB + 1, { mediaType: MEDIA_TYPE.approvalRequest, data: baseRequest() }, 'padding');
      expect(jsonBytes(p)).toBe(131_073);
      expect(findApprovalRequest([p])).toBeNull();
    });
    it('padding inside the request data (an unread field) is counted too', () => {
      const build = (bytes: number) => {
        const data = baseRequest({ padding: '' });
        const empty = jsonBytes(part(data));
        return part({ ...data, padding: 'x'.repeat(bytes - empty) });
      };
      expect(jsonBytes(build(131_072))).toBe(131_072);
      expect(findApprovalRequest([build(131_072)])).not.toBeNull();
      expect(jsonBytes(build(131_073))).toBe(131_073);
      expect(findApprovalRequest([build(131_073)])).toBeNull();
    });
  });

  it('R6 "The first valid part in the message wins", skipping an invalid one before it', () => {
    const invalid = part(baseRequest({ title: '' }));
    const first = part(baseRequest({ title: 'First valid' }));
    const second = part(baseRequest({ title: 'Second valid' }));
    const found = findApprovalRequest([invalid, first, second]);
    expect(found?.partIndex).toBe(1);
    expect(found?.request.title).toBe('First valid');
  });

  it('an over-limit part before a valid one is skipped', () => {
    const big = objectOfBytes(128 * KIB + 1, { mediaType: MEDIA_TYPE.approvalRequest, data: baseRequest({ title: 'Too big' }) }, 'padding');
    expect(findApprovalRequest([big, part(baseRequest())])?.partIndex).toBe(1);
  });

  it('parts with another media type are ignored', () => {
    const data = baseRequest();
    expect(findApprovalRequest([part(data, MEDIA_TYPE.json), part(data, MEDIA_TYPE.form), { data }])).toBeNull();
    expect(findApprovalRequest([part(data, 'application/vnd.agent-taskbay.approval-request+json; v=2')])).toBeNull();
    expect(findApprovalRequest([{ data, mimeType: MEDIA_TYPE.approvalRequest }])).toBeNull();
  });

  it('R5 a malformed request is ignored (null), never an error', () => {
    expect(findApprovalRequest([part(baseRequest({ risk: 'urgent' }))])).toBeNull();
    expect(findApprovalRequest([part(null), part([]), part('x')])).toBeNull();
  });

  describe('hostile input never throws', () => {
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
        ownKeys() {
          throw new Error('boom');
        },
        getPrototypeOf() {
          throw new Error('boom');
        },
      },
    );
    const getter = { mediaType: MEDIA_TYPE.approvalRequest } as Record<string, unknown>;
    Object.defineProperty(getter, 'data', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const cyclic: Record<string, unknown> = { mediaType: MEDIA_TYPE.approvalRequest };
    cyclic.data = cyclic;
    const inputs: [string, unknown][] = [
      ['null', null],
      ['undefined', undefined],
      ['a number', 42],
      ['a string', 'parts'],
      ['an object', { 0: part(baseRequest()), length: 1 }],
      ['an array of non-objects', [null, 1, 'x', true, [], undefined]],
      ['a throwing proxy', [throwing]],
      ['a throwing getter', [getter]],
      ['a cyclic part', [cyclic]],
      ['a bigint', [part({ ...baseRequest(), n: 1n })]],
      [
        'a media type inherited through __proto__ (JSON.parse)',
        [JSON.parse(`{"__proto__":{"mediaType":"${MEDIA_TYPE.approvalRequest}"},"data":${JSON.stringify(baseRequest())}}`)],
      ],
    ];
    for (const [name, input] of inputs) {
      it(`${name} gives null`, () => expect(findApprovalRequest(input)).toBeNull());
    }
    it('a valid part after hostile ones is still found', () => {
      expect(findApprovalRequest([throwing, getter, cyclic, null, part(baseRequest())])?.partIndex).toBe(4);
    });
  });
});

describe('applyActionEdit', () => {
  const message: ApprovalAction = { kind: 'send_message', text: 'Approved.', data: { ticket: 7 } };
  const dataAction = parseApprovalAction(sendData());
  if (!dataAction.ok) throw new Error(dataAction.error);
  const formAction = dataAction.action;

  describe('send_message: text and data editable', () => {
    it('replaces the text and keeps data when the edit has no data key', () => {
      expect(applyActionEdit(message, { text: 'Approved, with care.' })).toEqual({
        ok: true,
        action: { kind: 'send_message', text: 'Approved, with care.', data: { ticket: 7 } },
      });
    });
    it('replaces data, or removes it with null', () => {
      expect(applyActionEdit(message, { kind: 'send_message', text: 'x', data: { ticket: 8 } })).toEqual({
        ok: true,
        action: { kind: 'send_message', text: 'x', data: { ticket: 8 } },
      });
      expect(applyActionEdit(message, { text: 'x', data: null })).toEqual({ ok: true, action: { kind: 'send_message', text: 'x' } });
    });
    it('refuses a kind change', () => {
      expect(applyActionEdit(message, { kind: 'send_data', form: deployForm(), values: { environment: 'staging', replicas: 2 } })).toMatchObject({
        ok: false,
        error: expect.stringMatching(/kind/),
      });
    });
    it('applies the same limits: text 1..20000, data at most 64 KiB', () => {
      expect(applyActionEdit(message, { text: '' }).ok).toBe(false);
      expect(applyActionEdit(message, {}).ok).toBe(false);
      expect(applyActionEdit(message, { text: 'a'.repeat(20_000) }).ok).toBe(true);
      expect(applyActionEdit(message, { text: 'a'.repeat(20_001) }).ok).toBe(false);
      expect(applyActionEdit(message, { text: 'x', data: objectOfBytes(64 * KIB) }).ok).toBe(true);
      expect(applyActionEdit(message, { text: 'x', data: objectOfBytes(64 * KIB + 1) }).ok).toBe(false);
      expect(applyActionEdit(message, { text: 'x', data: [1] }).ok).toBe(false);
    });
  });

  describe('send_data: only values editable, validated against the original form', () => {
    it('accepts new values valid against the original form', () => {
      const r = applyActionEdit(formAction, { values: { environment: 'production', replicas: 3 } });
      expect(r).toEqual({
        ok: true,
        action: { kind: 'send_data', form: formAction.kind === 'send_data' ? formAction.form : null, values: { environment: 'production', replicas: 3 } },
      });
    });
    it('rejects values invalid against the original form', () => {
      expect(applyActionEdit(formAction, { values: { environment: 'production', replicas: 0 } }).ok).toBe(false);
      expect(applyActionEdit(formAction, { values: { environment: 'qa', replicas: 1 } }).ok).toBe(false);
      expect(applyActionEdit(formAction, { values: { environment: 'staging', replicas: 1, extra: 'x' } }).ok).toBe(false);
      expect(applyActionEdit(formAction, { values: { environment: 'staging', replicas: '1' } }).ok).toBe(false);
      expect(applyActionEdit(formAction, {}).ok).toBe(false);
    });
    it('accepts a full action whose form is deep-equal (key order aside)', () => {
      const original = deployForm();
      const reordered = { schema: original.schema, order: original.order, title: original.title };
      expect(applyActionEdit(formAction, { kind: 'send_data', form: reordered, values: { environment: 'staging', replicas: 5 } }).ok).toBe(true);
    });
    it('refuses a changed form even when the values are valid against the new form', () => {
      const changed = deployForm();
      (changed.schema as { properties: Record<string, { maximum?: number }> }).properties.replicas!.maximum = 100;
      const r = applyActionEdit(formAction, { kind: 'send_data', form: changed, values: { environment: 'staging', replicas: 50 } });
      expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/form/) });
      const retitled = { ...deployForm(), title: 'Other' };
      expect(applyActionEdit(formAction, { form: retitled, values: { environment: 'staging', replicas: 2 } }).ok).toBe(false);
    });
    it('refuses a kind change', () => {
      expect(applyActionEdit(formAction, { kind: 'send_message', text: 'hi' })).toMatchObject({ ok: false, error: expect.stringMatching(/kind/) });
    });
  });

  it('hostile edits never throw', () => {
    for (const edit of [null, undefined, 3, 'x', [], JSON.parse('{"__proto__":{"text":"x"}}')]) {
      expect(applyActionEdit(message, edit).ok).toBe(false);
      expect(applyActionEdit(formAction, edit).ok).toBe(false);
    }
  });
});
