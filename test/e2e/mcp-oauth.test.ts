// An MCP server that requires OAuth, end to end: a real MCP server behind the SDK's requireBearerAuth, a small
// authorization server, consent and callback, a turn calling the tool; another user gets nothing of the tokens; an
// expired token is refreshed; a user without tokens gets a Connect event and an answered turn, not a failed one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { startTestMcpServer, type TestMcpServer } from '../support/test-mcp-server.js';
import { startTestOAuthServer, type TestOAuthServer } from '../support/test-oauth-server.js';

const TOOL = 'mcp__notes__get_note';
/** What a server offers in its tools' place before its user ever connected it. */
const CONNECT = 'mcp__notes__connect_account';

describe('an MCP server that requires OAuth', { timeout: 90_000 }, () => {
  let authServer: TestOAuthServer;
  let mcp: TestMcpServer;
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let aliceLive: RealtimeListener;
  let serverId = '';
  let bobServerId = '';
  const noteCalls: string[] = [];

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
          ({ title }) => {
            noteCalls.push(title);
            return { content: [{ type: 'text', text: `Note "${title}": buy oat milk` }] };
          },
        );
      },
      { oauth: { metadata: authServer.metadata, verifier: authServer } },
    );
    model = await startScriptedModel((request) => {
      if (request.stream !== true)
        return { content: planReply(request as unknown as OfflineRequest, productVocabulary).content };
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: `The server says: ${String(last.content)}` };
      const offered = request.tools?.map((tool) => tool.function.name) ?? [];
      if (offered.includes(CONNECT)) return { toolCalls: [{ name: CONNECT, arguments: '{}' }] };
      return { toolCalls: [{ name: TOOL, arguments: '{"title":"shopping"}' }] };
    });
    runtime = await startTestRuntime({ settings: { ...model.settings } });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    aliceLive = await alice.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await runtime?.stop();
    await model?.close();
    await mcp?.stop();
    await authServer?.stop();
  });

  const api = (client: ChatClient, path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/mcp-servers${path}`, {
      ...init,
      headers: { ...client.headers(), 'content-type': 'application/json' },
      redirect: 'manual',
    });

  async function ask(text: string): Promise<ChatEvent[]> {
    const sessionId = await alice.startSession();
    const chatMessageId = await alice.send(sessionId, text);
    return aliceLive.waitForTerminal(chatMessageId);
  }

  const answerOf = (events: readonly ChatEvent[]) =>
    events.flatMap((event) => (event.type === 'content' ? [event.delta] : [])).join('');

  it('connects through consent and the callback, then a turn calls the tool with the tokens', async () => {
    const added = await expectStatus<{ id: string }>(
      await api(alice, '', { method: 'POST', body: JSON.stringify({ name: 'notes', url: mcp.url }) }),
      201,
    );
    serverId = added.id;

    // Without tokens the server answers 401: listing its tools says to connect, and the server says `required`.
    const refused = await api(alice, `/${serverId}/tools`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { code?: string }).code).toBe('mcp_authorization_required');
    const before = await expectStatus<{ authorization?: string }>(await api(alice, `/${serverId}`), 200);
    expect(before.authorization).toBe('required');

    const { authorizationUrl } = await expectStatus<{ authorizationUrl: string }>(
      await api(alice, `/${serverId}/oauth/start`, { method: 'POST' }),
      200,
    );
    const asked = new URL(authorizationUrl);
    expect(asked.origin).toBe(authServer.issuer);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(mcp.url);
    expect(asked.searchParams.get('redirect_uri')).toBe(
      `${runtime.url}/api/mcp-servers/${serverId}/oauth/callback`,
    );

    // The browser follows the consent's redirect to the callback, which sends it on to the page.
    const consent = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const callback = consent.headers.get('location') ?? '';
    expect(callback.startsWith(`${runtime.url}/api/mcp-servers/${serverId}/oauth/callback?`)).toBe(true);
    const back = await fetch(callback, { redirect: 'manual' });
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(`/?mcpOAuth=connected&mcpServer=${serverId}`);
    const exchange = authServer.tokenRequests.at(-1);
    expect(exchange?.get('grant_type')).toBe('authorization_code');
    expect(exchange?.get('resource')).toBe(mcp.url);

    // The state is single use: the same callback again is refused.
    const again = await fetch(callback, { redirect: 'manual' });
    expect(again.headers.get('location')).toBe(
      `/?mcpOAuth=failed&mcpServer=${serverId}&reason=invalid_state`,
    );

    const after = await api(alice, `/${serverId}`);
    const afterText = await after.text();
    expect(JSON.parse(afterText)).toMatchObject({ authorization: 'connected' });
    for (const token of authServer.issued) expect(afterText).not.toContain(token);

    const events = await ask('What is on my shopping note?');
    expect(events.at(-1)?.type).toBe('message-end');
    expect(answerOf(events)).toBe('The server says: Note "shopping": buy oat milk');
    expect(noteCalls).toEqual(['shopping']);
    const [access] = authServer.issued;
    expect(mcp.requests.some((request) => request.headers.authorization === `Bearer ${access}`)).toBe(true);
    for (const token of authServer.issued) expect(JSON.stringify(events)).not.toContain(token);
  });

  it("does not lend one user's tokens to another user", async () => {
    const added = await expectStatus<{ id: string }>(
      await api(bob, '', { method: 'POST', body: JSON.stringify({ name: 'notes', url: mcp.url }) }),
      201,
    );
    bobServerId = added.id;
    const seen = mcp.requests.length;
    const refused = await api(bob, `/${added.id}/tools`);
    expect(refused.status).toBe(409);
    const bobRequests = mcp.requests.slice(seen);
    expect(bobRequests.length).toBeGreaterThan(0);
    expect(bobRequests.every((request) => request.headers.authorization === undefined)).toBe(true);
    // Alice's server is not Bob's to connect either.
    expect((await api(bob, `/${serverId}/oauth/start`, { method: 'POST' })).status).toBe(404);
  });

  it('tells a user who added the server but never connected it to connect, in the turn', async () => {
    const bobLive = await bob.listen();
    try {
      const sessionId = await bob.startSession();
      const chatMessageId = await bob.send(sessionId, 'What is on my list of notes?');
      const events = await bobLive.waitForTerminal(chatMessageId);
      expect(events.at(-1)?.type).toBe('message-end');
      // The server is offered as the one tool that asks for a connection, not left out without a word.
      const first = model.requests.find(
        (request) =>
          request.stream === true &&
          request.messages.some((message) => message.content === 'What is on my list of notes?') &&
          request.messages.at(-1)?.role === 'user',
      );
      expect(first?.tools?.map((tool) => tool.function.name)).toContain(CONNECT);
      expect(first?.tools?.map((tool) => tool.function.name)).not.toContain(TOOL);
      expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
        name: CONNECT,
        isError: true,
        connect: { serverId: bobServerId, serverName: 'notes' },
      });
      expect(answerOf(events)).toContain('needs the user to connect their account first');
    } finally {
      bobLive.stop();
    }
  });

  it('refreshes an access token the server no longer takes', async () => {
    authServer.expireAccessTokens();
    const refreshesBefore = authServer.tokenRequests.filter(
      (form) => form.get('grant_type') === 'refresh_token',
    ).length;
    const events = await ask('And my shopping note now?');
    expect(events.at(-1)?.type).toBe('message-end');
    expect(answerOf(events)).toBe('The server says: Note "shopping": buy oat milk');
    const refreshes = authServer.tokenRequests.filter((form) => form.get('grant_type') === 'refresh_token');
    expect(refreshes.length).toBe(refreshesBefore + 1);
    expect(refreshes.at(-1)?.get('resource')).toBe(mcp.url);
    const newest = authServer.issued.at(-2);
    expect(mcp.requests.at(-1)?.headers.authorization).toBe(`Bearer ${newest}`);
  });

  it('answers a call to a server the user has not connected with a Connect event, not a failed turn', async () => {
    expect((await api(alice, `/${serverId}/oauth`, { method: 'DELETE' })).status).toBe(204);
    const calls = noteCalls.length;
    const events = await ask('Read my shopping note again');
    expect(events.at(-1)?.type).toBe('message-end');
    const result = events.find((event) => event.type === 'tool-result');
    expect(result).toMatchObject({
      type: 'tool-result',
      isError: true,
      connect: { serverId, serverName: 'notes' },
    });
    expect(result?.type === 'tool-result' ? result.result : '').toContain('connect');
    expect(noteCalls.length).toBe(calls);
    const view = await expectStatus<{ authorization?: string }>(await api(alice, `/${serverId}`), 200);
    expect(view.authorization).toBe('required');
  });
});
