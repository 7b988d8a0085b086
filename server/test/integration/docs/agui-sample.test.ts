import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgUiFixture, type AgUiFixture } from '../../../src/fixture-agent/agui.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';
import { REPO_ROOT } from '../../support/repo-root.js';

// The code sample of docs/AG-UI.md (docs/samples/agui-register.mjs), run as a user would: node,
// against a real Taskbay over HTTP and the AG-UI fixture agent.

const SAMPLE = 'docs/samples/agui-register.mjs';
let t: TestInstance;
let agent: AgUiFixture;

beforeAll(async () => {
  agent = await startAgUiFixture();
  t = await startTestInstance();
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('docs/AG-UI.md sample', () => {
  it('is embedded in the page as it is in its file', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/AG-UI.md'), 'utf8');
    const file = readFileSync(join(REPO_ROOT, SAMPLE), 'utf8');
    const marker = `<!-- sample: ${SAMPLE} -->\n\`\`\`js\n`;
    const at = doc.indexOf(marker);
    expect(at).toBeGreaterThan(-1);
    const start = at + marker.length;
    expect(doc.slice(start, doc.indexOf('```\n', start))).toBe(file);
  });

  it('registers an AG-UI agent, starts a task, and finds the approval the interrupt opened', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, SAMPLE)], {
      env: { ...process.env, TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: t.adminToken, AGUI_ENDPOINT: agent.url('approval') },
    });
    const out = JSON.parse(stdout);
    expect(out.agent.kind).toBe('AG_UI');
    expect(out.task.state).toBe('INPUT_REQUIRED');
    expect(out.task.aguiRuns).toEqual([{ runId: expect.any(String), status: 'INTERRUPTED' }]);
    expect(out.approvals).toEqual([{ id: expect.any(String), title: 'sendEmail: Send the Q3 report to ops@example.com?', status: 'PENDING' }]);
  });
});
