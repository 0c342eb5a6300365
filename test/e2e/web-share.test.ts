// Sharing by link in Chromium: the Share action, the page at /s/{shareId} read with no identity (noindex, no
// overflow on a phone), revoked or deleted → the link does not work, another user cannot revoke it, and a
// signed-in reader continues the conversation as their own.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, sharedBrowser, useWebRuntime } from '../support/browser.js';
import { settle } from '../support/local-runtime.js';

const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 180_000;
const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));

/** The ids of the serious and critical axe violations of the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  // The page's CSP refuses inline script, so axe is evaluated through the DevTools protocol.
  if ((await page.evaluate("typeof axe !== 'undefined'")) !== true)
    await page.evaluate(readFileSync(AXE, 'utf8'));
  const violations = await page.evaluate<{ id: string; impact: string | null }[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  );
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => violation.id);
}

describeBrowser('sharing a conversation by link in the page', () => {
  const web = useWebRuntime();

  async function conversation(userId: string, texts: string[]): Promise<string> {
    const client = new ChatClient(web.url, userId);
    const sessionId = await client.startSession();
    for (const text of texts)
      await client.stream(sessionId, await client.send(sessionId, text), { timeoutMs: 60_000 });
    await settle(web.runtime);
    return sessionId;
  }

  const api = (userId: string, path: string, method = 'GET') =>
    fetch(`${web.url}/api/${path}`, { method, headers: new ChatClient(web.url, userId).headers() });

  /** A fresh context that cannot sign in at all: the page never learns an identity mode. */
  async function signedOut(
    path: string,
    viewport = { width: 390, height: 844 },
    colorScheme: 'light' | 'dark' = 'light',
  ) {
    const browser = await sharedBrowser();
    const context = await browser.newContext({ viewport, colorScheme });
    await context.route('**/api/client-config', (route) => route.abort());
    const page = await context.newPage();
    const identities: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/shares/'))
        identities.push(request.headers()['x-ms-client-principal-id']);
    });
    const response = await page.goto(`${web.url}${path}`);
    return { page, context, response, identities };
  }

  it(
    'shares from the page, opens signed out, then shows the link is gone once revoked',
    async () => {
      const sessionId = await conversation('user_001', ['Plan a trip to Lisbon', 'reply with 6 words']);
      const { page } = await web.open({ userId: 'user_001', path: `/?session=${sessionId}` });
      await page.getByRole('button', { name: 'Share' }).click();
      const link = page.getByRole('textbox', { name: /Share link/ });
      await expect.poll(() => link.inputValue(), { timeout: UI_TIMEOUT }).toMatch(/\/s\/[A-Za-z0-9_-]{22}$/);
      const url = new URL(await link.inputValue());
      const shareId = url.pathname.slice('/s/'.length);

      const reader = await signedOut(url.pathname);
      try {
        expect(reader.response?.headers()['x-robots-tag']).toContain('noindex');
        const { page: shared } = reader;
        await expect
          .poll(() => shared.getByRole('heading', { level: 1 }).textContent(), { timeout: UI_TIMEOUT })
          .toBe('Plan a trip to Lisbon');
        await expect.poll(() => shared.locator('[data-role]').count(), { timeout: UI_TIMEOUT }).toBe(4);
        expect(await shared.locator('.shared-text').first().textContent()).toBe('Plan a trip to Lisbon');
        expect(await shared.locator('meta[name="robots"]').getAttribute('content')).toContain('noindex');
        expect(reader.identities).toEqual([undefined]);
        const overflow = await shared.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        expect(overflow).toBeLessThanOrEqual(0);
        expect(await seriousViolations(shared)).toEqual([]);

        // Another user cannot revoke it (nor learn it exists); its owner can, at once.
        expect((await api('user_002', `shares/${shareId}`, 'DELETE')).status).toBe(404);
        expect((await api('user_001', `shares/${shareId}`, 'DELETE')).status).toBe(204);
        await shared.reload();
        await expect
          .poll(() => shared.getByRole('heading', { name: 'This link does not work' }).count(), {
            timeout: UI_TIMEOUT,
          })
          .toBe(1);
      } finally {
        await reader.context.close();
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "shows a deleted conversation's link as gone",
    async () => {
      const sessionId = await conversation('user_001', ['Tell me about Porto']);
      const { shareId } = await expectStatus<{ shareId: string }>(
        await api('user_001', `history/conversations/${sessionId}/shares`, 'POST'),
        201,
      );
      expect((await api('user_001', `history/conversations/${sessionId}`, 'DELETE')).status).toBe(204);
      const reader = await signedOut(`/s/${shareId}`, { width: 1280, height: 800 }, 'dark');
      try {
        await expect
          .poll(() => reader.page.getByRole('heading', { name: 'This link does not work' }).count(), {
            timeout: UI_TIMEOUT,
          })
          .toBe(1);
        expect(await seriousViolations(reader.page)).toEqual([]);
      } finally {
        await reader.context.close();
      }
    },
    TEST_TIMEOUT,
  );

  it(
    'lets a signed-in reader continue the conversation as their own',
    async () => {
      const sessionId = await conversation('user_001', ['Which trains run to Sintra?']);
      const { shareId } = await expectStatus<{ shareId: string }>(
        await api('user_001', `history/conversations/${sessionId}/shares`, 'POST'),
        201,
      );
      const { page } = await web.open({ userId: 'user_002', path: `/s/${shareId}` });
      await page.getByRole('button', { name: 'Continue this conversation' }).click();
      await expect
        .poll(() => new URL(page.url()).searchParams.get('session'), { timeout: UI_TIMEOUT })
        .toMatch(/^[0-9a-f-]{36}$/);
      const copied = new URL(page.url()).searchParams.get('session') ?? '';
      expect(copied).not.toBe(sessionId);
      const history = await expectStatus<{ messages: { content: string }[] }>(
        await api('user_002', `history/conversations/${copied}`),
        200,
      );
      expect(history.messages[0]?.content).toBe('Which trains run to Sintra?');
      await expect
        .poll(() => page.getByText('Which trains run to Sintra?').count(), { timeout: UI_TIMEOUT })
        .toBeGreaterThan(0);
    },
    TEST_TIMEOUT,
  );
});
