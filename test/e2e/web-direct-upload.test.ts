// The composer in Chromium with a file over the direct-upload size: the page asks for a write-only URL, PUTs the
// file to the local Blob Storage through the runtime's own origin (no certificate to trust), completes it, and the
// model gets the image.
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { expect, it } from 'vitest';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { dropFiles, imagesIn } from '../support/composer-files.js';

describeBrowser('a large file from the composer', () => {
  const web = useWebRuntime({
    script: (request) => ({ content: `I see ${imagesIn(request)} image(s).` }),
    settings: { ATTACHMENTS_DIRECT_UPLOAD_BYTES: '4096' },
  });

  it('goes straight to Blob Storage, is completed, and reaches the model', async () => {
    const { page, consoleErrors } = await web.open();
    const noise = randomBytes(64 * 64 * 3);
    const png = await sharp(noise, { raw: { width: 64, height: 64, channels: 3 } })
      .png()
      .toBuffer();
    expect(png.length).toBeGreaterThan(4096);
    const uploads: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT') uploads.push(new URL(request.url()).origin);
    });
    await dropFiles(page, [{ name: 'noise.png', type: 'image/png', bytes: png }]);
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('What is this?');
    await composer.press('Enter');

    const answer = page.getByRole('article', { name: 'Answer' });
    await expect.poll(() => answer.textContent(), { timeout: 120_000 }).toContain('I see 1 image(s).');
    // On the page's own origin, which the browser trusts as it is: the runtime forwards it to the emulator.
    expect(uploads).toEqual([new URL(web.url).origin]);
    const mine = page.getByRole('article', { name: 'Your message' });
    await expect
      .poll(() => mine.getByRole('img', { name: 'noise.png' }).count(), { timeout: 60_000 })
      .toBe(1);
    // Nothing left pending: the upload was completed.
    const container = web.runtime.blob
      .serviceClient()
      .getContainerClient(web.runtime.config.attachments.blob?.container ?? '');
    const names: string[] = [];
    for await (const blob of container.listBlobsFlat()) names.push(blob.name);
    expect(names.filter((name) => name.startsWith('pending/'))).toEqual([]);
    expect(names).toHaveLength(1);
    expect(consoleErrors).toEqual([]);
  }, 300_000);
});
