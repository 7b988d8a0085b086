import { describe, expect, it } from 'vitest';
import { textLine } from '../../src/log.js';
import { secretChannel } from '../../src/startup-output.js';

// Issue 26, item 7: the log lines as a terminal shows them (log.ts textLine), and where the
// one-time sign-in link goes (startup-output.ts secretChannel); the whole start-up output is
// runtime/startup-output.test.ts.

const line = (entry: Record<string, unknown>) => `${JSON.stringify({ level: 'info', time: '2026-12-07T10:11:12.000Z', pid: 1, hostname: 'h', ...entry })}\n`;

describe('a log line on a terminal', () => {
  it('reads as local time, level, message, then the fields; an error stack indented below', () => {
    const at = new Date('2026-12-07T10:11:12.000Z').toTimeString().slice(0, 8);
    expect(textLine(line({ msg: 'delivered', approvalId: 'a-1', attempts: 2, note: 'two words' }))).toBe(
      `${at} INFO  delivered  approvalId=a-1 attempts=2 note="two words"\n`,
    );
    expect(textLine(line({ level: 'error', msg: 'failed', err: 'Error: boom\n    at f (x.ts:1)' }))).toBe(
      `${at} ERROR failed\n    Error: boom\n        at f (x.ts:1)\n`,
    );
  });

  it("shows an agent's control characters as escapes: they cannot move the cursor, recolour the terminal or forge a line", () => {
    const text = textLine(line({ msg: 'agent said \u001b[2J\u001b]0;pwned\u0007 hi\nFAKE line\u009b', field: 'x\u001by' }));
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text.split('\n')).toHaveLength(2); // one line and the final newline
    expect(text).toContain('agent said \\u001b[2J\\u001b]0;pwned\\u0007 hi\\u000aFAKE line\\u009b');
    expect(text).toContain('field="x\\u001by"');
  });

  it('passes a line that is not JSON unchanged', () => {
    expect(textLine('plain\n')).toBe('plain\n');
  });
});

describe('where the one-time sign-in link goes', () => {
  const tty = { stdoutIsTty: true, stderrIsTty: true };
  const piped = { stdoutIsTty: false, stderrIsTty: false };
  it('the terminal showing text; else stderr when only stdout is collected; else the file', () => {
    expect(secretChannel({ format: 'text', asked: 'auto', ...tty })).toBe('stdout');
    expect(secretChannel({ format: 'json', asked: 'auto', stdoutIsTty: false, stderrIsTty: true })).toBe('stderr');
    expect(secretChannel({ format: 'text', asked: 'text', stdoutIsTty: false, stderrIsTty: true })).toBe('stderr');
    expect(secretChannel({ format: 'json', asked: 'auto', ...piped })).toBe('file');
    expect(secretChannel({ format: 'text', asked: 'text', ...piped })).toBe('file');
  });

  it('never stdout or stderr when JSON was asked for: the output is collected, even from a terminal', () => {
    expect(secretChannel({ format: 'json', asked: 'json', ...tty })).toBe('file');
    expect(secretChannel({ format: 'json', asked: 'json', stdoutIsTty: false, stderrIsTty: true })).toBe('file');
  });
});
