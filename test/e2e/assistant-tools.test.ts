// An assistant's tools end to end on a scripted model: its conversations offer the model only the built-in tools its
// version names (all of them without an assistant), a call of another tool is refused unrun, and an edit of its
// tools leaves earlier conversations as they were.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { createChatTools, type ChatToolDeps } from '../../shared/tools/index.js';
import { callApi, json, roundsFor, runTurn, startConversation } from '../support/api-turns.js';
import { ChatClient } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { startWeatherMcpServer, type WeatherMcpServer } from '../support/weather-mcp-server.js';

const HEAVY = 60_000;
/** Every built-in tool, as the registry defines them (the tools' dependencies are not used to list them). */
const BUILT_IN = createChatTools({} as ChatToolDeps)
  .specs()
  .map((spec) => spec.name)
  .sort();

describe("an assistant's tools", () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  /** Carol adds MCP servers (the others' conversations offer none). */
  let carol: ChatClient;
  let mcp: WeatherMcpServer;

  beforeAll(async () => {
    mcp = await startWeatherMcpServer();
    model = await startScriptedModel((request) => {
      if (request.stream !== true) return { content: '{}' };
      if (request.messages.at(-1)?.role === 'tool') return { content: 'Done.' };
      // "call <tool>": the model calls that tool, whether it was offered or not.
      const asked = /^call (\S+)/.exec(request.messages.findLast((m) => m.role === 'user')?.content ?? '');
      return asked
        ? { toolCalls: [{ name: asked[1] ?? '', arguments: '{"a":2,"b":3,"city":"Lisbon"}' }] }
        : { content: 'Aye.' };
    });
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    carol = new ChatClient(runtime.url, 'user_003');
  }, HEAVY);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
    await mcp?.stop();
  });

  const call = (method: string, path: string, body?: unknown, client = alice) =>
    callApi(runtime, client, method, path, body);
  const start = (body: Record<string, unknown>, client = alice) => startConversation(runtime, client, body);

  /** Runs one turn; returns the requests the model streamed for it (its rounds), in order. */
  async function turn(sessionId: string, text: string, client = alice) {
    await runTurn(client, sessionId, text);
    return roundsFor(model, text);
  }

  const offered = (request: { tools?: { function: { name: string } }[] } | undefined) =>
    (request?.tools ?? []).map((tool) => tool.function.name).sort();

  it(
    'offers only the tools the assistant names, and every built-in one without an assistant',
    async () => {
      expect(BUILT_IN).toContain('add_numbers');
      expect(BUILT_IN.length).toBeGreaterThan(1);
      const assistant = await json<{ assistantId: string }>(
        await call('POST', 'assistants', { name: 'Adder', tools: ['add_numbers'] }),
        201,
      );
      const [round] = await turn(await start({ assistantId: assistant.assistantId }), `hi ${randomUUID()}`);
      expect(offered(round)).toEqual(['add_numbers']);

      const [plain] = await turn(await start({}), `hi ${randomUUID()}`);
      expect(offered(plain)).toEqual(BUILT_IN);

      const none = await json<{ assistantId: string }>(
        await call('POST', 'assistants', { name: 'Talker', tools: [] }),
        201,
      );
      const [bare] = await turn(await start({ assistantId: none.assistantId }), `hi ${randomUUID()}`);
      expect(offered(bare)).toEqual([]);
    },
    HEAVY,
  );

  it(
    'refuses, unrun, a call of a tool the conversation does not offer, and runs the one it offers',
    async () => {
      const assistant = await json<{ assistantId: string }>(
        await call('POST', 'assistants', { name: 'Searcher', tools: ['search_knowledge_base'] }),
        201,
      );
      const sessionId = await start({ assistantId: assistant.assistantId });
      const rounds = await turn(sessionId, `call add_numbers ${randomUUID()}`);
      expect(rounds).toHaveLength(2);
      const result = rounds[1]?.messages.at(-1);
      expect(result?.role).toBe('tool');
      expect(JSON.parse(result?.content ?? '{}')).toEqual({
        error:
          'Not run: tool "add_numbers" is not offered in this conversation. Available built-in tools: search_knowledge_base.',
      });

      const plain = await turn(await start({}), `call add_numbers ${randomUUID()}`);
      expect(JSON.parse(plain[1]?.messages.at(-1)?.content ?? '{}')).toEqual({ sum: 5 });
    },
    HEAVY,
  );

  it(
    "keeps an earlier conversation's tools when the assistant's tools are edited",
    async () => {
      const assistant = await json<{ assistantId: string }>(
        await call('POST', 'assistants', { name: 'Changer', tools: ['add_numbers'] }),
        201,
      );
      const before = await start({ assistantId: assistant.assistantId });
      expect(offered((await turn(before, `hi ${randomUUID()}`))[0])).toEqual(['add_numbers']);

      await json(
        await call('PATCH', `assistants/${assistant.assistantId}`, { tools: ['search_knowledge_base'] }),
        200,
      );
      expect(offered((await turn(before, `again ${randomUUID()}`))[0])).toEqual(['add_numbers']);
      const after = await start({ assistantId: assistant.assistantId });
      expect(offered((await turn(after, `hi ${randomUUID()}`))[0])).toEqual(['search_knowledge_base']);

      // Back to every tool: a new conversation offers them all again.
      await json(await call('PATCH', `assistants/${assistant.assistantId}`, { tools: null }), 200);
      expect(
        offered((await turn(await start({ assistantId: assistant.assistantId }), `hi ${randomUUID()}`))[0]),
      ).toEqual(BUILT_IN);
    },
    HEAVY,
  );

  it(
    'offers the tools of only the MCP servers the assistant names, and refuses the others unrun',
    async () => {
      const add = async (name: string) =>
        (await json<{ id: string }>(await call('POST', 'mcp-servers', { name, url: mcp.url }, carol), 201))
          .id;
      const weather = await add('weather');
      await add('other');
      const all = await turn(await start({}, carol), `hi ${randomUUID()}`, carol);
      expect(offered(all[0])).toEqual(
        [...BUILT_IN, 'mcp__other__get_weather', 'mcp__weather__get_weather'].sort(),
      );

      const named = await json<{ assistantId: string }>(
        await call(
          'POST',
          'assistants',
          { name: 'Forecaster', tools: ['add_numbers', `mcp:${weather}`] },
          carol,
        ),
        201,
      );
      const sessionId = await start({ assistantId: named.assistantId }, carol);
      const refused = await turn(sessionId, `call mcp__other__get_weather ${randomUUID()}`, carol);
      expect(offered(refused[0])).toEqual(['add_numbers', 'mcp__weather__get_weather']);
      expect(JSON.parse(refused[1]?.messages.at(-1)?.content ?? '{}')).toEqual({
        error:
          'Not run: tool "mcp__other__get_weather" is not offered in this conversation (its assistant names its MCP servers).',
      });
      expect(mcp.weatherCalls).toEqual([]);
      const ran = await turn(sessionId, `call mcp__weather__get_weather ${randomUUID()}`, carol);
      expect(ran[1]?.messages.at(-1)?.content).toBe('Sunny in Lisbon');
      expect(mcp.weatherCalls).toEqual(['Lisbon']);

      // Naming built-in tools only: no MCP tool at all.
      const builtIn = await json<{ assistantId: string }>(
        await call('POST', 'assistants', { name: 'Plain', tools: ['add_numbers'] }, carol),
        201,
      );
      const [plain] = await turn(
        await start({ assistantId: builtIn.assistantId }, carol),
        `hi ${randomUUID()}`,
        carol,
      );
      expect(offered(plain)).toEqual(['add_numbers']);
    },
    HEAVY,
  );
});
