// The composer in Chromium: an image dropped on it shows as a preview, goes with the message, reaches the model as
// an image part, and shows as a thumbnail in the sent message, and again when the conversation is read back; a
// file the server would refuse is refused when it is dropped.
import sharp from 'sharp';
import { expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { dropFiles, imagesIn } from '../support/composer-files.js';

describeBrowser('attachments in the composer', () => {
  const web = useWebRuntime({
    script: (request) => ({ content: `I see ${imagesIn(request)} image(s).` }),
  });

  it('takes a dropped image, sends it, and shows it as a thumbnail in the message', async () => {
    const { page, consoleErrors } = await web.open();
    const png = await sharp({ create: { width: 24, height: 24, channels: 3, background: '#09c' } })
      .png()
      .toBuffer();
    await dropFiles(page, [{ name: 'swatch.png', type: 'image/png', bytes: png }]);

    const previews = page.getByRole('list', { name: 'Files to send' });
    await expect
      .poll(() => previews.getByRole('img', { name: 'swatch.png' }).count(), { timeout: 60_000 })
      .toBe(1);
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('What colour is this?');
    await composer.press('Enter');

    const answer = page.getByRole('article', { name: 'Answer' });
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('I see 1 image(s).');
    const mine = page.getByRole('article', { name: 'Your message' });
    // Once the turn ends the page may show the message as history stores it, its image read back with the token.
    await expect
      .poll(() => mine.getByRole('img', { name: 'swatch.png' }).count(), { timeout: 60_000 })
      .toBe(1);
    expect(await previews.count()).toBe(0);
    const streamed = web.model?.requests.filter((request) => request.stream === true).at(-1);
    expect(streamed === undefined ? 0 : imagesIn(streamed)).toBe(1);

    // Read back from history, the image is fetched with the caller's token and shown from a blob: URL.
    await page.reload();
    const reloaded = page
      .getByRole('article', { name: 'Your message' })
      .getByRole('img', { name: 'swatch.png' });
    await expect.poll(() => reloaded.count(), { timeout: 60_000 }).toBe(1);
    await expect.poll(() => reloaded.getAttribute('src'), { timeout: 60_000 }).toMatch(/^blob:/);
    await expect
      .poll(() => reloaded.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth), {
        timeout: 60_000,
      })
      .toBe(24);
    await page.getByRole('button', { name: 'Open swatch.png' }).click();
    const dialog = page.getByRole('dialog', { name: 'swatch.png' });
    expect(await dialog.getByRole('img', { name: 'swatch.png' }).count()).toBe(1);
    expect(consoleErrors).toEqual([]);
  }, 300_000);

  it('refuses a file the server would refuse when it is dropped, saying why, and keeps the others', async () => {
    const { page, consoleErrors } = await web.open();
    await dropFiles(page, [
      { name: 'archive.zip', type: 'application/zip', bytes: Buffer.from('PK') },
      { name: 'notes.md', type: 'text/markdown', bytes: Buffer.from('# Notes') },
    ]);

    const refused = page.getByRole('list', { name: 'Files not attached' });
    await expect.poll(() => refused.textContent(), { timeout: 60_000 }).toContain('archive.zip');
    expect(await refused.textContent()).toContain('application/zip is not taken here');
    expect(await page.getByRole('list', { name: 'Files to send' }).textContent()).toContain('notes.md');
    expect(await page.getByRole('list', { name: 'Files to send' }).textContent()).not.toContain(
      'archive.zip',
    );
    expect(consoleErrors).toEqual([]);
  }, 120_000);
});
