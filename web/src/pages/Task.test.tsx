import { renderToStaticMarkup } from 'react-dom/server';
import { Client, Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeFragmentData } from '../gql';
import { missingBefore, TranscriptFields, TranscriptView } from './Task';

// Seed 003 "Show an A2UI surface": the server accepts deleteSurface envelopes, so the task page
// honours one sent in a later message: the surface an earlier message showed is gone. Rendered
// with react-dom/server; the urql client is never asked anything.

const client = new Client({ url: 'http://127.0.0.1:9/graphql', exchanges: [] });
const A2UI = 'application/a2ui+json';
const SURFACE = [
  { version: 'v0.9', createSurface: { surfaceId: 'confirm' } },
  { version: 'v0.9', updateComponents: { surfaceId: 'confirm', components: [{ id: 'root', component: 'Text', text: 'Pick a size' }] } },
];
const DELETE = [{ version: 'v0.9', deleteSurface: { surfaceId: 'confirm' } }];

/** A transcript's messages, numbered in order (steps 1, 2, ...). */
function numbered(messages: ({ agent: unknown[] } | { user: string })[]) {
  return messages.map((m, i) => ({
    messageId: `m${i + 1}`,
    role: 'agent' in m ? 'AGENT' : 'USER',
    stepSeq: i + 1,
    createdAt: new Date(Date.UTC(2026, 10, 30, 12, 0, i)).toISOString(),
    parts: 'agent' in m ? [{ data: m.agent, mediaType: A2UI }] : [{ text: m.user }],
    form: null,
    formPartIndex: null,
    a2ui: 'agent' in m ? m.agent : null,
    a2uiPartIndex: 'agent' in m ? 0 : null,
  }));
}

function transcript(messages: ReturnType<typeof numbered>, more: { limitReason?: string; state?: string } = {}): string {
  const task = makeFragmentData(
    { id: 'task-1', state: more.state ?? 'INPUT_REQUIRED', limitReason: more.limitReason ?? null, messages, statusHistory: [] } as never,
    TranscriptFields,
  );
  return renderToStaticMarkup(
    <Provider value={client}>
      <TranscriptView task={task} />
    </Provider>,
  );
}

describe('the task transcript honours deleteSurface', () => {
  it('a surface shows until a later message deletes it; then the earlier message says it was removed', () => {
    const shown = transcript(numbered([{ user: 'hello' }, { agent: SURFACE }, { user: 'ok' }]));
    expect(shown).toContain('Pick a size');
    expect(shown).not.toContain('The agent removed surface confirm.');

    const deleted = transcript(numbered([{ user: 'hello' }, { agent: SURFACE }, { user: 'ok' }, { agent: DELETE }]));
    expect(deleted).not.toContain('Pick a size');
    // Said where the surface was (step 2) and by the message that deleted it (step 4).
    expect(deleted.match(/The agent removed surface confirm\./g)).toHaveLength(2);
  });
});

describe('the transcript is read a page at a time', () => {
  /** Steps `from` to `to` of a plain conversation. */
  const steps = (from: number, to: number) => numbered(Array.from({ length: to }, (_, i) => ({ user: `message ${i + 1}` }))).slice(from - 1);

  it('offers the earlier messages when the page does not start at step 1, and not when it does', () => {
    const later = transcript(steps(51, 100));
    expect(later).toContain('Load earlier messages');
    expect(later).toContain('message 51');
    expect(transcript(steps(1, 30))).not.toContain('Load earlier messages');
  });

  it('the page to load is the one before the newest step whose predecessor is not shown', () => {
    expect(missingBefore([])).toBeNull();
    expect(missingBefore([1, 2, 3])).toBeNull();
    expect(missingBefore([51, 52])).toBe(51);
    expect(missingBefore([1, 2, 40, 41, 90, 91])).toBe(90);
  });

  it('says why Taskbay stopped following the task', () => {
    const html = transcript(steps(1, 2), { state: 'FAILED', limitReason: 'the agent sent more than 2000 messages for the task' });
    expect(html).toContain('Taskbay stopped following this task: the agent sent more than 2000 messages for the task.');
    expect(transcript(steps(1, 2))).not.toContain('Taskbay stopped following');
  });
});
