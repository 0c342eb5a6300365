// The web client's layout at phone and tablet widths (320, 390, 768 px): no view (settings included) scrolls
// sideways, the header's actions are on screen, the message box takes the width, and the sidebar and panels open
// as drawers.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { seedViews, VIEW_SETTINGS, walkViews } from '../support/web-views.js';

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
  const web = useWebRuntime({ settings: VIEW_SETTINGS });

  it('has no horizontal overflow on any view at 320, 390 and 768 px, and keeps its actions on screen', async () => {
    await seedViews(web, 'user_002', LONG);

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
      for (const name of [
        'Conversations',
        'New chat',
        'Switch to dark theme',
        'Settings',
        'Memory & knowledge',
      ]) {
        const box = await header.getByRole('button', { name, exact: true }).boundingBox();
        expect(box, `${name} at ${width} px`).not.toBeNull();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(width);
      }
      const composer = await page.getByRole('textbox', { name: 'Message' }).boundingBox();
      expect(composer!.width).toBeGreaterThan(width * 0.75);

      // The sidebar and the panels are drawers, opened from the header.
      await walkViews(page, { drawers: true, conversation: /^Unbreakable/ }, check);
      expect(consoleErrors).toEqual([]);
    }
    expect(overflowing).toEqual([]);
  }, 180_000);
});
