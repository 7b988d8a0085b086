import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, OPS, startTestInstance, type TestInstance, ok } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// Seed 002 ("agent-approval-protocol") clauses a hook author builds against, through the REST
// surface a hook uses: approvals are single-session, the hook's field names are accepted, the
// APPROVAL_REQUEST envelope comes back, a COMMAND_SET's exact_content is its commands, and
// `scope` is `exact_content.split()[0]`. Each test quotes the clause it checks.

let t: TestInstance;
let hook: { id: string; email: string; token: string };

const api = (method: string, path: string, body?: unknown, token: string | null = hook.token) => rest(t, token, method, path, body);

const unique = () => randomBytes(3).toString('hex');

/** The contract-named sealed payload (seven fields). */
const contractPayload = (command: string, over: Record<string, unknown> = {}) =>
  sealedPayload(command, { rationale: 'deploys to production', verification: 'curl -f https://example.test/health', ...over });

/** The seven contract fields, picked by name: what the fingerprint is computed over. */
const FINGERPRINTED = ['operation', 'exact_content', 'scope', 'risk_level', 'rollback', 'rationale', 'verification'] as const;
const fingerprintOf = (p: Record<string, unknown>) => sha256(canon(Object.fromEntries(FINGERPRINTED.map((k) => [k, p[k]]))));

const ask = (body: Record<string, unknown>, token?: string) => api('POST', '/api/command-approvals', body, token);

beforeAll(async () => {
  t = await startTestInstance();
  hook = await createMember(t);
});

afterAll(async () => {
  await t?.stop();
});

describe('"Approvals are in-loop and single-session" (a COMMAND_SET id is content-derived)', () => {
  it("the same set from another agent_id of the same person is refused (APPROVAL_ID_USED), not handed the first session's request", async () => {
    const commands = ['make build', `make deploy ENV=${unique()}`];
    const exact = commands.join(' && ');
    const first = await ask({ agent_id: 'a1111111', payload: contractPayload(exact), commands });
    expect(first.status, JSON.stringify(first.json)).toBe(201);
    // The same session asking again is the same request (one REQUESTED per approval_id).
    const again = await ask({ agent_id: 'a1111111', payload: contractPayload(exact), commands });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ approval_id: first.json.approval_id, created: false });

    const other = await ask({ agent_id: 'a2222222', payload: contractPayload(exact, { rationale: 'the other session' }), commands });
    expect(other.status, JSON.stringify(other.json)).toBe(400);
    expect(other.json).toMatchObject({ error: 'BAD_USER_INPUT', reason: 'APPROVAL_ID_USED' });
    expect(other.json.message).toMatch(/single-session/);
    // Nothing of the first request reached the other session, and nothing new was stored.
    expect(other.json.payload).toBeUndefined();
    const rows = await t.sql(`select agent_id, payload->>'rationale' as rationale from command_approval where approval_id = $1`, [first.json.approval_id]);
    expect(rows).toEqual([{ agent_id: 'a1111111', rationale: 'deploys to production' }]);
  });

  it('the same session asking the same set with another sealed payload is refused: its payload would be dropped', async () => {
    const commands = ['make build', `make deploy ENV=${unique()}`];
    const exact = commands.join(' && ');
    const first = await ask({ agent_id: 'a3333333', payload: contractPayload(exact), commands });
    expect(first.status).toBe(201);
    const changed = await ask({ agent_id: 'a3333333', payload: contractPayload(exact, { risk_level: 'medium' }), commands });
    expect(changed.status, JSON.stringify(changed.json)).toBe(400);
    expect(changed.json).toMatchObject({ error: 'BAD_USER_INPUT', reason: 'APPROVAL_ID_USED' });
  });

  it('consuming a grant from another session (agent_id) of the same person is refused and leaves the grant PENDING', async () => {
    const command = `git push origin main # ${unique()}`;
    const a = (await ask({ agent_id: 'a4444444', payload: contractPayload(command) })).json;
    ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
    const wrong = await api('POST', `/api/command-approvals/${a.approval_id}/consume`, { agent_id: 'a5555555' });
    expect(wrong.status, JSON.stringify(wrong.json)).toBe(403);
    expect(wrong.json).toMatchObject({ error: 'FORBIDDEN', reason: 'OTHER_SESSION' });
    expect((await api('GET', `/api/command-approvals/${a.approval_id}`)).json.grant.status).toBe('PENDING');
    const right = await api('POST', `/api/command-approvals/${a.approval_id}/consume`, { agent_id: 'a4444444' });
    expect(right.status).toBe(200);
    expect(right.json.grant.status).toBe('CONSUMED');
  });
});

