import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPE } from '../../../src/a2a/extensions.js';
import type { Part } from '../../../src/a2a/types.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { APPROVAL_LIMITS, KIB, jsonBytes } from '../../../src/limits.js';
import { OPS, agentRegistry, eventually, startTestInstance, type TestInstance } from '../../support/harness.js';
import { freePort } from '../../support/free-port.js';

// Seed 000 "Request": "The whole part may be at most 128 KB of JSON", measured on the part as the
// agent sent it: a member Taskbay does not read counts too, however the part arrives. The fixture
// agent's scripted variant pads a part to an exact size (`reply.pad`) in a member nobody reads,
// and answers over real HTTP in each way Taskbay reads an agent: a JSON-RPC answer, an HTTP+JSON
// answer, a server-sent event stream, a push callback.

const BINDINGS = ['JSON-RPC answer', 'HTTP+JSON answer', 'SSE stream', 'push callback'] as const;
type Binding = (typeof BINDINGS)[number];

let t: TestInstance;
const fixtures = {} as Record<Binding, FixtureAgent>;

beforeAll(async () => {
  fixtures['JSON-RPC answer'] = await startFixtureAgent();
  fixtures['HTTP+JSON answer'] = await startFixtureAgent({ httpJson: true });
  fixtures['SSE stream'] = await startFixtureAgent({ streaming: true });
  fixtures['push callback'] = await startFixtureAgent({ push: true, deferredReplyMs: 30 });
  // Push callbacks go to TASKBAY_PUBLIC_URL: this instance's own address.
  const port = await freePort();
  t = await startTestInstance({ worker: false, env: { PORT: String(port), TASKBAY_PUBLIC_URL: `http://127.0.0.1:${port}` } });
});
afterAll(async () => {
  await t?.stop();
  for (const f of Object.values(fixtures)) await f.close();
});

const registered = agentRegistry(() => t);
const SEND = `mutation($taskId: ID!, $data: JSON) { sendTaskMessage(input: { taskId: $taskId, data: $data }) { id state } }`;
const WAITING = `{ tasksWaitingForInput { reason detail task { id } } }`;

const request = (title: string) => ({ title, action: { kind: 'send_message', text: `Approved: ${title}` } });
const approvalPart = (title: string): Part => ({ data: request(title), mediaType: MEDIA_TYPE.approvalRequest });

/** A scripted reply asking for approval in a part the fixture pads to `bytes` of JSON in its member `padding`. */
const paddedAsk = (bytes: number, title: string) => ({
  reply: {
    state: 'TASK_STATE_INPUT_REQUIRED',
    parts: [{ text: `May I? (${title})` }, approvalPart(title)],
    pad: { part: 1, member: 'padding', toBytes: bytes },
  },
});

interface StoredMessage {
  step_seq: number;
  role: string;
  parts: any[];
}

/** The agent message stored at `step`, once the task waits for input again (a push arrives after the answer). */
const answerAt = (taskId: string, step: number) =>
  eventually(async () => {
    const [task] = await t.sql('select state from task where id = $1', [taskId]);
    const rows = await t.sql<StoredMessage>('select step_seq, role, parts from task_message where task_id = $1 order by step_seq', [taskId]);
    return task.state === 'TASK_STATE_INPUT_REQUIRED' && rows.length === step ? rows.at(-1)! : null;
  });

const approvalsOf = (taskId: string) => t.sql('select title, status from approval where task_id = $1 order by created_at', [taskId]);

describe('"The whole part may be at most 128 KB of JSON" (seed 000 "Request"), measured on the part as the agent sent it', () => {
  it.each(BINDINGS)(
    '%s: a part of 205 KiB padded in a member Taskbay does not read opens nothing and stays ordinary content; 128 KiB + 1 opens nothing; exactly 128 KiB opens one',
    async (binding) => {
      const fixture = fixtures[binding];
      const started = await t.gql(OPS.startTask, { agentId: await registered(fixture.cardUrl('scripted')), data: paddedAsk(205 * KIB, 'Padded to 205 KiB') });
      expect(started.errors).toBeUndefined();
      const remoteTaskId = started.data.startTask.remoteTaskId as string;
      const [{ id: taskId }] = await t.sql('select id from task where remote_task_id = $1', [remoteTaskId]);

      // The part exactly as the agent sent it: 205 KiB of JSON, nearly all of it the padding.
      const asked = await answerAt(taskId, 2);
      expect(await approvalsOf(taskId)).toEqual([]);
      const sent = fixture.getTask(remoteTaskId)!.status.message!.parts[1]!;
      expect(jsonBytes(sent)).toBe(205 * KIB);
      expect(jsonBytes({ data: sent.data, mediaType: sent.mediaType })).toBeLessThan(1 * KIB);
      expect(asked.role).toBe('ROLE_AGENT');
      expect(asked.parts[0]).toEqual({ text: 'May I? (Padded to 205 KiB)' });
      // Ordinary content: kept whole, as data under Taskbay's own media type, saying why and what it was sent as.
      expect(asked.parts[1]).toEqual({
        data: sent,
        mediaType: MEDIA_TYPE.malformedPart,
        metadata: {
          taskbayMalformed: expect.stringMatching(
            new RegExp(`\\.parts\\[1\\] is ${205 * KIB} bytes of JSON as sent; an approval-request part is at most ${APPROVAL_LIMITS.partMaxBytes}$`),
          ),
          taskbaySentAs: MEDIA_TYPE.approvalRequest,
        },
      });
      const waiting = (await t.gql(WAITING)).data.tasksWaitingForInput.find((w: any) => w.task.id === started.data.startTask.id);
      expect(waiting).toMatchObject({ reason: 'IGNORED_PART', detail: expect.stringContaining(`is ${205 * KIB} bytes of JSON as sent`) });

      // One byte over, as sent: nothing opens either.
      expect((await t.gql(SEND, { taskId: started.data.startTask.id, data: paddedAsk(128 * KIB + 1, 'One byte over') })).errors).toBeUndefined();
      expect((await answerAt(taskId, 4)).parts[1].mediaType).toBe(MEDIA_TYPE.malformedPart);
      expect(await approvalsOf(taskId)).toEqual([]);

      // Exactly 128 KiB as sent (the padding still unread): the request opens, and its part is stored as Taskbay reads it.
      expect((await t.gql(SEND, { taskId: started.data.startTask.id, data: paddedAsk(128 * KIB, 'Exactly 128 KiB') })).errors).toBeUndefined();
      const fits = await answerAt(taskId, 6);
      expect(jsonBytes(fixture.getTask(remoteTaskId)!.status.message!.parts[1])).toBe(128 * KIB);
      expect(fits.parts[1]).toEqual(approvalPart('Exactly 128 KiB'));
      expect(await approvalsOf(taskId)).toEqual([{ title: 'Exactly 128 KiB', status: 'PENDING' }]);
    },
  );
});
