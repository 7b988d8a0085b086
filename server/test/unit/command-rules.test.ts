import { describe, expect, it } from 'vitest';
import { approvalRequestEnvelope, exactContentIsCommands, parseSealedPayload, pythonSplit, scopeOf, t3BlockedDenial } from '../../src/commands/rules.js';

// Seed 002's rules as plain functions: command.split()[0], a COMMAND_SET's exact_content, the
// hook's field names, the APPROVAL_REQUEST envelope and the [T3_BLOCKED] denial.

const contract = {
  operation: 'MUTATIVE command intercepted: git',
  exact_content: 'git push origin main',
  scope: 'git',
  risk_level: 'high',
  rollback: null,
  rationale: 'publishes the branch',
  verification: 'git ls-remote origin main',
};

describe('scope is `command.split()[0]` (Python semantics)', () => {
  it('splits at every character Python calls whitespace, and only there', () => {
    // Python: '\tgit\x1fpush\x85origin\u3000main  '.split() == ['git', 'push', 'origin', 'main']
    expect(pythonSplit('\tgit\x1fpush\x85origin\u3000main  ')).toEqual(['git', 'push', 'origin', 'main']);
    // U+FEFF is \s in JavaScript but not whitespace for Python's str.split().
    expect(pythonSplit('git\ufeffpush')).toEqual(['git\ufeffpush']);
    expect(scopeOf(`'my tool' --flag`)).toBe(`'my`);
    expect(scopeOf(' \n\t')).toBeNull();
  });
});

describe("a COMMAND_SET's exact_content is exactly its commands", () => {
  it('accepts the commands in order joined by a chain operator, with blanks around', () => {
    for (const exact of ['a 1 && b 2', 'a 1;b 2', '  a 1 ||  b 2 ', 'a 1 | b 2', 'a 1 & b 2', 'a 1\nb 2', 'a 1 &&\n  b 2']) {
      expect(exactContentIsCommands(exact, ['a 1', 'b 2']), JSON.stringify(exact)).toBe(true);
    }
    expect(exactContentIsCommands('x && y && z', ['x', 'y', 'z'])).toBe(true);
  });

  it('refuses another order, extra or missing content, or no operator between them', () => {
    for (const exact of ['b 2 && a 1', 'a 1 && b 2 && c', 'a 1 b 2', 'a 1 && b 22', 'rm -rf / ; a 1 && b 2', 'a 1 && && b 2', 'a 1 &&& b 2']) {
      expect(exactContentIsCommands(exact, ['a 1', 'b 2']), JSON.stringify(exact)).toBe(false);
    }
  });
});

describe('"`rollback_hint` in the hook becomes `rollback` in the contract"', () => {
  it("maps the hook's names to the contract's; verification may come from the contract level", () => {
    const { rollback: _r, verification, ...hook } = contract;
    const parsed = parseSealedPayload({ ...hook, rollback_hint: null }, { verification });
    expect(parsed).toEqual({ ok: true, value: contract });
    expect(parseSealedPayload({ ...contract, rollback_hint: null }).ok).toBe(false);
    expect(parseSealedPayload({ ...hook, rollback_hint: 'git push --delete' }, { verification }).ok).toBe(false);
    expect(parseSealedPayload(contract, { verification }).ok).toBe(false);
    expect(parseSealedPayload({ ...contract, scope: 'push' }).ok).toBe(false);
  });
});

describe('the APPROVAL_REQUEST envelope and the [T3_BLOCKED] denial', () => {
  const envelope = approvalRequestEnvelope({
    approvalId: 'P-b1bdfbb0b9474bf5b3f86b1f6a213f7a',
    agentId: 'a1b2c3d4e5',
    commands: [contract.exact_content],
    payload: contract as never,
  });

  it("has the seed's keys in the seed's order", () => {
    expect(envelope).toEqual({
      agent_status: {
        agent_state: 'APPROVAL_REQUEST',
        agent_id: 'a1b2c3d4e5',
        pending_steps: ['run after approval P-b1bdfbb0: git push origin main'],
        next_action: 'awaiting user approval',
      },
      approval_request: { ...contract, approval_id: 'P-b1bdfbb0b9474bf5b3f86b1f6a213f7a' },
    });
    expect(Object.keys(envelope.approval_request)).toEqual([...Object.keys(contract), 'approval_id']);
  });

  it('the denial starts with [T3_BLOCKED], names the approval_id and the nonce label, and carries the envelope as JSON', () => {
    const text = t3BlockedDenial(envelope);
    expect(text.startsWith('[T3_BLOCKED] ')).toBe(true);
    expect(text).toContain('\napproval_id: P-b1bdfbb0b9474bf5b3f86b1f6a213f7a\n');
    expect(text).toContain('Approve [P-b1bdfbb0]');
    const json = /```json\n([\s\S]*)\n```\n$/.exec(text)![1]!;
    expect(JSON.parse(json)).toEqual(envelope);
  });
});
