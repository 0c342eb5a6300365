// A user's MCP server end to end over the local runtime: added over HTTP, its tool offered in the user's turn as
// mcp__{server}__{tool}, called on a real MCP server on loopback, the answer made of its result; another user
// neither sees nor reaches it; an operator's server given to a group is offered to a caller whose identity names it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { callApi } from '../support/api-turns.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { startWeatherMcpServer, type WeatherMcpServer } from '../support/weather-mcp-server.js';

const TOOL = 'mcp__weather__get_weather';
const API_KEY = 'Bearer wx-secret-4f9d2a7c';
/** The operator's server for the group g-forecast: the same MCP server under another name. */
const GROUP_TOOL = 'mcp__forecast__get_weather';

describe('tools of a user-added MCP server in a turn', { timeout: 60_000 }, () => {
  let mcp: WeatherMcpServer;
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let aliceLive: RealtimeListener;
  let bobLive: RealtimeListener;
  let carol: ChatClient;
  let carolLive: RealtimeListener;

  beforeAll(async () => {
    mcp = await startWeatherMcpServer({ weather: (city) => `Sunny and 24 °C in ${city}` });
    model = await startScriptedModel((request) => {
      if (request.stream !== true)
        return { content: planReply(request as unknown as OfflineRequest, productVocabulary).content };
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: `The server says: ${String(last.content)}` };
      // The model asks for the tool whether or not it was offered: the turn must still refuse it to another user.
      // Where the group's server is offered, it asks for that one.
      const offered = (request.tools ?? []).map((tool) => tool.function.name);
      const name = offered.includes(GROUP_TOOL) ? GROUP_TOOL : TOOL;
      return { toolCalls: [{ name, arguments: '{"city":"Lisbon"}' }] };
    });
    runtime = await startTestRuntime({
      settings: {
        ...model.settings,
        MCP_SERVERS: JSON.stringify([
          { name: 'forecast', url: mcp.url, approval: 'never', for: ['group:g-forecast'] },
        ]),
      },
    });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    aliceLive = await alice.listen();
    bobLive = await bob.listen();
    carol = new ChatClient(runtime.url, 'user_003');
    carolLive = await carol.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    bobLive?.stop();
    carolLive?.stop();
    await runtime?.stop();
    await model?.close();
    await mcp?.stop();
  });

  function toolEvents(events: readonly ChatEvent[]) {
    return events.filter((event) => event.type === 'tool-call' || event.type === 'tool-result');
  }

  it("offers the server's tool, calls it, and answers with its result; another user gets neither", async () => {
    const added = await expectStatus<{ id: string }>(
      await callApi(runtime, alice, 'POST', 'mcp-servers', {
        name: 'weather',
        url: mcp.url,
        headers: { Authorization: API_KEY },
      }),
      201,
    );

    const sessionId = await alice.startSession();
    const chatMessageId = await alice.send(sessionId, 'What is the weather in Lisbon?');
    const events = await aliceLive.waitForTerminal(chatMessageId);
    expect(events.at(-1)?.type).toBe('message-end');
    expect(toolEvents(events)).toEqual([
      expect.objectContaining({ type: 'tool-call', name: TOOL }),
      expect.objectContaining({ type: 'tool-result', isError: false }),
    ]);
    const text = events.flatMap((event) => (event.type === 'content' ? [event.delta] : [])).join('');
    expect(text).toBe('The server says: Sunny and 24 °C in Lisbon');
    expect(mcp.weatherCalls).toEqual(['Lisbon']);
    const offered = model.requests.find((request) => request.stream === true)?.tools ?? [];
    expect(offered.map((tool) => tool.function.name)).toContain(TOOL);
    expect(mcp.requests.some((request) => request.headers.authorization === API_KEY)).toBe(true);
    expect(JSON.stringify(events)).not.toContain('wx-secret');

    // Another user: the server is the same 404 as none, its tool is not offered, and calling it anyway fails.
    const other = await callApi(runtime, bob, 'GET', `mcp-servers/${added.id}`);
    expect(other.status).toBe(404);
    const requestsBefore = model.requests.length;
    const bobSession = await bob.startSession();
    const bobMessage = await bob.send(bobSession, 'What is the weather in Lisbon?');
    const bobEvents = await bobLive.waitForTerminal(bobMessage);
    const bobOffered =
      model.requests.slice(requestsBefore).find((request) => request.stream === true)?.tools ?? [];
    expect(bobOffered.map((tool) => tool.function.name)).not.toContain(TOOL);
    expect(toolEvents(bobEvents)).toEqual([
      expect.objectContaining({ type: 'tool-call', name: TOOL }),
      expect.objectContaining({ type: 'tool-result', isError: true }),
    ]);
    expect(mcp.weatherCalls).toEqual(['Lisbon']);
  });

  it("offers an operator's server given to a group to a caller whose identity names the group, and only then", async () => {
    // An App Service principal whose groups claim names the group (the dev identity reads it as Azure's would).
    const principal = (groups: string[]) =>
      Buffer.from(
        JSON.stringify({ auth_typ: 'aad', claims: groups.map((group) => ({ typ: 'groups', val: group })) }),
      ).toString('base64');
    const ask = async (groups: string[]) => {
      const sessionId = await carol.startSession();
      const chatMessageId = randomUUID();
      const requestsBefore = model.requests.length;
      await expectStatus(
        await fetch(`${runtime.url}/api/chat`, {
          method: 'POST',
          headers: carol.headers({
            'content-type': 'application/json',
            'x-ms-client-principal': principal(groups),
          }),
          body: JSON.stringify({ sessionId, chatMessageId, text: 'What is the weather in Lisbon?' }),
        }),
        202,
      );
      const events = await carolLive.waitForTerminal(chatMessageId);
      const offered =
        model.requests.slice(requestsBefore).find((request) => request.stream === true)?.tools ?? [];
      return { events, offered: offered.map((tool) => tool.function.name) };
    };

    const before = mcp.weatherCalls.length;
    const member = await ask(['g-readers', 'g-forecast']);
    expect(member.offered).toContain(GROUP_TOOL);
    expect(toolEvents(member.events)).toEqual([
      expect.objectContaining({ type: 'tool-call', name: GROUP_TOOL }),
      expect.objectContaining({ type: 'tool-result', isError: false }),
    ]);
    expect(mcp.weatherCalls.slice(before)).toEqual(['Lisbon']);

    // The same user without the group in their identity: not offered, and not reachable by name either.
    const outsider = await ask(['g-readers']);
    expect(outsider.offered).not.toContain(GROUP_TOOL);
    expect(toolEvents(outsider.events)).toEqual([
      expect.objectContaining({ type: 'tool-call', name: TOOL }),
      expect.objectContaining({ type: 'tool-result', isError: true }),
    ]);
    expect(mcp.weatherCalls.slice(before)).toEqual(['Lisbon']);
  });
});