describe("resume: the re-run of a blocked single command finds its own session's live request", () => {
  it('with resume the same session, command and payload get the live request back; anything else gets a new P-{uuid4}', async () => {
    const command = `git push origin main # ${unique()}`;
    const first = await ask({ agent_id: 'a1212121', payload: contractPayload(command), resume: true });
    expect(first.status).toBe(201);
    const again = await ask({ agent_id: 'a1212121', payload: contractPayload(command), resume: true });
    expect(again).toMatchObject({ status: 200, json: { approval_id: first.json.approval_id, created: false } });
    // Without resume, another session, or another sealed payload: a new request.
    const created: string[] = [];
    for (const body of [
      { agent_id: 'a1212121', payload: contractPayload(command) },
      { agent_id: 'a3434343', payload: contractPayload(command), resume: true },
      { agent_id: 'a1212121', payload: contractPayload(command, { risk_level: 'medium' }), resume: true },
    ]) {
      const r = await ask(body);
      expect(r.status, JSON.stringify(body)).toBe(201);
      expect(r.json.approval_id).not.toBe(first.json.approval_id);
      created.push(r.json.approval_id);
    }
    // Approved with an unused grant it comes first (the re-run runs); once consumed it is not
    // live, and the session's newest pending request for the same command is the one.
    const a = first.json;
    ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
    expect((await ask({ agent_id: 'a1212121', payload: contractPayload(command), resume: true })).json).toMatchObject({
      approval_id: a.approval_id,
      grant: { status: 'PENDING' },
    });
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/consume`, { agent_id: 'a1212121' })).status).toBe(200);
    const after = await ask({ agent_id: 'a1212121', payload: contractPayload(command), resume: true });
    expect(after).toMatchObject({ status: 200, json: { approval_id: created[0], created: false } });
    expect((await ask({ agent_id: 'a1212121', payload: contractPayload(command), resume: 'yes' })).status).toBe(400);
  });
});

describe('"Note the key rename: `rollback_hint` in the hook becomes `rollback` in the contract"', () => {
  it('a hook-shaped payload (rollback_hint, verification at the contract level) is accepted and stored under the contract names', async () => {
    const command = `terraform apply -auto-approve # ${unique()}`;
    const { rollback: _r, verification, ...rest } = contractPayload(command);
    const hookShaped = { ...rest, rollback_hint: null };
    const r = await ask({ agent_id: 'a6666666', payload: hookShaped, verification });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json.payload).toEqual(contractPayload(command));
    expect(Object.keys(r.json.payload)).not.toContain('rollback_hint');
    // The fingerprint covers exactly the seven contract-named fields, whatever names the hook used.
    expect(r.json.fingerprint).toBe(fingerprintOf(contractPayload(command)));
    const contractShaped = await ask({ agent_id: 'a6666667', payload: contractPayload(command) });
    expect(contractShaped.json.fingerprint).toBe(r.json.fingerprint);
    // Not covered: commands, agent_id, approval_id (the approval's digest binds those).
    expect(contractShaped.json.approval_id).not.toBe(r.json.approval_id);
  });

  it('a hook payload may carry verification itself; rollback_hint must be null; ambiguous or missing names are refused', async () => {
    const command = `kubectl delete ns staging-${unique()}`;
    const { rollback: _r, ...rest } = contractPayload(command);
    expect((await ask({ agent_id: 'a7777777', payload: { ...rest, rollback_hint: null } })).status).toBe(201);
    const refusals: [string, Record<string, unknown>][] = [
      ['rollback_hint set', { agent_id: 'a7777777', payload: { ...rest, rollback_hint: 'kubectl create ns staging' } }],
      ['rollback and rollback_hint', { agent_id: 'a7777777', payload: { ...rest, rollback: null, rollback_hint: null } }],
      ['no verification anywhere', { agent_id: 'a7777777', payload: { ...contractPayload(command), verification: undefined } }],
      ['verification twice', { agent_id: 'a7777777', payload: contractPayload(command), verification: 'again' }],
    ];
    for (const [name, body] of refusals) {
      const r = await ask(body);
      expect(r.status, `${name}: ${JSON.stringify(r.json)}`).toBe(400);
      expect(r.json.error, name).toBe('BAD_USER_INPUT');
    }
  });
});

