// The page's sign-in in Chromium, in each identity mode: the dev-user picker against the local runtime, and App
// Service authentication and Entra ID with the deployment's answers scripted (/api/client-config, /.auth/me, and
// the principal header App Service adds to each request).
import type { Page, Request } from 'playwright-core';
import { expect, it } from 'vitest';
import { ChatClient } from '../support/chat-client.js';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { settle } from '../support/local-runtime.js';

const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 120_000;
const PRINCIPAL_HEADER = 'x-ms-client-principal-id';
const API_CLIENT_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

function titlesIn(page: Page): Promise<string[]> {
  return page
    .getByRole('complementary', { name: 'Conversations' })
    .locator('.conversation-title')
    .allTextContents();
}

/** Answers /api/client-config as a deployment in another identity mode would, and records the page's API calls from then on. */
async function deployedAs(page: Page, config: unknown): Promise<Request[]> {
  // The harness opened the page as a dev user: its calls end before the deployment's answers take over.
  await page.waitForLoadState('networkidle');
  const calls: Request[] = [];
  await page.route('**/api/**', (route) => {
    calls.push(route.request());
    return new URL(route.request().url()).pathname === '/api/client-config'
      ? route.fulfill({ json: config })
      : route.fallback();
  });
  return calls;
}

/**
 * Loads the page again with nothing of the old page left: its timers (a list refetched with backoff) could still
 * send a request as the old identity between a reload's start and its end, so the page first goes blank, then the
 * records start afresh.
 */
async function reopen(page: Page, ...records: unknown[][]): Promise<void> {
  const url = page.url();
  await page.goto('about:blank');
  for (const record of records) record.length = 0;
  await page.goto(url);
}

describeBrowser('signing in to the web client', () => {
  const web = useWebRuntime();

  async function converse(userId: string, text: string): Promise<void> {
    const client = new ChatClient(web.url, userId);
    const sessionId = await client.startSession();
    await client.stream(sessionId, await client.send(sessionId, text), { timeoutMs: 60_000 });
  }

  it(
    "picks a dev user from the runtime's list, and shows that user's conversations",
    async () => {
      await converse('user_001', 'Alice asks about tulips');
      await converse('user_002', 'Bob asks about bicycles');
      await settle(web.runtime);
      const { page } = await web.open({ userId: 'user_001' });
      const picker = page.getByRole('combobox', { name: 'Dev user' });
      await expect.poll(() => picker.inputValue(), { timeout: UI_TIMEOUT }).toBe('user_001');
      expect(await picker.locator('option').allTextContents()).toEqual([
        'Alice Johnson (user_001)',
        'Bob Smith (user_002)',
        'Carol White (user_003)',
      ]);
      await expect.poll(() => titlesIn(page), { timeout: UI_TIMEOUT }).toEqual(['Alice asks about tulips']);

      await picker.selectOption('user_002');
      await expect.poll(() => titlesIn(page), { timeout: UI_TIMEOUT }).toEqual(['Bob asks about bicycles']);
      expect(await page.evaluate(`localStorage.getItem('memory-chat.dev-user')`)).toBe('user_002');
    },
    TEST_TIMEOUT,
  );

  it(
    'with App Service authentication: signs in through /.auth/login, then is who /.auth/me says, sending no identity itself',
    async () => {
      const { page } = await web.open({ userId: 'user_002' });
      const calls = await deployedAs(page, {
        authMode: 'app-service',
        appService: { loginUrl: '/.auth/login/aad', logoutUrl: '/.auth/logout', meUrl: '/.auth/me' },
      });

      // Nobody signed in: /.auth/me answers 401.
      await page.route('**/.auth/me', (route) => route.fulfill({ status: 401, body: '' }));
      await reopen(page, calls);
      const signIn = page.getByRole('link', { name: 'Sign in' });
      await expect
        .poll(() => signIn.getAttribute('href'), { timeout: UI_TIMEOUT })
        .toBe('/.auth/login/aad?post_login_redirect_uri=%2F%3Fuser%3Duser_002');
      expect(await page.getByText('Sign in to chat.').isVisible()).toBe(true);
      expect(new Set(calls.map((call) => new URL(call.url()).pathname))).toEqual(
        new Set(['/api/client-config']),
      );

      // Signed in: the platform names the user, and adds the principal header to every request by its cookie.
      await page.unroute('**/.auth/me');
      await page.route('**/.auth/me', (route) =>
        route.fulfill({
          json: [
            {
              provider_name: 'aad',
              user_id: 'bob@contoso.com',
              user_claims: [
                { typ: 'name', val: 'Bob Smith' },
                { typ: 'http://schemas.microsoft.com/identity/claims/objectidentifier', val: 'user_002' },
              ],
            },
          ],
        }),
      );
      const sentByPage: (string | undefined)[] = [];
      await page.route('**/api/history/**', (route) => {
        sentByPage.push(route.request().headers()[PRINCIPAL_HEADER]);
        return route.fallback({ headers: { ...route.request().headers(), [PRINCIPAL_HEADER]: 'user_002' } });
      });
      await reopen(page, sentByPage);
      await expect.poll(() => page.getByText('Bob Smith').isVisible(), { timeout: UI_TIMEOUT }).toBe(true);
      expect(await page.getByRole('link', { name: 'Sign out' }).getAttribute('href')).toBe(
        '/.auth/logout?post_logout_redirect_uri=%2F',
      );
      await expect.poll(() => titlesIn(page), { timeout: UI_TIMEOUT }).toEqual(['Bob asks about bicycles']);
      expect(sentByPage.length).toBeGreaterThan(0);
      expect(sentByPage.every((header) => header === undefined)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    'with Entra ID: offers to sign in and calls nothing as anyone until then',
    async () => {
      const { page, consoleErrors } = await web.open({ userId: 'user_001' });
      const calls = await deployedAs(page, {
        authMode: 'entra',
        entra: {
          clientId: API_CLIENT_ID,
          authority: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47',
          scopes: [`api://${API_CLIENT_ID}/user_impersonation`],
        },
      });
      await reopen(page, calls);
      await expect
        .poll(() => page.getByRole('button', { name: 'Sign in' }).isVisible(), { timeout: UI_TIMEOUT })
        .toBe(true);
      expect(await page.getByText('Sign in to chat.').isVisible()).toBe(true);
      expect(new Set(calls.map((call) => new URL(call.url()).pathname))).toEqual(
        new Set(['/api/client-config']),
      );
      expect(await page.getByRole('combobox', { name: 'Dev user' }).count()).toBe(0);
      expect(consoleErrors.filter((line) => line.startsWith('uncaught'))).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
