// The web client's main views, walked the way a user reaches them (conversations, a conversation, memory,
// knowledge, a confirmation, settings, projects, a new chat's choices), with something in each: what the layout
// and the accessibility tests check.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, onTestFinished } from 'vitest';
import { z } from 'zod';
import type { WebRuntimeFixture } from './browser.js';
import { ChatClient, expectStatus } from './chat-client.js';
import { settle } from './local-runtime.js';
import { startTestMcpServer } from './test-mcp-server.js';

const HANDBOOK = fileURLToPath(new URL('../../samples/handbook.md', import.meta.url));
const UI_TIMEOUT = 30_000;

export type WebView =
  | 'conversations'
  | 'conversation'
  | 'memory'
  | 'knowledge'
  | 'confirmation'
  | 'settings'
  | 'projects'
  | 'new chat';

/** Runtime settings the views need: a catalogue of two models (the offline model first), so the picker shows. */
export const VIEW_SETTINGS = {
  LLM_MODELS: JSON.stringify([
    { id: 'offline-stand-in', label: 'Offline' },
    { id: 'offline-deep', label: 'Offline, thinking longer' },
  ]),
};

/**
 * Gives `userId` something in every view: a conversation that opens with `message` (the offline model learns
 * "The user loves sailing." from a message that says so), the handbook, ready in the knowledge base, an MCP
 * server on loopback (stopped when the test ends) with a tool offered and one that needs approval, an assistant
 * with conversation starters and a project.
 */
export async function seedViews(web: WebRuntimeFixture, userId: string, message: string): Promise<void> {
  const client = new ChatClient(web.url, userId);
  const sessionId = await client.startSession();
  await client.stream(sessionId, await client.send(sessionId, message), { timeoutMs: 60_000 });
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
  const mcp = await startTestMcpServer((server) => {
    const input = { inputSchema: z.object({ city: z.string() }) };
    server.registerTool(
      'get_weather',
      { description: 'The weather in a city.', ...input, annotations: { readOnlyHint: true } },
      () => ({ content: [{ type: 'text', text: 'Sunny' }] }),
    );
    server.registerTool('book_trip', { description: 'Books a trip to a city.', ...input }, () => ({
      content: [{ type: 'text', text: 'Booked' }],
    }));
  });
  onTestFinished(() => mcp.stop());
  await expectStatus(
    await fetch(`${web.url}/api/mcp-servers`, {
      method: 'POST',
      headers: { ...client.headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'travel', url: mcp.url, headers: { 'X-Api-Key': 'k-1' } }),
    }),
    201,
  );
  const post = (path: string, body: unknown) =>
    fetch(`${web.url}${path}`, {
      method: 'POST',
      headers: { ...client.headers(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  await expectStatus(
    await post('/api/assistants', {
      name: 'Travel planner with a rather long name',
      description: 'Plans trips, day by day.',
      instructions: 'Plan trips day by day.',
      starters: [
        'Plan three days in a city I have never visited, with a long walk each day',
        'Pack for rain',
      ],
    }),
    201,
  );
  await expectStatus(await post('/api/projects', { name: 'Summer holidays' }), 201);
}

/**
 * Walks the views of a page opened on the seeded user, calling `visit` in each. With `drawers`, the sidebar and the
 * panels are opened from the header (a narrow screen); the conversations drawer closes once one is opened.
 */
export async function walkViews(
  page: Page,
  options: { drawers: boolean; conversation: RegExp },
  visit: (view: WebView) => Promise<void>,
): Promise<void> {
  const header = page.getByRole('banner');
  const open = (name: string) => header.getByRole('button', { name, exact: true }).click();
  const conversation = page.getByRole('button', { name: options.conversation });

  if (options.drawers) await open('Conversations');
  await conversation.waitFor({ timeout: UI_TIMEOUT });
  await visit('conversations');
  await conversation.click();
  if (options.drawers)
    await expect.poll(() => page.getByRole('dialog', { name: 'Conversations' }).count()).toBe(0);
  await page.getByRole('article', { name: 'Answer' }).waitFor({ timeout: UI_TIMEOUT });
  await visit('conversation');

  if (options.drawers) await open('Memory & knowledge');
  const panels = page.getByRole('complementary', { name: 'Memory and knowledge' });
  await panels.getByText('The user loves sailing.').waitFor({ timeout: UI_TIMEOUT });
  await visit('memory');
  await panels.getByRole('tab', { name: 'Knowledge' }).click();
  await panels.getByText('Ready').waitFor({ timeout: UI_TIMEOUT });
  await visit('knowledge');
  await panels.getByRole('button', { name: 'Delete handbook' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete this document?' });
  await dialog.waitFor({ timeout: UI_TIMEOUT });
  await visit('confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect.poll(() => dialog.count()).toBe(0);

  // Settings, from the header (a drawer left open would cover it), with the seeded server's tools listed.
  if (options.drawers) {
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog', { name: 'Memory and knowledge' }).count()).toBe(0);
  }
  await open('Settings');
  const settings = page.getByRole('dialog', { name: 'Settings' });
  await settings.getByRole('button', { name: 'Test travel' }).click();
  await settings.getByRole('list', { name: 'Tools of travel' }).waitFor({ timeout: UI_TIMEOUT });
  await settings.getByRole('button', { name: 'New assistant' }).click();
  await settings.getByRole('form', { name: 'New assistant' }).waitFor({ timeout: UI_TIMEOUT });
  await visit('settings');
  await settings.getByRole('button', { name: 'Close settings' }).click();
  await expect.poll(() => settings.count()).toBe(0);

  // Projects, in the sidebar: the filter, a new project's name, and filing the open conversation.
  if (options.drawers) await open('Conversations');
  const sidebar = page.getByRole('complementary', { name: 'Conversations' });
  await sidebar.getByRole('combobox', { name: 'Move this chat to' }).waitFor({ timeout: UI_TIMEOUT });
  await sidebar.getByRole('button', { name: 'New project' }).click();
  await sidebar.getByRole('textbox', { name: 'Project name' }).fill('Winter');
  await visit('projects');
  await sidebar.getByRole('button', { name: 'Cancel' }).click();
  if (options.drawers) {
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog', { name: 'Conversations' }).count()).toBe(0);
  }

  // A new chat's choices: the model, the assistant (its starters in the empty state) and a temporary chat.
  await header.getByRole('button', { name: 'New chat', exact: true }).click();
  await page.getByRole('combobox', { name: 'Model' }).waitFor({ timeout: UI_TIMEOUT });
  await page
    .getByRole('combobox', { name: 'Assistant' })
    .selectOption({ label: 'Travel planner with a rather long name' });
  await page.getByRole('checkbox', { name: 'Temporary chat' }).check();
  await page.getByRole('button', { name: 'Pack for rain' }).waitFor({ timeout: UI_TIMEOUT });
  await page.getByText('deleted after a day').waitFor({ timeout: UI_TIMEOUT });
  await visit('new chat');
}
