// What the composer's browser tests share: files dropped on the composer as a user drags them there, and the count of
// image parts a model request's last user message carried.
import type { Page } from 'playwright-core';
import { imageUrlsOf } from './attachment-runtime.js';
import type { ChatCompletionRequest } from './scripted-model.js';

/** What the page's globals are read as (the tests' tsconfig has no DOM types). */
interface DropGlobals {
  DataTransfer: new () => { items: { add(file: unknown): void } };
  File: new (parts: unknown[], name: string, options: { type: string }) => unknown;
}

export interface DroppedFile {
  name: string;
  type: string;
  bytes: Uint8Array;
}

/** Drops the files on the composer's form, as one drag of them would. */
export async function dropFiles(page: Page, files: readonly DroppedFile[]): Promise<void> {
  const encoded = files.map((file) => ({ ...file, bytes: Buffer.from(file.bytes).toString('base64') }));
  const dropped = await page.evaluateHandle((list) => {
    const globals = globalThis as unknown as DropGlobals;
    const transfer = new globals.DataTransfer();
    for (const file of list) {
      const bytes = Uint8Array.from(atob(file.bytes), (char) => char.charCodeAt(0));
      transfer.items.add(new globals.File([bytes], file.name, { type: file.type }));
    }
    return transfer;
  }, encoded);
  await page.getByRole('form', { name: 'Send a message' }).dispatchEvent('drop', { dataTransfer: dropped });
}

/** How many image parts the request's last user message has. */
export function imagesIn(request: ChatCompletionRequest): number {
  return imageUrlsOf(request).length;
}
