import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestInstance } from './harness.js';

// What the browser tests share: GraphQL as the test's admin (errors thrown), people who sign in
// with a password, a person's console session cookie from a real signIn, and fresh browser
// contexts signed in with it, closed after each test.

/** The answer's data, or the errors thrown as one message. */
export async function gqlData<T = any>(t: TestInstance, query: string, variables?: Record<string, unknown>): Promise<T> {
  const r = await t.gql<T>(query, variables);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data!;
}

/** Creates a person of the admin's tenant who signs in with this password, and returns their id. */
export async function createPasswordUser(t: TestInstance, person: { email: string; name: string; password: string; role: string }): Promise<string> {
  const r = await gqlData(t, `mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, {
    i: { email: person.email, name: person.name, password: person.password, role: person.role },
  });
  return r.createUser.id;
}

/** Signs the person in through the API and returns the value of their session cookie. */
export async function sessionCookie(t: TestInstance, email: string, password: string): Promise<string> {
  const res = await fetch(`${t.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }',
      variables: { e: email, p: password },
    }),
  });
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  if (!cookie.includes('=')) throw new Error(`sign-in of ${email} failed: ${await res.text()}`);
  return cookie.slice(cookie.indexOf('=') + 1);
}

/**
 * A page in a new browser context carrying the session cookie (null: signed out). With
 * `noDialogs`, a native dialog (prompt, confirm), which would block the page, fails the test.
 */
export async function sessionPage(
  browser: Browser,
  t: TestInstance,
  cookie: string | null,
  opts: { timeout: number; noDialogs?: boolean; width?: number; height?: number },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 } });
  if (cookie) await context.addCookies([{ name: 'taskbay_session', value: cookie, url: t.instance.url, httpOnly: true, sameSite: 'Lax' }]);
  const page = await context.newPage();
  page.setDefaultTimeout(opts.timeout);
  if (opts.noDialogs) {
    page.on('dialog', (d) => {
      throw new Error(`unexpected ${d.type()} dialog: ${d.message()}`);
    });
  }
  return { context, page };
}

/**
 * The pages a browser test file opens, each in a new context (sessionPage); closeAll, in the
 * file's afterEach, closes every context the test opened. Getters, as the browser and the
 * instance start in beforeAll.
 */
export class SessionPages {
  private contexts: BrowserContext[] = [];

  constructor(
    private readonly browser: () => Browser,
    private readonly t: () => TestInstance,
  ) {}

  async open(cookie: string | null, opts: { timeout: number; noDialogs?: boolean; width?: number; height?: number }): Promise<Page> {
    const { context, page } = await sessionPage(this.browser(), this.t(), cookie, opts);
    this.contexts.push(context);
    return page;
  }

  async closeAll(): Promise<void> {
    for (const c of this.contexts) await c.close().catch(() => {});
    this.contexts = [];
  }
}
