import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { actionPreview, actionText, clip } from '../render/action-text';
import { ConfirmDecision, typedConfirms } from './ConfirmDecision';

// Issue 26, item 1: a confirmation shows the exact action next to the digest (clipped, with a way
// to see all); a pasted whole digest confirms where its first characters are asked; a request
// that changed under the confirmation is said in place and confirms nothing. Rendered with
// react-dom/server (the browser scenarios are server/test/e2e/reviewer-day.e2e.ts).

const DIGEST = `${'ab12cd'.repeat(10)}ef01`;
const noop = () => {};
const confirm = (over: Partial<Parameters<typeof ConfirmDecision>[0]> = {}) =>
  renderToStaticMarkup(
    <ConfirmDecision
      kind="approve"
      title="Deploy"
      risk="CRITICAL"
      revision={3}
      digest={DIGEST}
      action={{ kind: 'send_message', text: 'Deploy 1.5.' }}
      reason=""
      onReason={noop}
      onConfirm={noop}
      onCancel={noop}
      {...over}
    />,
  );

describe('the digest typed to confirm', () => {
  it('accepts its first six characters, any longer start of it and the whole digest pasted (case and surrounding space aside)', () => {
    for (const typed of [DIGEST.slice(0, 6), DIGEST.slice(0, 20), DIGEST, ` ${DIGEST.toUpperCase()}\n`]) expect(typedConfirms(typed, DIGEST), typed).toBe(true);
  });

  it('refuses fewer than six characters, anything else, and the digest with more after it', () => {
    for (const typed of ['', DIGEST.slice(0, 5), '000000', `${DIGEST}0`, DIGEST.slice(1)]) expect(typedConfirms(typed, DIGEST), typed).toBe(false);
  });
});

describe('the action in a confirmation', () => {
  it('is the entry after the digest, whole when short', () => {
    const out = confirm();
    expect(out).toMatch(
      /<dt>Digest<\/dt><dd>.*?<\/dd><dt>Action<\/dt><dd><pre [^>]*data-testid="confirm-action"[^>]*>Send this message to the agent:\nDeploy 1.5.<\/pre><\/dd>/s,
    );
    expect(out).not.toContain('Show all');
  });

  it('is clipped when long, with a button to see all of it', () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
    const out = confirm({ action: { kind: 'send_message', text } });
    expect(out).toContain('data-clipped="true"');
    expect(out).toContain('line 7…</pre>');
    expect(out).not.toContain('line 8');
    expect(out).toContain('Show all of the action (31 lines)');
  });

  it('when the request changed: says so, disables the decision and offers Close', () => {
    const out = confirm({ risk: 'LOW', changed: 'This request expired while you were confirming. Nothing was decided.' });
    expect(out).toContain('role="alert" data-testid="confirm-changed">This request expired while you were confirming. Nothing was decided.</div>');
    expect(out).toMatch(/<button type="button" class="approve approve-low" disabled="">Approve revision 3<\/button>/);
    expect(out).toContain('>Close</button>');
  });

  it('while offline: the decision disabled, the reason beside it', () => {
    const out = confirm({ risk: 'LOW', blocked: 'You are offline.' });
    expect(out).toMatch(/<button type="button" class="approve approve-low" disabled="" aria-describedby="[^"]+-blocked">Approve revision 3<\/button>/);
    expect(out).toContain('data-testid="confirm-blocked">You are offline.</p>');
  });
});

describe('the action as text', () => {
  it('says what each kind does and keeps text and data verbatim', () => {
    expect(actionText({ kind: 'send_message', text: 'a\n  b', data: { n: 1 } })).toBe('Send this message to the agent:\na\n  b\nwith data:\n{\n  "n": 1\n}');
    expect(actionText({ kind: 'send_data', form: {}, values: { replicas: 4 } })).toBe('Send these form values to the agent:\n{\n  "replicas": 4\n}');
    expect(actionText({ kind: 'run_command', agent_id: 'a1', commands: ['ls'], payload: {} })).toBe(
      'Let coding agent a1 run this command once:\nls\nSealed payload:\n{}',
    );
    expect(actionText({ kind: 'send_message', text: 'call', data: { server: 'fs', tool: 'write', arguments: { p: 1 } } })).toContain(
      'Call the tool write on MCP server fs with these arguments:',
    );
    expect(actionText({ kind: 'other', x: 1 })).toContain('"x": 1');
  });

  it('previews in one line of at most 140 characters', () => {
    expect(actionPreview({ kind: 'send_message', text: 'Deploy\n\n1.5  now' })).toBe('Message: Deploy 1.5 now');
    expect(actionPreview({ kind: 'send_data', values: { a: 1 } })).toBe('Values: {"a":1}');
    const long = actionPreview({ kind: 'send_message', text: 'x'.repeat(500) });
    expect(long).toHaveLength(140);
    expect(long.endsWith('…')).toBe(true);
  });

  it('clips by lines and characters', () => {
    expect(clip('a\nb', 8)).toEqual({ shown: 'a\nb', clipped: false });
    expect(clip('a\nb\nc', 2)).toEqual({ shown: 'a\nb', clipped: true });
    expect(clip('abcdef', 8, 3)).toEqual({ shown: 'abc', clipped: true });
  });
});
