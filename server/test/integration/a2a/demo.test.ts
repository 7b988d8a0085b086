import { afterAll, describe, expect, it, vi } from 'vitest';
import { runDemo } from '../../../src/fixture-agent/demo.js';
import { DEMO_VARIANTS } from '../../../src/fixture-agent/content.js';
import { createTestDatabase, roleUrls, TEST_APPROVAL_KEY, TEST_AUDIT_KEY, testPinDir } from '../../support/harness.js';

// As deployed: the demo's server runs as the app role and migrates as the owner.
function demoDatabase(superuserUrl: string) {
  const { appUrl, ownerUrl } = roleUrls(superuserUrl);
  return { DATABASE_URL: appUrl, TASKBAY_MIGRATION_DATABASE_URL: ownerUrl };
}

// Issue 3 "Demo": "npm run demo starts the server and the fixture agent, registers the packaged
// variants, and prints where to look, so a newcomer sees a live approval within a minute." (The
// minute is the test timeout; how long it takes is not asserted here.)

let stop: (() => Promise<void>) | undefined;
afterAll(async () => {
  await stop?.();
});

describe('npm run demo', () => {
  it('registers the packaged variants, opens a live approval and prints where to look', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const demo = await runDemo(['--agent-port', '0'], {
      ...demoDatabase(await createTestDatabase()),
      PORT: '0',
      HOST: '127.0.0.1',
      TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY,
      TASKBAY_APPROVAL_KEY: TEST_APPROVAL_KEY,
      // Its own pins: the default (.taskbay in the checkout) outlives this run, and the next run's audit key is another.
      TASKBAY_AUDIT_PIN_DIR: testPinDir(),
    });
    stop = demo.stop;
    const out = log.mock.calls.map((c) => c.join(' ')).join('\n');
    log.mockRestore();
    expect(Object.keys(demo.agentIds)).toEqual([...DEMO_VARIANTS]);
    expect(demo.pendingApprovalId).toBeTruthy();
    expect(out).toContain(`Console:        ${demo.url}/`);
    expect(out).toContain(demo.adminToken);
    expect(out).toContain('Pending approval: "Delete the staging cluster"');
    for (const v of DEMO_VARIANTS) expect(out).toMatch(new RegExp(`${v}\\s+http://127\\.0\\.0\\.1:\\d+/${v}/card\\.json`));
    // The approval is really there for the admin token the demo printed.
    const res = await fetch(`${demo.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${demo.adminToken}` },
      body: JSON.stringify({ query: 'query($id: ID!) { approval(id: $id) { status title } }', variables: { id: demo.pendingApprovalId } }),
    });
    expect(((await res.json()) as any).data.approval).toEqual({ status: 'PENDING', title: 'Delete the staging cluster' });
  });
});
