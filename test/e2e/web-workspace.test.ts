// The workspace choices in real Chromium on a scripted model with two models: the picked model is the one called,
// an assistant's starter opens the chat with its instructions, and a chat filed in a project is listed under that
// project and what it teaches next lives in the project's memory.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, useWebRuntime } from '../support/browser.js';
import { SCRIPTED_MODEL } from '../support/scripted-model.js';
import { CONVERSATION_SUMMARY_FORMAT, PROFILE_CHANGES_FORMAT } from '../../shared/memory/memory-llm.js';

const UI_TIMEOUT = 60_000;
const TEST_TIMEOUT = 180_000;
const DEEP = 'deep-model';
const TEACH = 'I love sailing.';
const FACT = 'The user loves sailing.';
const CATALOGUE = JSON.stringify([
  { id: SCRIPTED_MODEL, label: 'Fast' },
  { id: DEEP, label: 'Deep' },
]);

describeBrowser('the workspace choices in the web client', () => {
  const web = useWebRuntime({
    script: (request) => {
      const format = request.response_format?.json_schema?.name;
      if (format === CONVERSATION_SUMMARY_FORMAT)
        return {
          content: JSON.stringify({
            summary: 'A voyage.',
            themes: [],
            persons: [],
            places: [],
            user_sentiment: 'neutral',
          }),
        };
      if (format !== PROFILE_CHANGES_FORMAT) return { content: `answered by ${request.model}` };
      // The memory worker's profile call: the one message that says something about the user teaches one fact.
      const taught = request.messages.some((message) => String(message.content).includes(TEACH));
      const add = taught ? [{ category: 'interests', statement: FACT, evidence: TEACH }] : [];
      return { content: JSON.stringify({ add, reaffirm: [], replace: [], retract: [] }) };
    },
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
    'calls the picked model, starts with an assistant, files the chat in a project and remembers there',
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

      // What the filed chat teaches next lives in the project's memory, and the memory panel says so.
      await composer.fill(TEACH);
      await composer.press('Enter');
      await expect
        .poll(() => answers(page).nth(2).textContent(), { timeout: UI_TIMEOUT })
        .toContain(`answered by ${SCRIPTED_MODEL}`);
      const { projects } = await expectStatus<{ projects: { projectId: string; name: string }[] }>(
        await fetch(`${web.url}/api/projects`, { headers: client.headers() }),
        200,
      );
      const voyages = projects.find((project) => project.name === 'Voyages');
      expect(voyages).toBeDefined();
      const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });
      const where = panels.getByRole('combobox', { name: `Where "${FACT}" lives` });
      await expect.poll(() => where.count(), { timeout: UI_TIMEOUT }).toBe(1);
      await expect
        .poll(() => where.inputValue(), { timeout: UI_TIMEOUT })
        .toBe(`project:${voyages?.projectId ?? ''}`);
      expect(await where.locator('option:checked').textContent()).toBe('Project: Voyages');
      expect(consoleErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
