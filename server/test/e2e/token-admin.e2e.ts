import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { createTestDatabase, roleUrls } from '../support/harness.js';
import { gqlAt, startServerProcess, type ServerProcess } from '../support/server-process.js';

// Issue 26, item 5: "With TASKBAY_ADMIN_TOKEN the first admin has no password and cannot sign in
// to the console." The real `taskbay serve` (a child process, its output a pipe as under a log
// collector) with TASKBAY_ADMIN_TOKEN: the one-time sign-in link it made is in the file its log
// line names (server/src/startup-output.ts). In Debian's Chromium the admin opens it, chooses a
// password, lands in the inbox signed in, then signs out and in again with that password.

const WAIT = 20_000;
const PASSWORD = 'the admin chose this one';

let server: ServerProcess;
let browser: Browser;
let dataDir: string;
/** The admin's page once signed in (the second scenario goes on from there). */
let signedIn: Page | null = null;
const adminToken = `tb_admin_${randomUUID()}`;

beforeAll(async () => {
  const { appUrl, ownerUrl } = roleUrls(await createTestDatabase());
  dataDir = mkdtempSync(join(tmpdir(), 'taskbay-token-admin-'));
  server = await startServerProcess({
    DATABASE_URL: appUrl,
    TASKBAY_MIGRATION_DATABASE_URL: ownerUrl,
    TASKBAY_ADMIN_TOKEN: adminToken,
    TASKBAY_DATA_DIR: dataDir,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The link from the file the "Sign in:" log line names (the line follows the ready line). */
async function startupLink(): Promise<string> {
  const line = await new Promise<{ file: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "Sign in:" line:\n${server.output()}`)), WAIT);
    const look = () => {
      const found = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; file?: string })
        .find((e) => e.msg.startsWith('Sign in: ') && e.file);
      if (found) {
        clearTimeout(timer);
        resolve(found as { file: string });
      } else setTimeout(look, 50);
    };
    look();
  });
  const url = /^http:\/\/\S+\/set-password#\S+$/m.exec(readFileSync(line.file, 'utf8'))?.[0];
  if (!url) throw new Error(`no link in ${line.file}`);
  return url;
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('dialog', (d) => {
    throw new Error(`unexpected ${d.type()} dialog: ${d.message()}`);
  });
  return page;
}

describe('the admin of TASKBAY_ADMIN_TOKEN in the console', () => {
  it('opens the start-up link, chooses a password, sees the inbox, and signs in with that password later', async () => {
    const link = await startupLink();
    // No password yet: the sign-in form cannot let them in.
    const before = await gqlAt(server.url, '', 'mutation { signIn(email: "admin@localhost", password: "") { id } }');
    expect(before.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const page = await newPage();
    // The link names localhost (TASKBAY_PUBLIC_URL unset); the server is on 127.0.0.1 here.
    await page.goto(link.replace('localhost', '127.0.0.1'));
    await page.getByRole('heading', { name: 'Choose a password', level: 1 }).waitFor();
    await page.getByText('For Administrator (admin@localhost).').waitFor();
    expect(page.url()).not.toContain('#'); // the secret left the address bar (and the history)
    expect(await page.getByLabel('Email').inputValue()).toBe('admin@localhost');
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(`${PASSWORD}!`);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The two passwords differ.' }).waitFor();
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();

    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).waitFor(); // as an admin
    expect(await page.locator('header .who').textContent()).toBe('admin@localhost');

    // The link worked once; the token still works.
    await page.goto(link.replace('localhost', '127.0.0.1'));
    await page.getByRole('alert').filter({ hasText: 'This sign-in link cannot be used' }).waitFor();
    expect((await gqlAt(server.url, adminToken, '{ viewer { email } }')).data.viewer.email).toBe('admin@localhost');

    // Signed out, the password signs them in.
    await page.goto(`${server.url}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill('admin@localhost');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    signedIn = page;
  });

  it('adds a person without a password and gives them a sign-in link from People; with it they get in', async () => {
    expect(signedIn, 'the first scenario signs the admin in').not.toBeNull();
    const admin = signedIn!;
    await admin.goto(`${server.url}/people`);
    await admin.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    const form = admin.getByRole('form', { name: 'Add a person' });
    await form.getByLabel('Email').fill('nopass@example.test');
    await form.getByLabel('Name').fill('No Password');
    await form.getByRole('button', { name: 'Add' }).click();
    await admin.getByRole('status').filter({ hasText: 'Added nopass@example.test.' }).waitFor();
    await admin.reload();
    await admin.getByRole('button', { name: 'Sign-in link for nopass@example.test' }).click();
    const shown = admin.getByTestId('sign-in-link');
    await shown.filter({ hasText: 'One-time sign-in link for nopass@example.test' }).waitFor();
    const link = (await shown.locator('code').textContent())!;
    expect(link).toMatch(/\/set-password#[\w-]{43}$/);

    const person = await newPage();
    await person.goto(link.replace(/^http:\/\/localhost:\d+/, server.url));
    await person.getByText('For No Password (nopass@example.test).').waitFor();
    await person.getByLabel('New password').fill(PASSWORD);
    await person.getByLabel('Repeat the password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Set password and sign in' }).click();
    await person.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    expect(await person.locator('header .who').textContent()).toBe('nopass@example.test');
  });
});
