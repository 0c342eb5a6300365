// The workspace choices in real Chromium on a scripted model with a two-model catalogue: the model picked for a new
// chat, a later message and a regenerate is the one called, an assistant's starter opens the chat and its
// instructions reach the model, and a conversation filed in a project is listed under that project's filter.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { SCRIPTED_MODEL } from '../support/scripted-model.js';

const UI_TIMEOUT = 60_000;
const TEST_TIMEOUT = 180_000;
const DEEP = 'deep-model';
const CATALOGUE = JSON.stringify([
  { id: SCRIPTED_MODEL, label: 'Fast' },
  { id: DEEP, label: 'Deep' },
]);

describeBrowser('the workspace choices in the web client', () => {
  const web = useWebRuntime({
    script: (request) => ({ content: `answered by ${request.model}` }),
    settings: { LLM_MODELS: CATALOGUE },
  });

  /** The streamed chat request whose newest user message is `text`. */
  const requestFor = (text: string) =>
    web.model?.requests
      .filter((request) => request.stream === true)
      .find((request) => request.messages.findLast((message) => message.role === 'user')?.content === text);

  /** The models of the streamed chat requests whose newest user message is `text`, in order. */
  const modelsAsked = (text: string) =>
    web.model?.requests
      .filter((request) => request.stream === true)
      .filter((request) => request.messages.findLast((message) => message.role === 'user')?.content === text)
      .map((request) => request.model);

  const answers = (page: Page) => page.getByRole('article', { name: 'Answer' });
  const sidebar = (page: Page) => page.getByRole('complementary', { name: 'Conversations' });

  it(
    'calls the picked model, starts with an assistant and files the chat in a project',
    async () => {
      const client = new ChatClient(web.url, 'user_001');
      await expectStatus(
        await fetch(`${web.url}/api/assistants`, {
          method: 'POST',
          headers: { ...client.headers(), 'content-type': 'application/json' },
          body: JSON.stringify({
            name: 'Pirate',
            description: 'Talks like a pirate.',
            instructions: 'Always answer like a pirate.',
            starters: ['Where is the treasure?'],
          }),
        }),
        201,
      );
      const { page, consoleErrors } = await web.open({ userId: 'user_001' });

      // A new chat: the Deep model and the Pirate assistant; the assistant's starter sends the first message.
      await page.getByRole('combobox', { name: 'Model' }).selectOption({ label: 'Deep' });
      await page.getByRole('combobox', { name: 'Assistant' }).selectOption({ label: 'Pirate' });
      const starters = page.getByRole('list', { name: 'Starters' });
      await starters.getByRole('button', { name: 'Where is the treasure?' }).click();
      await expect
        .poll(() => answers(page).first().textContent(), { timeout: UI_TIMEOUT })
        .toContain(`answered by ${DEEP}`);
      const first = requestFor('Where is the treasure?');
      expect(first?.model).toBe(DEEP);
      expect(first?.messages.find((message) => message.role === 'system')?.content).toContain(
        'Always answer like a pirate.',
      );

      // The open conversation: the next message goes to the model picked for it.
      await page.getByRole('combobox', { name: 'Model' }).selectOption({ label: 'Fast' });
      const composer = page.getByRole('textbox', { name: 'Message' });
      await composer.fill('And the map?');
      await composer.press('Enter');
      await expect
        .poll(() => answers(page).nth(1).textContent(), { timeout: UI_TIMEOUT })
        .toContain(`answered by ${SCRIPTED_MODEL}`);
      expect(requestFor('And the map?')?.model).toBe(SCRIPTED_MODEL);

      // A regenerate goes to the model still picked, not to the conversation's own (Deep).
      await answers(page).nth(1).getByRole('button', { name: 'Regenerate' }).click();
      await expect.poll(() => modelsAsked('And the map?')?.length, { timeout: UI_TIMEOUT }).toBe(2);
      expect(modelsAsked('And the map?')).toEqual([SCRIPTED_MODEL, SCRIPTED_MODEL]);
      await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: UI_TIMEOUT });

      // A project made from the sidebar is its filter; the conversation filed in it is listed there.
      const sessionId = new URL(page.url()).searchParams.get('session');
      expect(sessionId).toBeTruthy();
      await sidebar(page).getByRole('button', { name: 'New project' }).click();
      await sidebar(page).getByRole('textbox', { name: 'Project name' }).fill('Voyages');
      await sidebar(page).getByRole('button', { name: 'Create' }).click();
      const filter = sidebar(page).getByRole('combobox', { name: 'Project' });
      await expect
        .poll(async () => filter.locator('option:checked').textContent(), { timeout: UI_TIMEOUT })
        .toBe('Voyages');
      const titles = sidebar(page).locator('.conversation-title');
      await expect.poll(() => titles.count(), { timeout: UI_TIMEOUT }).toBe(0);
      await sidebar(page)
        .getByRole('combobox', { name: 'Move this chat to' })
        .selectOption({ label: 'Voyages' });
      await sidebar(page).getByText('Filed in Voyages.').waitFor({ timeout: UI_TIMEOUT });
      await expect.poll(() => titles.count(), { timeout: UI_TIMEOUT }).toBe(1);
      await expect
        .poll(() => sidebar(page).locator('[aria-current="page"]').count(), { timeout: UI_TIMEOUT })
        .toBe(1);
      await filter.selectOption({ label: 'All conversations' });
      expect(consoleErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
