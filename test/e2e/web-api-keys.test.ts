// The API keys settings in real Chromium against the local runtime: a key made on the page is shown once with its
// warning, works on MCP at once, is listed by its prefix only (never the key again), and is refused once revoked.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, openPage, startWebRuntime, useSharedBrowser } from '../support/browser.js';
import type { OpenedPage, WebRuntime } from '../support/browser.js';
import { listToolsWithKey } from '../support/mcp-with-key.js';

const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 120_000;

describeBrowser('the API keys settings', () => {
  useSharedBrowser();
  let web: WebRuntime;
  const pages: OpenedPage[] = [];

  beforeAll(async () => {
    web = await startWebRuntime();
  }, TEST_TIMEOUT);
  afterAll(async () => {
    for (const page of pages.splice(0)) await page.close().catch(() => undefined);
    await web?.stop();
  });

  /** MCP's tools/list with the key alone, as an MCP client sends it. */
  const useKey = (key: string) =>
    listToolsWithKey(web.url, key, 'web-test').then((response) => response.status);

  it(
    'creates a key shown once, lists it by its prefix, and revokes it',
    async () => {
      const opened = await openPage(web.url, { userId: 'user_001' });
      pages.push(opened);
      const { page } = opened;
      await page.getByRole('banner').getByRole('button', { name: 'Settings', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Settings' });
      await dialog.getByRole('heading', { name: 'API keys' }).waitFor({ timeout: UI_TIMEOUT });

      await dialog.getByLabel('Key name', { exact: true }).fill('Cursor on my laptop');
      await dialog.getByLabel('Key expires', { exact: true }).selectOption({ label: 'In 30 days' });
      await dialog.getByRole('button', { name: 'Create key' }).click();
      const shown = dialog.getByTestId('new-api-key');
      await shown.waitFor({ timeout: UI_TIMEOUT });
      const key = (await shown.textContent()) ?? '';
      expect(key).toMatch(/^cmk_[0-9A-Za-z]{50}$/);
      await expect(dialog.getByText('it will not be shown again').count()).resolves.toBe(1);
      await expect(dialog.getByRole('button', { name: 'Copy the key' }).count()).resolves.toBe(1);
      expect(await useKey(key)).toBe(200);

      // Once dismissed, the page holds only the prefix.
      await dialog.getByRole('button', { name: 'Done' }).click();
      const item = dialog.getByRole('listitem', { name: 'Cursor on my laptop', exact: true });
      await item.waitFor({ timeout: UI_TIMEOUT });
      expect(await item.textContent()).toContain(key.slice(0, 16));
      expect(await page.content()).not.toContain(key.slice(16));
      // Listed before its first use, expiring on the date chosen.
      expect(await item.textContent()).toMatch(/Last used never · Expires [^·]*\d/);

      await item.getByRole('button', { name: 'Revoke Cursor on my laptop' }).click();
      await page
        .getByRole('dialog', { name: 'Revoke this API key?' })
        .getByRole('button', { name: 'Revoke' })
        .click();
      await item.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
      expect(await useKey(key)).toBe(401);
    },
    TEST_TIMEOUT,
  );
});
