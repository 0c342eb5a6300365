// The MCP servers settings in real Chromium, against the local runtime and a real MCP server on loopback: add from
// the page (a header value never shown back), test, refusals, disable, remove; the operator's server is read-only,
// and another user's page does not list a user's server.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callApi } from '../support/api-turns.js';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { describeBrowser, openPage, startWebRuntime, useSharedBrowser } from '../support/browser.js';
import type { OpenedPage, WebRuntime } from '../support/browser.js';
import type { TestMcpServer } from '../support/test-mcp-server.js';
import { startWeatherMcpServer } from '../support/weather-mcp-server.js';

const UI_TIMEOUT = 30_000;
const TEST_TIMEOUT = 120_000;
const API_KEY = 'Bearer wx-secret-77c1e0b2';

/** Uncaught errors and React's; not Chromium's line for each refusal the view shows in its own way. */
function pageErrors(consoleErrors: readonly string[]): string[] {
  return consoleErrors.filter(
    (line) => !line.startsWith('Failed to load resource: the server responded with a status of'),
  );
}

describeBrowser('the MCP servers settings', () => {
  useSharedBrowser();
  let mcp: TestMcpServer;
  let web: WebRuntime;
  const pages: OpenedPage[] = [];

  beforeAll(async () => {
    mcp = await startWeatherMcpServer({ alarm: true });
    web = await startWebRuntime({
      settings: { MCP_SERVERS: JSON.stringify([{ name: 'wiki', url: mcp.url, approval: 'never' }]) },
    });
  }, TEST_TIMEOUT);
  afterAll(async () => {
    for (const page of pages.splice(0)) await page.close().catch(() => undefined);
    await web?.stop();
    await mcp?.stop();
  });

  async function openSettings(userId: string): Promise<{ opened: OpenedPage; dialog: Locator }> {
    const opened = await openPage(web.url, { userId });
    pages.push(opened);
    await opened.page.getByRole('banner').getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = opened.page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('heading', { name: 'Yours' }).waitFor({ timeout: UI_TIMEOUT });
    return { opened, dialog };
  }

  function serverItem(dialog: Locator, name: string): Locator {
    return dialog.getByRole('listitem', { name, exact: true });
  }

  async function addServer(dialog: Locator, name: string, url: string, header?: [string, string]) {
    await dialog.getByLabel('Name', { exact: true }).fill(name);
    await dialog.getByLabel('URL', { exact: true }).fill(url);
    if (header !== undefined) {
      await dialog.getByRole('button', { name: 'Add a header' }).click();
      await dialog.getByLabel('Header 1 name').fill(header[0]);
      await dialog.getByLabel('Header 1 value').fill(header[1]);
    }
    await dialog.getByRole('button', { name: 'Add server' }).click();
  }

  async function alertText(page: Page): Promise<string> {
    const alert = page.getByRole('dialog', { name: 'Settings' }).getByRole('alert');
    await alert.first().waitFor({ timeout: UI_TIMEOUT });
    return (await alert.allTextContents()).join(' | ');
  }

  it(
    'adds a server from the page, tests it, shows refusals, disables and removes it',
    async () => {
      const { opened, dialog } = await openSettings('user_001');
      const { page } = opened;

      // The operator's server is listed, read-only: it can be tested, not changed or removed.
      const wiki = serverItem(dialog, 'wiki');
      await wiki.waitFor({ timeout: UI_TIMEOUT });
      expect(await wiki.textContent()).toContain('read-only');
      expect(await wiki.getByRole('button', { name: 'Remove wiki' }).count()).toBe(0);
      expect(await wiki.getByRole('checkbox').count()).toBe(0);

      await addServer(dialog, 'weather', mcp.url, ['Authorization', API_KEY]);
      const weather = serverItem(dialog, 'weather');
      await weather.waitFor({ timeout: UI_TIMEOUT });
      expect(await weather.textContent()).toContain('Headers: Authorization (values hidden)');
      expect(await weather.textContent()).toContain('Approval: asked unless the tool is read-only');
      expect(await wiki.textContent()).toContain('Approval: never asked');
      // The value is neither on the page nor left in the form once sent.
      await expect.poll(() => page.content()).not.toContain('wx-secret');
      expect(await dialog.getByLabel('Header 1 value').count()).toBe(0);

      // Test: both tools are offered by their model names; the one not read-only needs approval.
      await dialog.getByRole('button', { name: 'Test weather' }).click();
      const tools = dialog.getByRole('list', { name: 'Tools of weather' });
      await tools.waitFor({ timeout: UI_TIMEOUT });
      const [weatherTool, alarmTool] = await tools.getByRole('listitem').allTextContents();
      expect(weatherTool).toContain('get_weather');
      expect(weatherTool).toContain('Offered');
      expect(weatherTool).toContain('as mcp__weather__get_weather');
      expect(alarmTool).toContain('set_alarm');
      expect(alarmTool).toContain('Offered, needs approval');
      expect(alarmTool).toContain('as mcp__weather__set_alarm');
      expect(await weather.textContent()).toContain(
        'A call of a tool that needs your approval waits for your Approve or Deny in the conversation.',
      );
      // The service reached the server with the header the page sent.
      expect(mcp.requests.some((request) => request.headers.authorization === API_KEY)).toBe(true);

      // Refusals, each in the service's words: a name taken by the operator's server, a malformed name, and a
      // server that cannot be reached when tested.
      await addServer(dialog, 'wiki', mcp.url);
      expect(await alertText(page)).toContain('An MCP server named "wiki" is already in your list');
      await addServer(dialog, 'Weather Tools', mcp.url);
      await expect
        .poll(() => alertText(page), { timeout: UI_TIMEOUT })
        .toContain('name must be 1 to 32 lowercase letters');
      await addServer(dialog, 'gone', 'http://127.0.0.1:1/mcp');
      await serverItem(dialog, 'gone').waitFor({ timeout: UI_TIMEOUT });
      await dialog.getByRole('button', { name: 'Test gone' }).click();
      const refused = serverItem(dialog, 'gone').getByRole('alert');
      await refused.waitFor({ timeout: UI_TIMEOUT });
      expect(await refused.textContent()).toMatch(/^gone: .+/);

      // Disabled: the service keeps it disabled.
      const user = new ChatClient(web.url, 'user_001');
      await weather.getByRole('checkbox', { name: /Enabled/ }).uncheck();
      await expect
        .poll(
          async () => {
            const { servers } = await expectStatus<{ servers: { name: string; enabled: boolean }[] }>(
              await callApi(web, user, 'GET', 'mcp-servers'),
              200,
            );
            return servers.find((server) => server.name === 'weather')?.enabled;
          },
          { timeout: UI_TIMEOUT },
        )
        .toBe(false);

      // Removed after the confirmation: gone from the page and from the service.
      await weather.getByRole('button', { name: 'Remove weather' }).click();
      const confirm = page.getByRole('dialog', { name: 'Remove this MCP server?' });
      await confirm.getByRole('button', { name: 'Remove' }).click();
      await expect.poll(() => serverItem(dialog, 'weather').count(), { timeout: UI_TIMEOUT }).toBe(0);
      const { servers } = await expectStatus<{ servers: { name: string }[] }>(
        await callApi(web, user, 'GET', 'mcp-servers'),
        200,
      );
      expect(servers.map((server) => server.name)).toEqual(['wiki', 'gone']);
      expect(pageErrors(opened.consoleErrors)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "does not list a user's server on another user's page",
    async () => {
      const owner = new ChatClient(web.url, 'user_002');
      await expectStatus(
        await callApi(web, owner, 'POST', 'mcp-servers', { name: 'private-notes', url: mcp.url }),
        201,
      );
      const { dialog: ownerDialog } = await openSettings('user_002');
      await serverItem(ownerDialog, 'private-notes').waitFor({ timeout: UI_TIMEOUT });

      const { opened, dialog } = await openSettings('user_003');
      await serverItem(dialog, 'wiki').waitFor({ timeout: UI_TIMEOUT });
      expect(await dialog.getByText('You have added no server yet.').count()).toBe(1);
      expect(await serverItem(dialog, 'private-notes').count()).toBe(0);
      expect(await opened.page.content()).not.toContain('private-notes');
      expect(pageErrors(opened.consoleErrors)).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
