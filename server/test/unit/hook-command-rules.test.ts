import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_LIMITS } from '../../src/limits.js';
import { hostReply } from '../../src/hooks/contracts.js';
import { checkedCommandRules, compileCommandCondition, decideCommand, loadRules, type CommandFacts, type CommandRule } from '../../src/hooks/rules.js';
import { COMMAND_RULE_LIMITS, CONDITION_LIMITS } from '../../src/limits.js';

// A tenant's command rules (hooks/rules.ts): CEL as policy conditions, over a tool call; the
// first match decides, a rule that fails makes the strictest outcome apply, and the save refuses
// what the policy conditions refuse (and what the rules together could cost).

const SAMPLE: CommandRule[] = JSON.parse(readFileSync(new URL('../../../docs/samples/command-rules.json', import.meta.url), 'utf8'));

const call = (command: string, over: Partial<CommandFacts> = {}): CommandFacts => ({
  command,
  scope: command.split(/\s+/)[0] ?? '',
  tool: 'Bash',
  host: 'claude-code',
  event: 'PreToolUse',
  cwd: '/home/u/project',
  permissionMode: 'default',
  agent: { id: 'a0123456789abcdef', type: '' },
  ...over,
});

const decide = (rules: CommandRule[], facts: CommandFacts, fallback: 'ASK' | 'ALLOW' = 'ASK') =>
  decideCommand(loadRules(checkedCommandRules(rules)), facts, fallback);

describe('docs/samples/command-rules.json', () => {
  it('is accepted as saved, and decides as it says', () => {
    expect(checkedCommandRules(SAMPLE)).toEqual(SAMPLE);
    expect(decide(SAMPLE, call('sudo echo hi'))).toMatchObject({ outcome: 'DENY', rule: 1, reason: SAMPLE[0]!.reason });
    expect(decide(SAMPLE, call('rm -rf /'))).toMatchObject({ outcome: 'DENY', rule: 1 });
    expect(decide(SAMPLE, call('ls -la'))).toMatchObject({ outcome: 'ALLOW', rule: 2 });
    expect(decide(SAMPLE, call('cat notes.txt'))).toMatchObject({ outcome: 'ALLOW', rule: 2 });
    expect(decide(SAMPLE, call('git status'))).toMatchObject({ outcome: 'ALLOW', rule: 3 });
    expect(decide(SAMPLE, call('git log --oneline'))).toMatchObject({ outcome: 'ALLOW', rule: 3 });
    // A read-only first word with a shell operator is not read-only.
    for (const c of ['ls; rm -rf build', 'cat x | sh', 'ls > out', 'cat $(echo x)', 'ls `rm x`', 'ls\nrm x', 'git status && git push']) {
      expect(decide(SAMPLE, call(c)), c).toMatchObject({ outcome: 'ASK', rule: 4 });
    }
    expect(decide(SAMPLE, call('git push --force'))).toMatchObject({ outcome: 'ASK', rule: 4 });
    // Another tool: no rule of the sample matches it; the fallback (no opinion) decides.
    expect(decide(SAMPLE, call('', { tool: 'Write', scope: '' }), 'ALLOW')).toEqual({ outcome: 'ALLOW', rule: null, reason: null, failed: [] });
  });
});

describe('deciding', () => {
  it('the first match wins; none matching, the fallback decides', () => {
    const rules: CommandRule[] = [
      { condition: 'scope == "make"', outcome: 'ALLOW', reason: null },
      { condition: 'command.startsWith("make")', outcome: 'DENY', reason: 'never' },
    ];
    expect(decide(rules, call('make test'))).toMatchObject({ outcome: 'ALLOW', rule: 1 });
    expect(decide(rules, call('makefile-tool'))).toMatchObject({ outcome: 'DENY', rule: 2, reason: 'never' });
    expect(decide(rules, call('npm test'))).toEqual({ outcome: 'ASK', rule: null, reason: null, failed: [] });
    expect(decide([{ condition: '', outcome: 'DENY', reason: 'all' }], call('ls'))).toMatchObject({ outcome: 'DENY', rule: 1 });
  });

  it('every variable is there: host, event, cwd, permissionMode, agent.id, agent.type', () => {
    const rules: CommandRule[] = [
      { condition: 'host == "codex" && event == "PermissionRequest"', outcome: 'DENY', reason: 'a' },
      { condition: 'cwd.startsWith("/srv/prod")', outcome: 'DENY', reason: 'b' },
      { condition: 'permissionMode == "bypassPermissions"', outcome: 'DENY', reason: 'c' },
      { condition: 'agent.type == "Explore" || agent.id == "a0000000000"', outcome: 'DENY', reason: 'd' },
    ];
    expect(decide(rules, call('ls', { host: 'codex', event: 'PermissionRequest' })).reason).toBe('a');
    expect(decide(rules, call('ls', { cwd: '/srv/prod/app' })).reason).toBe('b');
    expect(decide(rules, call('ls', { permissionMode: 'bypassPermissions' })).reason).toBe('c');
    expect(decide(rules, call('ls', { agent: { id: 'a1', type: 'Explore' } })).reason).toBe('d');
    expect(decide(rules, call('ls')).outcome).toBe('ASK');
  });

  it('a rule that fails does not stop the search, and the strictest outcome of the failed rules and the decision applies', () => {
    const failingAllow: CommandRule = { condition: 'int(scope) > 3', outcome: 'ALLOW', reason: null };
    const failingDeny: CommandRule = { condition: 'int(scope) > 3', outcome: 'DENY', reason: 'fails' };
    const allowLs: CommandRule = { condition: 'scope == "ls"', outcome: 'ALLOW', reason: null };
    // A failed ALLOW is not stricter than what comes after.
    expect(decide([failingAllow, allowLs], call('ls'))).toMatchObject({ outcome: 'ALLOW', rule: 2, failed: [{ rule: 1 }] });
    // A failed DENY is: nobody knows it was not meant to apply.
    expect(decide([failingDeny, allowLs], call('ls'))).toMatchObject({ outcome: 'DENY', rule: 1, reason: 'fails', failed: [{ rule: 1 }] });
    expect(decide([failingDeny], call('ls'))).toMatchObject({ outcome: 'DENY', rule: 1 });
    // A stored condition that no longer compiles fails closed too.
    const stored = loadRules([{ condition: 'command.matches("x")', outcome: 'DENY', reason: 'old' }, allowLs]);
    expect(stored[0]!.condition).toBeUndefined();
    expect(decideCommand(stored, call('ls'), 'ASK')).toMatchObject({
      outcome: 'DENY',
      rule: 1,
      failed: [{ rule: 1, error: expect.stringContaining('does not compile') }],
    });
  });

  it('a command longer than a condition is evaluated on fails closed for the rules that read it', () => {
    const long = `ls ${'x'.repeat(COMMAND_LIMITS.commandMaxChars)}`;
    expect(decide([{ condition: 'command.contains("ls")', outcome: 'ALLOW', reason: null }], call(long))).toMatchObject({
      outcome: 'ASK',
      rule: null,
      failed: [{ rule: 1, error: expect.stringContaining('longer than') }],
    });
  });
});

