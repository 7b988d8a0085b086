import { MESSAGE_LIMITS } from '../../../server/src/limits.js';
import { tooLong, TooLongNote } from './TooLong';

/**
 * The reply box of a task. A finished task takes no more messages (the server refuses them):
 * the box says so instead. Text over the server's limit is kept and the Send button says why
 * it is disabled.
 */
export function Composer(props: { text: string; onText: (text: string) => void; state: string; finished: boolean; busy: boolean; onSend: () => void }) {
  const { text, finished } = props;
  const over = tooLong('The message', text, MESSAGE_LIMITS.textMax);
  const describedBy = [finished ? 'composer-note' : '', over ? 'composer-length' : ''].filter(Boolean).join(' ');
  return (
    <form
      className="composer"
      aria-label="Reply to the agent"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (!text.trim() || over || finished) return;
        props.onSend();
      }}
    >
      <label htmlFor="composer">Message</label>
      {finished && (
        <p className="muted" id="composer-note" data-testid="composer-note">
          {`This task is ${props.state.toLowerCase()}: the agent takes no more messages on it. Start a new task to continue.`}
        </p>
      )}
      <textarea
        id="composer"
        value={text}
        onChange={(ev) => props.onText(ev.target.value)}
        disabled={finished}
        aria-invalid={over ? true : undefined}
        aria-describedby={describedBy || undefined}
      />
      <TooLongNote id="composer-length" reason={over} />
      <button type="submit" disabled={finished || props.busy || !text.trim() || !!over}>
        Send
      </button>
    </form>
  );
}
