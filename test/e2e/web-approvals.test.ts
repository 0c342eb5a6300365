// The approval card in Chromium: Approve, Deny and Always allow on a call that waits (also when the page is opened
// again); an "always allow" is listed in the settings under its server and revoked from there.
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, openPage, startWebRuntime, useSharedBrowser } from '../support/browser.js';
import type { OpenedPage, WebRuntime } from '../support/browser.js';
import { startTestMcpServer, type TestMcpServer } from '../support/test-mcp-server.js';

const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 120_000;
const TOOL = 'mcp__files__delete_file';

describeBrowser('the approval card', () => {
  useSharedBrowser();
  let mcp: TestMcpServer;
  let web: WebRuntime;
  const pages: OpenedPage[] = [];
  const deleted: string[] = [];

  beforeAll(async () => {
    mcp = await startTestMcpServer((server) => {
      server.registerTool(
        'delete_file',
        { description: 'Deletes a file.', inputSchema: z.object({ path: z.string() }) },
        ({ path }) => {
          deleted.push(path);
          return { content: [{ type: 'text', text: `Deleted ${path}` }] };
        },
      );
    });
    web = await startWebRuntime({
      script: (request) => {
        const last = request.messages.at(-1);
        if (request.stream !== true) return { content: 'A title' };
        if (last?.role === 'tool') return { content: `The tool said: ${String(last.content)}` };
        const path = String(last?.content ?? '').replace(/^delete /, '');
        return { toolCalls: [{ name: TOOL, arguments: JSON.stringify({ path }) }] };
      },
      settings: { MCP_SERVERS: JSON.stringify([{ name: 'files', url: mcp.url, approval: 'always' }]) },
    });
  }, TEST_TIMEOUT);
  afterAll(async () => {
    for (const page of pages.splice(0)) await page.close().catch(() => undefined);
    await web?.stop();
    await mcp?.stop();
  });

  async function open(): Promise<OpenedPage> {
    const opened = await openPage(web.url, { userId: 'user_001' });
    pages.push(opened);
    return opened;
  }

  it(
    'approves a call from the card, and the answer goes on with its result',
    async () => {
      const { page } = await open();
      const composer = page.getByRole('textbox', { name: 'Message' });
      await composer.fill('delete w.txt');
      await composer.press('Enter');
      const card = page.getByRole('region', { name: `Approval of ${TOOL}` });
      await card.waitFor({ timeout: UI_TIMEOUT });
      expect(await card.textContent()).toContain('"path": "w.txt"');
      expect(deleted).not.toContain('w.txt');
      await card.getByRole('button', { name: 'Approve' }).click();
      await page.getByText('The tool said: Deleted w.txt').waitFor({ timeout: UI_TIMEOUT });
      expect(deleted).toContain('w.txt');
      expect(await page.getByRole('region', { name: `Approval of ${TOOL}` }).count()).toBe(0);
    },
    TEST_TIMEOUT,
  );

  it(
    'shows a waiting call again when the page is opened later, and denies it from there',
    async () => {
      const first = await open();
      const composer = first.page.getByRole('textbox', { name: 'Message' });
      await composer.fill('delete x.txt');
      await composer.press('Enter');
      const card = first.page.getByRole('region', { name: `Approval of ${TOOL}` });
      await card.waitFor({ timeout: UI_TIMEOUT });
      const url = first.page.url();
      await first.close();

      // Another tab (another device alike) opens the conversation while the call still waits.
      const later = await open();
      await later.page.goto(url);
      const again = later.page.getByRole('region', { name: `Approval of ${TOOL}` });
      await again.waitFor({ timeout: UI_TIMEOUT });
      await again.getByRole('button', { name: 'Deny' }).click();
      await later.page
        .getByText('The tool said: {"error":"The user denied this call"}')
        .waitFor({ timeout: UI_TIMEOUT });
      expect(deleted).not.toContain('x.txt');
    },
    TEST_TIMEOUT,
  );

  it(
    'lists an "always allow" in the settings under its server, and revokes it from there',
    async () => {
      const { page, consoleErrors } = await open();
      const composer = page.getByRole('textbox', { name: 'Message' });
      await composer.fill('delete y.txt');
      await composer.press('Enter');
      const card = page.getByRole('region', { name: `Approval of ${TOOL}` });
      await card.waitFor({ timeout: UI_TIMEOUT });
      await card.getByRole('button', { name: 'Always allow this tool' }).click();
      await page.getByText('The tool said: Deleted y.txt').waitFor({ timeout: UI_TIMEOUT });

      const user = new ChatClient(web.url, 'user_001');
      const { servers } = await expectStatus<{ servers: { id: string; name: string }[] }>(
        await fetch(`${web.url}/api/mcp-servers`, { headers: user.headers() }),
        200,
      );
      const files = servers.find((server) => server.name === 'files');
      expect(files).toBeDefined();
      const approvalsUrl = `${web.url}/api/mcp-servers/${encodeURIComponent(files?.id ?? '')}/approvals`;
      const remembered = async () =>
        (
          await expectStatus<{ approvals: { tool: string }[] }>(
            await fetch(approvalsUrl, { headers: user.headers() }),
            200,
          )
        ).approvals.map((grant) => grant.tool);
      expect(await remembered()).toEqual(['delete_file']);

      await page.getByRole('banner').getByRole('button', { name: 'Settings', exact: true }).click();
      const server = page
        .getByRole('dialog', { name: 'Settings' })
        .getByRole('listitem', { name: 'files', exact: true });
      const allowed = server.getByRole('list', { name: 'Tools of files always allowed' });
      await allowed.waitFor({ timeout: UI_TIMEOUT });
      expect(await allowed.getByRole('listitem').allTextContents()).toEqual([
        expect.stringContaining('delete_file'),
      ]);

      await allowed.getByRole('button', { name: 'Revoke always allow of delete_file' }).click();
      await server.getByText('Always allowed: no tool.').waitFor({ timeout: UI_TIMEOUT });
      expect(await remembered()).toEqual([]);
      expect(consoleErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
