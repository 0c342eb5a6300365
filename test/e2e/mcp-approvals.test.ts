// Approvals of MCP tool calls end to end over the local runtime: a tool whose server asks for the user's yes is
// offered, its call waits (stored and streamed as tool-approval-request) until its owner answers over HTTP, and the
// turn goes on: approved, the tool runs; denied, timed out, the model is told; across a restart of the runtime too.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultChatTransport, generateId } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { NodeChat, textOf, type UiChatMessage } from '../support/ai-sdk-chat.js';
import { ChatClient, DEV_IDENTITY_HEADER } from '../support/chat-client.js';
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
  /** A "slow" turn's model stream waits for this (it holds its quota slot meanwhile). */
  let releaseSlow: () => void = () => undefined;
  const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));

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
      if (String(last?.content) === 'slow')
        return { content: 'slow answer', hold: { afterChunks: 1, until: slowGate } };
      if (!String(last?.content ?? '').startsWith('delete '))
        return { content: `plain: ${String(last?.content)}` };
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
    const live = await alice.listen(turn.sessionId);
    const answeredAt = performance.now();
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(202);
    expect((await answer(alice, turn, turn.request.approvalId, { approved: false })).status).toBe(409);
    if (process.env['APPROVAL_LATENCY'] === '1') {
      // The time from the user's yes to the first token of the answer that goes on (printed, not asserted).
      const resumed = () => live.events(turn.chatMessageId).some((event) => event.type === 'content');
      while (!resumed()) await new Promise((resolve) => setTimeout(resolve, 1));
      console.warn(`approval → first token: ${(performance.now() - answeredAt).toFixed(1)} ms`);
    }
    live.stop();

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

  it("approves and denies through the AI SDK's Chat, whose answer goes on as the same message", async () => {
    const runtime = runtimes.at(-1)!;
    const chat = new NodeChat(
      generateId(),
      new DefaultChatTransport<UiChatMessage>({
        api: `${runtime.url}/api/ui/chat`,
        headers: { [DEV_IDENTITY_HEADER]: 'user_001' },
      }),
    );
    const toolPart = () => chat.messages.at(-1)?.parts.find((part) => part.type === 'dynamic-tool');

    await chat.sendMessage({ text: 'delete e.txt' });
    const asking = chat.messages.at(-1);
    expect(asking?.role).toBe('assistant');
    expect(toolPart()).toMatchObject({
      toolName: TOOL,
      state: 'approval-requested',
      input: { path: 'e.txt' },
      approval: { id: expect.any(String) as string },
    });
    expect(chat.finishReasons).toEqual(['tool-calls']);
    const first = toolPart();
    if (first?.state !== 'approval-requested') throw new Error('no approval asked');
    await chat.addToolApprovalResponse({ id: first.approval.id, approved: true });
    await chat.sendMessage();
    expect(chat.messages.at(-1)?.id).toBe(asking?.id);
    expect(toolPart()).toMatchObject({ state: 'output-available', output: 'Deleted e.txt' });
    expect(textOf(chat.messages.at(-1))).toBe('The tool said: Deleted e.txt');
    expect(deleted).toContain('e.txt');

    await chat.sendMessage({ text: 'delete f.txt' });
    const second = toolPart();
    if (second?.state !== 'approval-requested') throw new Error('no approval asked');
    await chat.addToolApprovalResponse({ id: second.approval.id, approved: false, reason: 'not that one' });
    await chat.sendMessage();
    expect(toolPart()).toMatchObject({ state: 'output-denied' });
    expect(textOf(chat.messages.at(-1))).toBe(
      'The tool said: {"error":"The user denied this call: not that one"}',
    );
    expect(deleted).not.toContain('f.txt');
    expect(chat.status).toBe('ready');
  });

  it('denies a waiting call when its session gets a new message, which is answered after it', async () => {
    const runtime = runtimes.at(-1)!;
    const alice = new ChatClient(runtime.url, 'user_001');
    const turn = await askToDelete(alice, 'g.txt');
    const next = await alice.send(turn.sessionId, 'never mind');
    const [parked, answered] = await Promise.all([
      finalEvents(alice, turn),
      finalEvents(alice, { sessionId: turn.sessionId, chatMessageId: next }),
    ]);
    expect(answerOf(parked)).toBe(
      'The tool said: {"error":"The user denied this call: the user moved on (sent another message)"}',
    );
    expect(answerOf(answered)).toBe('plain: never mind');
    // The new message was answered after the waiting turn had its denial: the model saw them in that order.
    const lastOf = (request: (typeof model.requests)[number]) => String(request.messages.at(-1)?.content);
    const denialRound = model.requests.findIndex((request) => lastOf(request).includes('the user moved on'));
    const nextRound = model.requests.findIndex((request) => lastOf(request) === 'never mind');
    expect(denialRound).toBeGreaterThanOrEqual(0);
    expect(denialRound).toBeLessThan(nextRound);
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(409);
    expect(deleted).not.toContain('g.txt');
  });

  it('remembers "always allow" per user and server, lists it, and asks again once it is revoked', async () => {
    const runtime = runtimes.at(-1) ?? (await start());
    const alice = new ChatClient(runtime.url, 'user_001');
    const bob = new ChatClient(runtime.url, 'user_002');
    const api = (client: ChatClient, path: string, method = 'GET') =>
      fetch(`${runtime.url}/api/mcp-servers${path}`, { method, headers: client.headers() });
    const { servers } = (await (await api(alice, '')).json()) as { servers: { id: string; name: string }[] };
    const serverId = servers.find((server) => server.name === 'files')!.id;
    const toolOf = async () =>
      (
        (await (await api(alice, `/${serverId}/tools`)).json()) as { tools: Record<string, unknown>[] }
      ).tools.find((tool) => tool['name'] === 'delete_file');
    expect(await toolOf()).toMatchObject({ needsApproval: true, offered: true, modelName: TOOL });

    const turn = await askToDelete(alice, 'k.txt');
    expect(
      (await answer(alice, turn, turn.request.approvalId, { approved: true, always: true })).status,
    ).toBe(202);
    expect(answerOf(await finalEvents(alice, turn))).toBe('The tool said: Deleted k.txt');
    const listed = (await (await api(alice, `/${serverId}/approvals`)).json()) as { approvals: unknown[] };
    expect(listed.approvals).toEqual([
      { serverId, tool: 'delete_file', grantedAt: expect.any(String) as string },
    ]);
    expect(await toolOf()).toMatchObject({ needsApproval: false });
    // Bob's calls of the same server still ask him.
    const bobs = (await (await api(bob, `/${serverId}/approvals`)).json()) as { approvals: unknown[] };
    expect(bobs.approvals).toEqual([]);

    // Allowed: the next call runs without asking.
    const sessionId = await alice.startSession();
    const chatMessageId = await alice.send(sessionId, 'delete l.txt');
    const events = await finalEvents(alice, { sessionId, chatMessageId });
    expect(events.some((event) => event.type === 'tool-approval-request')).toBe(false);
    expect(answerOf(events)).toBe('The tool said: Deleted l.txt');

    // Revoked: it asks again.
    expect((await api(alice, `/${serverId}/approvals?tool=delete_file`, 'DELETE')).status).toBe(204);
    expect(await (await api(alice, `/${serverId}/approvals`)).json()).toEqual({
      serverId,
      approvals: [],
    });
    const again = await askToDelete(alice, 'm.txt');
    expect((await answer(alice, again, again.request.approvalId, { approved: false })).status).toBe(202);
    await finalEvents(alice, again);
    expect(deleted).not.toContain('m.txt');
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
    expect(deleted).toContain('c.txt');
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
    expect(deleted).not.toContain('d.txt');
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(409);
  });

  it('gives its quota slot back while it waits, and takes one again, when free, to go on', async () => {
    for (const previous of runtimes.splice(0)) await previous.stop();
    const runtime = await start({ QUOTA_CONCURRENT_TURNS: '1' });
    const alice = new ChatClient(runtime.url, 'user_001');
    const turn = await askToDelete(alice, 'h.txt');
    // One slot: another turn is admitted (not 429) only because the waiting one gave it back.
    const other = await alice.startSession();
    const slow = await alice.send(other, 'slow');
    expect((await answer(alice, turn, turn.request.approvalId, { approved: true })).status).toBe(202);
    // While the slow turn holds the slot, the approved call waits for it (it is asked for every 2 s).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(deleted).not.toContain('h.txt');
    releaseSlow();
    expect(answerOf(await finalEvents(alice, { sessionId: other, chatMessageId: slow }))).toBe('slow answer');
    expect(answerOf(await finalEvents(alice, turn))).toBe('The tool said: Deleted h.txt');
    expect(deleted).toContain('h.txt');
  });
});
