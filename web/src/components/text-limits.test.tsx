import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { DECISION_LIMITS, MESSAGE_LIMITS } from '../../../server/src/limits.js';
import { Composer } from './Composer';
import { ConfirmDecision } from './ConfirmDecision';

// Docs/CONFORMANCE.md G1: the boxes whose text the server limits count as the server does
// (code points, the comment trimmed), keep what was typed (no HTML maxLength, which counts UTF-16
// units and truncates silently) and disable the button that would send it, saying why.

const EMOJI = '\u{1F680}'; // one code point, two UTF-16 units
const html = (el: React.ReactElement) => renderToStaticMarkup(el);
const noop = () => {};

describe('the composer', () => {
  const composer = (text: string) => html(<Composer text={text} onText={noop} state="INPUT_REQUIRED" finished={false} busy={false} onSend={noop} />);
  const send = (out: string) => out.match(/<button type="submit"[^>]*>Send<\/button>/)?.[0];

  it(`sends ${MESSAGE_LIMITS.textMax} emoji (${2 * MESSAGE_LIMITS.textMax} UTF-16 units): the server counts code points`, () => {
    const out = composer(EMOJI.repeat(MESSAGE_LIMITS.textMax));
    expect(send(out)).toBe('<button type="submit">Send</button>');
    expect(out).not.toMatch(/maxlength/i);
    expect(out).not.toContain('too long');
  });

  it('keeps a text one character over, disables Send and says by how much', () => {
    const out = composer(EMOJI.repeat(MESSAGE_LIMITS.textMax) + 'a');
    expect(send(out)).toBe('<button type="submit" disabled="">Send</button>');
    expect(out).toContain(`The message is too long to send: ${MESSAGE_LIMITS.textMax + 1} characters, at most ${MESSAGE_LIMITS.textMax}. Remove 1.`);
    expect(out).toMatch(/<textarea id="composer" aria-invalid="true" aria-describedby="composer-length">/);
    expect(out).not.toMatch(/maxlength/i);
  });
});

describe('the decision comment', () => {
  const confirm = (reason: string) =>
    html(
      <ConfirmDecision
        kind="reject"
        title="Delete it"
        risk="LOW"
        revision={1}
        digest={'ab'.repeat(32)}
        action={{ kind: 'send_message', text: 'Delete it.' }}
        reason={reason}
        onReason={noop}
        onConfirm={noop}
        onCancel={noop}
      />,
    );
  const button = (out: string) => out.match(/<button type="button"[^>]*>Reject revision 1<\/button>/)?.[0];

  it(`confirms with a reason of ${DECISION_LIMITS.commentMax} emoji, and with spaces past the limit that the server trims`, () => {
    for (const reason of [EMOJI.repeat(DECISION_LIMITS.commentMax), `${'a'.repeat(DECISION_LIMITS.commentMax)}   `]) {
      const out = confirm(reason);
      expect(button(out)).not.toContain('disabled');
      expect(out).not.toMatch(/maxlength/i);
      expect(out).not.toContain('too long');
    }
  });

  it('refuses to confirm a reason one character over and says why', () => {
    const out = confirm(EMOJI.repeat(DECISION_LIMITS.commentMax + 1));
    expect(button(out)).toContain('disabled=""');
    expect(out).toContain(`The comment is too long to send: ${DECISION_LIMITS.commentMax + 1} characters, at most ${DECISION_LIMITS.commentMax}. Remove 1.`);
  });
});