describe('saving', () => {
  it('refuses what policy conditions refuse, naming the rule and field', () => {
    const bad = (rules: unknown, message: RegExp) => expect(() => checkedCommandRules(rules)).toThrow(message);
    bad({}, /rules must be a list/);
    bad([{ condition: 'command.matches("rm .*")', outcome: 'DENY' }], /rules\[0\]\.condition: regular expressions/);
    bad([{ condition: 'ls', outcome: 'DENY' }], /rules\[0\]\.condition: .*ls/);
    bad([{ condition: 'text.contains("x")', outcome: 'DENY' }], /rules\[0\]\.condition/);
    bad([{ condition: 'command', outcome: 'DENY' }], /must be true or false/);
    bad([{ condition: 'command.split(" ").exists(w, ["a"].exists(c, w == c))', outcome: 'ASK' }], /inside another list macro/);
    bad([{ condition: 'true', outcome: 'MAYBE' }], /rules\[0\]\.outcome must be one of ASK, ALLOW, DENY/);
    bad([{ condition: 'true', outcome: 'ASK', reason: 'x'.repeat(COMMAND_RULE_LIMITS.reasonMaxChars + 1) }], /reason is longer than/);
    bad([{ condition: 'true', outcome: 'ASK', why: 'x' }], /fields a command rule does not have: why/);
    bad(
      Array.from({ length: COMMAND_RULE_LIMITS.rulesMax + 1 }, () => ({ condition: 'true', outcome: 'ASK' })),
      new RegExp(`at most ${COMMAND_RULE_LIMITS.rulesMax}`),
    );
  });

  it('refuses rules that together could cost more than one call may spend', () => {
    const heavy = '["a", "b", "c", "d", "e", "f", "g", "h"].exists(c, command.lowerAscii().contains(c))';
    const cost = compileCommandCondition(heavy)!.cost.work;
    const n = Math.floor(CONDITION_LIMITS.workMax / cost) + 1;
    expect(n).toBeLessThanOrEqual(COMMAND_RULE_LIMITS.rulesMax);
    const rules = Array.from({ length: n }, () => ({ condition: heavy, outcome: 'ASK', reason: null }));
    expect(() => checkedCommandRules(rules.slice(0, n - 1))).not.toThrow();
    expect(() => checkedCommandRules(rules)).toThrow(/the rules together could cost/);
  });
});

describe("the hosts' answers (contracts.ts)", () => {
  it('deny: PreToolUse is JSON and exit 2 with the reason on stderr; PermissionRequest is the JSON decision at exit 0; never an empty reason', () => {
    for (const host of ['claude-code', 'codex'] as const) {
      const pre = hostReply(host, 'PreToolUse', { kind: 'deny', reason: 'no' });
      expect(pre).toEqual({
        exitCode: 2,
        stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' } })}\n`,
        stderr: 'no\n',
      });
      const permission = hostReply(host, 'PermissionRequest', { kind: 'deny', reason: ' ' });
      expect(permission.exitCode).toBe(0);
      expect(JSON.parse(permission.stdout).hookSpecificOutput.decision).toEqual({ behavior: 'deny', message: 'Taskbay blocked this tool call' });
      expect(hostReply(host, 'PostToolUse', { kind: 'deny', reason: 'x' })).toEqual({ exitCode: 2, stdout: '', stderr: 'x\n' });
      expect(hostReply(host, 'Stop', { kind: 'deny', reason: 'x' }).exitCode).toBe(2);
      expect(hostReply(host, 'PreToolUse', { kind: 'none' })).toEqual({ exitCode: 0, stdout: '', stderr: '' });
      // An allow is only ever PreToolUse (with the whole input) or a PermissionRequest decision.
      expect(hostReply(host, 'PostToolUse', { kind: 'allow', reason: 'r', updatedInput: {} }).exitCode).toBe(2);
    }
  });
});
