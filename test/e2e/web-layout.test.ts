// The web client's layout at phone and tablet widths (320, 390, 768 px): no view scrolls sideways, the header's
// actions are on screen, the message box takes the width, and the sidebar and panels open as drawers.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { settle } from '../support/local-runtime.js';

const HANDBOOK = fileURLToPath(new URL('../../samples/handbook.md', import.meta.url));
const UI_TIMEOUT = 30_000;
const WIDTHS = [320, 390, 768] as const;
/** A message with nothing to break a line at, and a long address: the usual causes of a page wider than the screen. */
const LONG = `Unbreakable ${'x'.repeat(300)} and https://example.com/${'path/'.repeat(40)} end. I love sailing.`;

interface Extent {
  scrollWidth: number;
  innerWidth: number;
}

function extent(page: Page): Promise<Extent> {
  return page.evaluate<Extent>(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  );
}

describeBrowser('the web client on narrow screens', () => {
  const web = useWebRuntime();

  it('has no horizontal overflow on any view at 320, 390 and 768 px, and keeps its actions on screen', async () => {
    const client = new ChatClient(web.url, 'user_002');
    const sessionId = await client.startSession();
    await client.stream(sessionId, await client.send(sessionId, LONG), { timeoutMs: 60_000 });
    const form = new FormData();
    form.append('file', new Blob([readFileSync(HANDBOOK)], { type: 'text/markdown' }), 'handbook.md');
    await expectStatus(
      await fetch(`${web.url}/api/knowledge/documents`, {
        method: 'POST',
        headers: client.headers(),
        body: form,
      }),
      202,
    );
    await settle(web.runtime);

    const overflowing: string[] = [];
    for (const width of WIDTHS) {
      const { page, consoleErrors } = await web.open({
        userId: 'user_002',
        viewport: { width, height: 800 },
      });
      const check = async (view: string) => {
        const { scrollWidth, innerWidth } = await extent(page);
        if (scrollWidth > innerWidth)
          overflowing.push(`${width} px, ${view}: ${scrollWidth} > ${innerWidth}`);
      };
      const header = page.getByRole('banner');

      await page.getByRole('textbox', { name: 'Message' }).waitFor({ timeout: UI_TIMEOUT });
      await check('new chat');
      // The header's actions are inside the screen, and the message box takes most of its width.
      for (const name of ['Conversations', 'New chat', 'Switch to dark theme', 'Memory & knowledge']) {
        const box = await header.getByRole('button', { name, exact: true }).boundingBox();
        expect(box, `${name} at ${width} px`).not.toBeNull();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(width);
      }
      const composer = await page.getByRole('textbox', { name: 'Message' }).boundingBox();
      expect(composer!.width).toBeGreaterThan(width * 0.75);

      // The sidebar is a drawer: it opens from the header and closes once a conversation is opened.
      await header.getByRole('button', { name: 'Conversations', exact: true }).click();
      const drawer = page.getByRole('dialog', { name: 'Conversations' });
      await drawer.getByRole('button', { name: /^Unbreakable/ }).waitFor({ timeout: UI_TIMEOUT });
      await check('conversations');
      await drawer.getByRole('button', { name: /^Unbreakable/ }).click();
      await expect.poll(() => drawer.count()).toBe(0);
      await page.getByRole('article', { name: 'Answer' }).waitFor({ timeout: UI_TIMEOUT });
      await check('a conversation with a long message');

      await header.getByRole('button', { name: 'Memory & knowledge', exact: true }).click();
      const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });
      await panels.getByText('The user loves sailing.').waitFor({ timeout: UI_TIMEOUT });
      await check('memory');
      await panels.getByRole('tab', { name: 'Knowledge' }).click();
      await panels.getByText('Ready').waitFor({ timeout: UI_TIMEOUT });
      await check('knowledge');
      await panels.getByRole('button', { name: 'Delete handbook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete this document?' });
      await dialog.waitFor({ timeout: UI_TIMEOUT });
      await check('confirmation');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(consoleErrors).toEqual([]);
    }
    expect(overflowing).toEqual([]);
  }, 180_000);
});
