// The web client's panels in real Chromium against the local runtime and its offline model: the conversations
// sidebar (open, rename, download, delete, search), the memory panel (a fact from another conversation, its source,
// forgetting it) and the knowledge panel (an upload that reaches ready, a quota's 429, delete).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { settle } from '../support/local-runtime.js';

const HANDBOOK = fileURLToPath(new URL('../../samples/handbook.md', import.meta.url));
const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 180_000;

/**
 * What went wrong in the page: uncaught errors and React's, not Chromium's line for each 4xx answer (a favicon the
 * page has none of, the title of a conversation a memory outlived), which a panel shows in its own way.
 */
function pageErrors(consoleErrors: readonly string[]): string[] {
  return consoleErrors.filter(
    (line) => !line.startsWith('Failed to load resource: the server responded with a status of 4'),
  );
}

describeBrowser('the web client panels', () => {
  // As the sample settings have it: user_003's uploads go to the shared library.
  const web = useWebRuntime({ settings: { KNOWLEDGE_SHARED_LIBRARY: 'user_003' } });

  /** A conversation of one message, answered, and its workers (history, memory) done. */
  async function converse(userId: string, text: string): Promise<string> {
    const client = new ChatClient(web.url, userId);
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(sessionId, text);
    await client.stream(sessionId, chatMessageId, { timeoutMs: 60_000 });
    await settle(web.runtime);
    return sessionId;
  }

  function sidebar(page: Page) {
    return page.getByRole('complementary', { name: 'Conversations' });
  }

  function titlesIn(page: Page): Promise<string[]> {
    return sidebar(page).locator('.conversation-title').allTextContents();
  }

  it(
    'lists conversations newest first, searches, opens, renames and deletes them',
    async () => {
      const lisbon = await converse('user_002', 'Planning a trip to Lisbon in spring');
      await converse('user_002', 'Recipes for sourdough bread');
      const bicycle = await converse('user_002', 'Fixing my bicycle brakes');
      const { page, consoleErrors } = await web.open({ userId: 'user_002' });

      await expect
        .poll(() => titlesIn(page), { timeout: UI_TIMEOUT })
        .toEqual([
          'Fixing my bicycle brakes',
          'Recipes for sourdough bread',
          'Planning a trip to Lisbon in spring',
        ]);

      await sidebar(page).getByRole('searchbox', { name: 'Search conversations' }).fill('sourdough');
      await expect
        .poll(() => titlesIn(page), { timeout: UI_TIMEOUT })
        .toEqual(['Recipes for sourdough bread']);
      await sidebar(page).getByRole('searchbox', { name: 'Search conversations' }).fill('');
      await expect.poll(() => titlesIn(page), { timeout: UI_TIMEOUT }).toHaveLength(3);

      const open = sidebar(page).getByRole('button', { name: /^Planning a trip to Lisbon/ });
      await open.click();
      await expect.poll(() => open.getAttribute('aria-current'), { timeout: UI_TIMEOUT }).toBe('page');
      const chatLog = page.getByRole('log', { name: 'Messages' });
      await expect
        .poll(() => chatLog.getByRole('article', { name: 'Your message' }).allTextContents(), {
          timeout: UI_TIMEOUT,
        })
        .toEqual([expect.stringContaining('Planning a trip to Lisbon in spring')]);

      await sidebar(page).getByRole('button', { name: 'Rename Planning a trip to Lisbon in spring' }).click();
      const title = sidebar(page).getByRole('textbox', { name: 'New title' });
      await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe(`rename-${lisbon}`);
      await title.fill('Lisbon itinerary');
      await title.press('Enter');
      await expect.poll(() => titlesIn(page), { timeout: UI_TIMEOUT }).toContain('Lisbon itinerary');
      // Focus lands back on the renamed conversation, and on the search once one is deleted (below).
      await expect
        .poll(() => page.evaluate('document.activeElement?.id'), { timeout: UI_TIMEOUT })
        .toBe(`conversation-${lisbon}`);
      const headers = new ChatClient(web.url, 'user_002').headers();
      const renamed = await expectStatus<{ title: string }>(
        await fetch(`${web.url}/api/history/conversations/${lisbon}?limit=1`, { headers }),
        200,
      );
      expect(renamed.title).toBe('Lisbon itinerary');

      // Download saves the conversation as the Markdown the History API exports, under its title.
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: UI_TIMEOUT }),
        sidebar(page).getByRole('button', { name: 'Download Lisbon itinerary' }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/\.md$/);
      const folder = await mkdtemp(join(tmpdir(), 'export-'));
      const savedAt = join(folder, download.suggestedFilename());
      await download.saveAs(savedAt);
      const saved = await readFile(savedAt);
      await rm(folder, { recursive: true, force: true });
      expect(saved.toString('utf8')).toContain('Planning a trip to Lisbon in spring');
      expect(saved.toString('utf8')).toContain('Lisbon itinerary');

      // Cancelling the confirmation keeps the conversation; confirming deletes it everywhere.
      const remove = sidebar(page).getByRole('button', { name: 'Delete Fixing my bicycle brakes' });
      await remove.click();
      const dialog = page.getByRole('dialog', { name: 'Delete this conversation?' });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(false);
      expect(await titlesIn(page)).toContain('Fixing my bicycle brakes');
      await remove.click();
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await expect
        .poll(() => titlesIn(page), { timeout: UI_TIMEOUT })
        .toEqual(['Recipes for sourdough bread', 'Lisbon itinerary']);
      await expect
        .poll(() => page.evaluate('document.activeElement?.id'), { timeout: UI_TIMEOUT })
        .toBe('conversation-search');
      expect((await fetch(`${web.url}/api/history/conversations/${bicycle}`, { headers })).status).toBe(404);
      expect(pageErrors(consoleErrors)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'shows a fact learned in another conversation with its source, opens that conversation, and forgets the fact',
    async () => {
      const source = await converse('user_001', 'I love sailing.');
      await converse('user_001', 'What is the weather like on the coast?');
      const { page, consoleErrors } = await web.open({ userId: 'user_001' });
      const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });

      const fact = panels.getByRole('listitem').filter({ hasText: 'The user loves sailing.' });
      await expect.poll(() => fact.count(), { timeout: UI_TIMEOUT }).toBe(1);
      const link = fact.getByRole('link', { name: 'I love sailing.' });
      await expect.poll(() => link.count(), { timeout: UI_TIMEOUT }).toBe(1);
      expect(await fact.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T/);

      await link.click();
      const opened = sidebar(page).getByRole('button', { name: /^I love sailing/ });
      await expect.poll(() => opened.getAttribute('aria-current'), { timeout: UI_TIMEOUT }).toBe('page');

      await fact.getByRole('button', { name: 'Forget: The user loves sailing.' }).click();
      await page
        .getByRole('dialog', { name: 'Forget this fact?' })
        .getByRole('button', { name: 'Forget' })
        .click();
      await expect.poll(() => fact.count(), { timeout: UI_TIMEOUT }).toBe(0);
      const headers = new ChatClient(web.url, 'user_001').headers();
      const memories = await expectStatus<{
        facts: { statement: string }[];
        summaries: { sessionId: string }[];
      }>(await fetch(`${web.url}/api/memory/users/user_001/memories?status=active`, { headers }), 200);
      expect(memories.facts.map((known) => known.statement)).not.toContain('The user loves sailing.');
      // Only the fact went: the conversation's summary is still remembered.
      expect(memories.summaries.map((summary) => summary.sessionId)).toContain(source);
      expect(pageErrors(consoleErrors)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'uploads a document until it is ready, in the library the server chose, is cited by the chat, and deletes it',
    async () => {
      const { page, consoleErrors } = await web.open({ userId: 'user_003' });
      const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });
      await panels.getByRole('tab', { name: 'Knowledge' }).click();
      await panels.getByLabel('Upload a document (Markdown, text, HTML or PDF)').setInputFiles(HANDBOOK);

      const document = panels.getByRole('listitem').filter({ hasText: 'handbook' });
      await expect
        .poll(() => document.locator('.status-badge').textContent(), { timeout: 90_000 })
        .toBe('Ready');
      expect(await panels.getByRole('radio', { name: 'Shared library' }).isChecked()).toBe(true);
      expect(await document.textContent()).toMatch(/\d+ passages/);

      // The chat cites it.
      await page
        .getByRole('textbox', { name: 'Message' })
        .fill('What does the handbook say about parental leave?');
      await page.getByRole('textbox', { name: 'Message' }).press('Enter');
      const sources = page.getByRole('article', { name: 'Answer' }).getByRole('list', { name: 'Sources' });
      await expect
        .poll(() => sources.getByRole('listitem').first().textContent(), { timeout: 90_000 })
        .toContain('handbook › Parental leave');
      // The new chat joins the sidebar as the open conversation once its first answer is committed.
      const started = sidebar(page).getByRole('button', { name: /^What does the handbook say/ });
      await expect.poll(() => started.getAttribute('aria-current'), { timeout: UI_TIMEOUT }).toBe('page');
      // A chip opens on the cited passage and on its document, as the knowledge base knows it.
      const chip = sources.getByRole('listitem').first();
      await chip.locator('summary').click();
      await expect
        .poll(() => chip.textContent(), { timeout: UI_TIMEOUT })
        .toMatch(/From handbook\.md · (?:\d+ pages?|shared library)/);

      await document.getByRole('button', { name: /^Delete / }).click();
      await page
        .getByRole('dialog', { name: 'Delete this document?' })
        .getByRole('button', { name: 'Delete' })
        .click();
      await expect.poll(() => document.count(), { timeout: UI_TIMEOUT }).toBe(0);
      // Opened again on a reloaded page, the chip still shows the passage, and says its document is gone.
      await page.reload();
      const kept = sources.getByRole('listitem').first();
      await kept.locator('summary').click();
      await expect
        .poll(() => kept.textContent(), { timeout: UI_TIMEOUT })
        .toContain('The document is no longer in the knowledge base.');
      expect(await kept.locator('blockquote').textContent()).not.toBe('');
      const listed = await expectStatus<{ documents: unknown[] }>(
        await fetch(`${web.url}/api/knowledge/documents?library=shared`, {
          headers: new ChatClient(web.url, 'user_003').headers(),
        }),
        200,
      );
      expect(listed.documents).toEqual([]);
      expect(pageErrors(consoleErrors)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "shows a quota's 429 with its detail and when to retry, and keeps the list as it was",
    async () => {
      const { page } = await web.open({ userId: 'user_001' });
      // A scripted answer in place of the server's, as a quota would give it.
      await page.route('**/api/knowledge/documents', (route) =>
        route.request().method() === 'POST'
          ? route.fulfill({
              status: 429,
              headers: { 'content-type': 'application/problem+json', 'retry-after': '42' },
              body: JSON.stringify({
                type: 'about:blank',
                title: 'Too Many Requests',
                status: 429,
                code: 'quota_exceeded',
                detail: 'You have uploaded 20 documents today, the most a day allows.',
              }),
            })
          : route.fallback(),
      );
      const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });
      await panels.getByRole('tab', { name: 'Knowledge' }).click();
      await panels.getByLabel('Upload a document (Markdown, text, HTML or PDF)').setInputFiles(HANDBOOK);
      const alert = panels.getByRole('alert');
      await expect
        .poll(() => alert.textContent(), { timeout: UI_TIMEOUT })
        .toBe('You have uploaded 20 documents today, the most a day allows. Try again in 42 s.');
      expect(await panels.getByText('No documents yet.').isVisible()).toBe(true);
    },
    TEST_TIMEOUT,
  );
});
