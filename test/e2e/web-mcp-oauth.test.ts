// Connecting an MCP server that requires OAuth from the page, in real Chromium: consent and callback lead back to
// settings saying the account is connected, and its tools list. An answer that needed a connection shows Connect,
// also once the page is reloaded.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { callApi } from '../support/api-turns.js';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, openPage, startWebRuntime, useSharedBrowser } from '../support/browser.js';
import type { OpenedPage, WebRuntime } from '../support/browser.js';
import { startTestMcpServer, type TestMcpServer } from '../support/test-mcp-server.js';
import { startTestOAuthServer, type TestOAuthServer } from '../support/test-oauth-server.js';

const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 120_000;
/** What a server the user never connected offers in its tools' place. */
const CONNECT_DIARY = 'mcp__diary__connect_account';

describeBrowser('connecting an OAuth MCP server from the page', () => {
  useSharedBrowser();
  let authServer: TestOAuthServer;
  let mcp: TestMcpServer;
  let web: WebRuntime;
  const pages: OpenedPage[] = [];

  beforeAll(async () => {
    authServer = await startTestOAuthServer();
    mcp = await startTestMcpServer(
      (server) => {
        server.registerTool(
          'get_note',
          {
            description: 'A note by its title.',
            inputSchema: z.object({ title: z.string() }),
            annotations: { readOnlyHint: true },
          },
          ({ title }) => ({ content: [{ type: 'text', text: `Note ${title}` }] }),
        );
      },
      { oauth: { metadata: authServer.metadata, verifier: authServer } },
    );
    web = await startWebRuntime({
      // The model calls the never-connected server's stand-in when it is offered, and answers plainly otherwise.
      script: (request) => {
        if (request.stream !== true) return { content: 'A title' };
        if (request.messages.at(-1)?.role === 'tool') return { content: 'Connect the diary first.' };
        const offered = (request.tools ?? []).map((tool) => tool.function.name);
        return offered.includes(CONNECT_DIARY)
          ? { toolCalls: [{ name: CONNECT_DIARY, arguments: '{}' }] }
          : { content: 'Nothing to call.' };
      },
    });
  }, TEST_TIMEOUT);
  afterAll(async () => {
    for (const page of pages.splice(0)) await page.close().catch(() => undefined);
    await web?.stop();
    await mcp?.stop();
    await authServer?.stop();
  });

  it(
    'shows Connect for a server that asks, and is connected when the consent comes back',
    async () => {
      const alice = new ChatClient(web.url, 'user_001');
      const added = await expectStatus<{ id: string }>(
        await fetch(`${web.url}/api/mcp-servers`, {
          method: 'POST',
          headers: { ...alice.headers(), 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'notes', url: mcp.url }),
        }),
        201,
      );

      const opened = await openPage(web.url, { userId: 'user_001' });
      pages.push(opened);
      const { page } = opened;
      await page.getByRole('banner').getByRole('button', { name: 'Settings', exact: true }).click();
      let dialog = page.getByRole('dialog', { name: 'Settings' });
      const notes = () => dialog.getByRole('listitem', { name: 'notes', exact: true });
      await notes().waitFor({ timeout: UI_TIMEOUT });

      // Testing it finds that the server asks for an account: its row then offers Connect.
      await dialog.getByRole('button', { name: 'Test notes' }).click();
      await dialog.getByRole('button', { name: 'Connect notes' }).waitFor({ timeout: UI_TIMEOUT });
      expect(await notes().textContent()).toContain('needs you to connect your account');

      // Connect: the consent, the callback, and back on the page with the settings open.
      await dialog.getByRole('button', { name: 'Connect notes' }).click();
      await page.waitForURL((url) => url.origin === new URL(web.url).origin && url.pathname === '/', {
        timeout: UI_TIMEOUT,
      });
      dialog = page.getByRole('dialog', { name: 'Settings' });
      await dialog.getByText('Your account is connected.').waitFor({ timeout: UI_TIMEOUT });
      expect(await notes().textContent()).toContain('Connected just now.');
      expect(new URL(page.url()).searchParams.has('mcpOAuth')).toBe(false);
      expect(authServer.authorizations).toHaveLength(1);

      await dialog.getByRole('button', { name: 'Test notes' }).click();
      const tools = dialog.getByRole('list', { name: 'Tools of notes' });
      await tools.waitFor({ timeout: UI_TIMEOUT });
      expect(await tools.textContent()).toContain('get_note');

      const view = await expectStatus<{ authorization?: string }>(
        await fetch(`${web.url}/api/mcp-servers/${added.id}`, { headers: alice.headers() }),
        200,
      );
      expect(view.authorization).toBe('connected');
    },
    TEST_TIMEOUT,
  );

  it(
    'shows Connect with an answer that needed a server never connected, and again when the page is reloaded',
    async () => {
      const alice = new ChatClient(web.url, 'user_001');
      await expectStatus(
        await callApi(web, alice, 'POST', 'mcp-servers', { name: 'diary', url: mcp.url }),
        201,
      );
      const opened = await openPage(web.url, { userId: 'user_001' });
      pages.push(opened);
      const { page } = opened;
      const composer = page.getByRole('textbox', { name: 'Message' });
      await composer.fill('What did I write in my diary?');
      await composer.press('Enter');
      const answer = page.getByRole('article', { name: 'Answer' });
      await expect
        .poll(() => answer.textContent(), { timeout: UI_TIMEOUT })
        .toContain('Connect the diary first.');
      const need = (at: typeof page) =>
        at.getByRole('status').filter({ hasText: 'The MCP server diary needs you to connect your account.' });
      await need(page).waitFor({ timeout: UI_TIMEOUT });
      expect(await page.getByRole('button', { name: 'Connect diary' }).count()).toBe(1);

      // A page opened afresh has only history to show it from: the stored call still names the server to connect.
      await page.reload();
      await expect
        .poll(() => page.getByRole('article', { name: 'Answer' }).textContent(), { timeout: UI_TIMEOUT })
        .toContain('Connect the diary first.');
      await need(page).waitFor({ timeout: UI_TIMEOUT });
      expect(await page.getByRole('button', { name: 'Connect diary' }).count()).toBe(1);
    },
    TEST_TIMEOUT,
  );
});