describe('"APPROVAL_REQUEST contract shape": the envelope the agent relays verbatim', () => {
  it('POST and GET return agent_status (agent_state, agent_id, pending_steps, next_action) and approval_request with its eight fields', async () => {
    const command = `git push --force origin main # ${unique()}`;
    const r = await ask({ agent_id: 'a8888888', payload: contractPayload(command) });
    expect(r.status).toBe(201);
    const expected = {
      agent_status: {
        agent_state: 'APPROVAL_REQUEST',
        agent_id: 'a8888888',
        pending_steps: [expect.stringContaining(command)],
        next_action: 'awaiting user approval',
      },
      approval_request: {
        operation: 'MUTATIVE command intercepted: git',
        exact_content: command,
        scope: 'git',
        risk_level: 'high',
        rollback: null,
        rationale: 'deploys to production',
        verification: 'curl -f https://example.test/health',
        approval_id: r.json.approval_id,
      },
    };
    expect(r.json.envelope).toEqual(expected);
    expect(Object.keys(r.json.envelope)).toEqual(['agent_status', 'approval_request']);
    expect(Object.keys(r.json.envelope.agent_status)).toEqual(['agent_state', 'agent_id', 'pending_steps', 'next_action']);
    expect(Object.keys(r.json.envelope.approval_request)).toEqual([
      'operation',
      'exact_content',
      'scope',
      'risk_level',
      'rollback',
      'rationale',
      'verification',
      'approval_id',
    ]);
    const got = await api('GET', `/api/command-approvals/${r.json.approval_id}`);
    expect(got.json.envelope).toEqual(r.json.envelope);
  });

  it('a COMMAND_SET: one pending step per command, its content-derived approval_id in approval_request', async () => {
    const commands = ['npm run build', `npm publish --tag t${unique()}`];
    const r = await ask({ agent_id: 'a9999999', payload: contractPayload(commands.join(' && ')), commands });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json.envelope.agent_status.pending_steps).toHaveLength(2);
    for (const [i, c] of commands.entries()) expect(r.json.envelope.agent_status.pending_steps[i]).toContain(c);
    expect(r.json.envelope.approval_request.approval_id).toBe(`P-${sha256(JSON.stringify(commands)).slice(0, 32)}`);
  });
});

describe("a COMMAND_SET's exact_content is its commands; scope is `command.split()[0]`", () => {
  it('exact_content must be the commands in order, joined by shell chain operators; anything else is refused', async () => {
    const tag = unique();
    const joinings = ['&&', ';', '\n', '||', '|'];
    for (const [i, op] of joinings.entries()) {
      const commands = [`make clean-${tag}-${i}`, 'make deploy'];
      const r = await ask({ agent_id: 'a0a0a0a0', payload: contractPayload(`${commands[0]} ${op} ${commands[1]}`), commands });
      expect(r.status, `${op}: ${JSON.stringify(r.json)}`).toBe(201);
    }
    const commands = [`make clean-${tag}`, 'make deploy'];
    for (const exact of [
      'rm -rf / && make deploy',
      `make deploy && make clean-${tag}`,
      `make clean-${tag} && make deploy && rm -rf /`,
      `make clean-${tag} make deploy`,
    ]) {
      const r = await ask({ agent_id: 'a0a0a0a0', payload: contractPayload(exact), commands });
      expect(r.status, `${exact}: ${JSON.stringify(r.json)}`).toBe(400);
      expect(r.json.error).toBe('BAD_USER_INPUT');
      expect(r.json.message).toMatch(/exact_content/);
    }
  });

  it('scope must be the first whitespace-separated token of exact_content', async () => {
    const command = `git push origin main # ${unique()}`;
    expect((await ask({ agent_id: 'a0b0b0b0', payload: contractPayload(command, { scope: 'push' }) })).status).toBe(400);
    expect((await ask({ agent_id: 'a0b0b0b0', payload: contractPayload(command, { scope: 'origin' }) })).status).toBe(400);
    // Python's str.split() also splits at U+001F and U+3000 (JavaScript's \s does not know U+001F).
    const tabbed = `\tgit\u001fpush\u3000origin # ${unique()}`;
    const r = await ask({ agent_id: 'a0b0b0b0', payload: contractPayload(tabbed, { scope: 'git' }) });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
  });
});
