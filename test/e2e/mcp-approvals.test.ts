// Approvals of MCP tool calls end to end over the local runtime: a tool whose server asks for the user's yes is
// offered, its call waits (stored and streamed as tool-approval-request) until its owner answers over HTTP, and the
// turn goes on: approved, the tool runs; denied, timed out, the model is told; across a restart of the runtime too.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { ChatClient } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { startTestMcpServer, type TestMcpServer } from '../support/test-mcp-server.js';

const TOOL = 'mcp__files__delete_file';

/** The answer's text, from its content events. */
function answerOf(events: readonly ChatEvent[]): string {
  return events.flatMap((event) => (event.type === 'content' ? [event.delta] : [])).join('');
}

describe('MCP tool calls that wait for the user', { timeout: 120_000 }, () => {
  let mcp: TestMcpServer;
  let model: ScriptedModel;
  let dataDir: string;
  const runtimes: LocalRuntime[] = [];
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
    model = await startScriptedModel((request) => {
      if (request.stream !== true)
        return { content: planReply(request as unknown as OfflineRequest, productVocabulary).content };
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: `The tool said: ${String(last.content)}` };
      const offered = (request.tools ?? []).map((tool) => tool.function.name);
      if (!offered.includes(TOOL)) return { content: 'not offered' };
      const path = String(last?.content ?? '').replace(/^delete /, '');
      return { toolCalls: [{ name: TOOL, arguments: JSON.stringify({ path }) }] };
    });
    dataDir = await mkdtemp(join(tmpdir(), 'chat-approvals-'));
  });
  afterAll(async () => {
    for (const runtime of runtimes) await runtime.stop().catch(() => undefined);
    await model?.close();
    await mcp?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function start(settings: Record<string, string> = {}): Promise<LocalRuntime> {
    const runtime = await startTestRuntime({
      dataDir,
      settings: {
        ...model.settings,
        MCP_SERVERS: JSON.stringify([{ name: 'files', url: mcp.url, approval: 'always' }]),
        ...settings,
      },
    });
    runtimes.push(runtime);
    return runtime;
  }

  /** Posts "delete <path>" and returns once the turn's call waits for its approval (seen live). */
  async function askToDelete(client: ChatClient, path: string) {
    const live = await client.listen();
    try {
      const sessionId = await client.startSession();
      const chatMessageId = await client.send(sessionId, `delete ${path}`);
      for (let attempt = 0; attempt < 300; attempt++) {
        const request = live.events(chatMessageId).find((event) => event.type === 'tool-approval-request');
        if (request?.type === 'tool-approval-request') return { sessionId, chatMessageId, request };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`turn ${chatMessageId} asked for no approval`);
    } finally {
      live.stop();
    }
  }

  function answer(
    client: ChatClient,
    at: { sessionId: string; chatMessageId: string },
    approvalId: string,
    body: unknown,
  ): Promise<Response> {
    return fetch(`${client.baseUrl}/api/chat/${at.sessionId}/${at.chatMessageId}/approvals/${approvalId}`, {
      method: 'POST',
      headers: { ...client.headers(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async function finalEvents(client: ChatClient, at: { sessionId: string; chatMessageId: string }) {
    return (await client.stream(at.sessionId, at.chatMessageId, { timeoutMs: 30_000 })).map(
      (frame) => frame.data,
    );
  }

  it('runs an approved call once, and answers with its result; a second answer is refused', async () => {
    const runtime = await start();
    const alice = new ChatClient(runtime.url, 'user_001');
    const bob = new ChatClient(runtime.url, 'user_002');
    const turn = await askToDelete(alice, 'a.txt');
    expect(turn.request).toMatchObject({ toolName: TOOL, input: '{"path":"a.txt"}' });
    expect(deleted).toEqual([]);

    // Another user's answer: the same 404 as an unknown turn.
    expect((await answer(bob, turn, turn.request.approvalId, { approved: true })).status).toBe(404);
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(202);
    expect((await answer(alice, turn, turn.request.approvalId, { approved: false })).status).toBe(409);

    const events = await finalEvents(alice, turn);
    expect(events.at(-1)?.type).toBe('message-end');
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ isError: false });
    expect(answerOf(events)).toBe('The tool said: Deleted a.txt');
    expect(deleted).toEqual(['a.txt']);
  });

  it('tells the model of a denial, with its reason, and runs nothing', async () => {
    const runtime = runtimes.at(-1)!;
    const alice = new ChatClient(runtime.url, 'user_001');
    const turn = await askToDelete(alice, 'b.txt');
    const denied = await answer(alice, turn, turn.request.approvalId, { approved: false, reason: 'keep it' });
    expect(denied.status).toBe(202);
    const events = await finalEvents(alice, turn);
    expect(answerOf(events)).toBe('The tool said: {"error":"The user denied this call: keep it"}');
    expect(deleted).toEqual(['a.txt']);
  });

  it('takes an answer given after the runtime restarted while the call waited', async () => {
    const first = runtimes.at(-1)!;
    const turn = await askToDelete(new ChatClient(first.url, 'user_001'), 'c.txt');
    await first.stop();
    runtimes.splice(runtimes.indexOf(first), 1);

    const second = await start();
    const alice = new ChatClient(second.url, 'user_001');
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(202);
    const events = await finalEvents(alice, turn);
    expect(answerOf(events)).toBe('The tool said: Deleted c.txt');
    expect(deleted).toEqual(['a.txt', 'c.txt']);
  });

  it('denies a call nobody answered in time', async () => {
    const previous = runtimes.at(-1)!;
    await previous.stop();
    runtimes.splice(runtimes.indexOf(previous), 1);
    const runtime = await start({ MCP_APPROVAL_TIMEOUT_SECONDS: '1' });
    const alice = new ChatClient(runtime.url, 'user_001');
    const turn = await askToDelete(alice, 'd.txt');
    const events = await finalEvents(alice, turn);
    expect(answerOf(events)).toMatch(/The user denied this call: .*timed out/);
    expect(deleted).toEqual(['a.txt', 'c.txt']);
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(409);
  });
});
