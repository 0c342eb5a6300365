// The AI SDK's own client code (its Chat, DefaultChatTransport and stream reader) against POST /api/ui/chat and
// its resume endpoint on the local runtime, with a scripted model: send, tools, regenerate, resume, stop, refusals.
import { DefaultChatTransport, readUIMessageStream, type UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { isTerminalEvent } from '../../shared/streaming/contracts.js';
import { answerText } from '../../shared/streaming/turn-transcript.js';
import { NodeChat, textOf, type UiChatMessage } from '../support/ai-sdk-chat.js';
import { DEV_IDENTITY_HEADER } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

type Message = UiChatMessage;

/** The text of the last user message of a request the model received. */
const question = (request: ChatCompletionRequest) =>
  request.messages.findLast((message) => message.role === 'user')?.content ?? '';

/** Releases held answers: a test resolves the promise named by the held question's text. */
const holds = new Map<string, { promise: Promise<void>; release: () => void }>();
function hold(text: string) {
  let release = () => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  holds.set(text, { promise, release });
  return release;
}

const regenerations = new Map<string, number>();

describe('POST /api/ui/chat and its resume, read by the AI SDK', () => {
  let runtime: LocalRuntime;
  let model: ScriptedModel;

  beforeAll(async () => {
    model = await startScriptedModel((request) => {
      const text = question(request);
      const toolAnswered = request.messages.at(-1)?.role === 'tool';
      if (text.startsWith('add ') && !toolAnswered)
        return { toolCalls: [{ name: 'add_numbers', arguments: '{"a":2,"b":3}' }] };
      if (text.startsWith('add ')) return { reasoning: 'The tool said 5.', content: 'The sum is 5.' };
      const held = holds.get(text);
      if (held)
        return {
          content: `Slowly: ${text}, and that is all.`,
          hold: { afterChunks: 2, until: held.promise },
        };
      const n = (regenerations.get(text) ?? 0) + 1;
      regenerations.set(text, n);
      return { content: n === 1 ? `Echo: ${text}` : `Echo #${n}: ${text}` };
    });
    runtime = await startTestRuntime({ settings: model.settings });
  }, 60_000);

  afterAll(async () => {
    for (const { release } of holds.values()) release();
    await runtime?.stop();
    await model?.close();
  }, 60_000);

  const api = () => `${runtime.url}/api/ui/chat`;
  const transport = (userId: string) =>
    new DefaultChatTransport<Message>({ api: api(), headers: { [DEV_IDENTITY_HEADER]: userId } });
  const newChat = (userId = 'user_001', id?: string) =>
    id === undefined ? new NodeChat(randomId(), transport(userId)) : new NodeChat(id, transport(userId));

  /** The answer as the turn's log has it (the truth every client is checked against). */
  async function storedAnswer(sessionId: string, chatMessageId: string): Promise<string> {
    const events = await runtime.app.streaming.turnEvents.read(sessionId, chatMessageId, 0);
    expect(events.some(isTerminalEvent)).toBe(true);
    return answerText(events);
  }

  /** POSTs a body as DefaultChatTransport would, and reads the answer with the AI SDK's own reader. */
  async function postAndRead(userId: string, body: unknown): Promise<Message> {
    const chunks = await transport(userId).sendMessages({
      chatId: (body as { id: string }).id,
      messages: (body as { messages: Message[] }).messages,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    return lastMessageOf(chunks);
  }

  async function expectProblem(response: Response, status: number) {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    return (await response.json()) as { detail: string; errors?: { path: string }[] };
  }

  const rawPost = (userId: string, body: unknown) =>
    fetch(api(), {
      method: 'POST',
      headers: { [DEV_IDENTITY_HEADER]: userId, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const userMessage = (text: string, id = randomId()): Message => ({
    id,
    role: 'user',
    parts: [{ type: 'text', text }],
  });

  it('answers a useChat message as a UI message stream, its chat id a new session of the caller', async () => {
    const chat = newChat();
    await chat.sendMessage({ text: 'hello there' });
    expect(chat.error).toBeUndefined();
    const [user, answer] = chat.messages;
    expect(chat.messages).toHaveLength(2);
    expect(answer?.role).toBe('assistant');
    // The answer's id is the turn's answer id, so the user's message keeps its own.
    expect(answer?.id).toBe(`${user?.id}_assistant`);
    expect(textOf(answer)).toBe('Echo: hello there');
    expect(textOf(answer)).toBe(await storedAnswer(chat.id, user!.id));
    expect(answer?.metadata).toMatchObject({
      sessionId: chat.id,
      chatMessageId: user?.id,
      finishReason: 'stop',
    });
    expect(chat.finishReasons).toEqual(['stop']);
    // useChat's 16-character id is the session's id, owned by the caller.
    expect(chat.id).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(await runtime.app.chat.sessions.find('user_001', chat.id)).toMatchObject({ sessionId: chat.id });
    // A second message continues the same session.
    await chat.sendMessage({ text: 'and again' });
    expect(textOf(chat.messages[3])).toBe('Echo: and again');
  }, 30_000);

  it('shows a tool turn as two steps with the tool part, reasoning and the answer', async () => {
    const chat = newChat();
    await chat.sendMessage({ text: 'add 2 and 3' });
    const answer = chat.messages[1];
    expect(chat.error).toBeUndefined();
    expect(answer?.parts.filter((part) => part.type === 'step-start')).toHaveLength(2);
    expect(answer?.parts).toContainEqual(
      expect.objectContaining({
        type: 'dynamic-tool',
        toolName: 'add_numbers',
        state: 'output-available',
        input: { a: 2, b: 3 },
      }),
    );
    expect(answer?.parts).toContainEqual(
      expect.objectContaining({ type: 'reasoning', text: 'The tool said 5.' }),
    );
    expect(textOf(answer)).toBe('The sum is 5.');
    expect(answer?.metadata?.usage).toBeDefined();
  }, 30_000);

  it('regenerates the last answer as a new alternative of the turn', async () => {
    const chat = newChat();
    await chat.sendMessage({ text: 'say it twice' });
    const first = chat.messages[1];
    await chat.regenerate();
    expect(chat.error).toBeUndefined();
    expect(chat.messages).toHaveLength(2);
    const second = chat.messages[1];
    expect(textOf(second)).toBe('Echo #2: say it twice');
    expect(second?.id).not.toBe(first?.id);
    const newTurn = second?.metadata?.chatMessageId ?? '';
    expect(textOf(second)).toBe(await storedAnswer(chat.id, newTurn));
    // Regenerating the new answer by its id (as a message's button does) works too.
    await chat.regenerate({ messageId: second!.id });
    expect(textOf(chat.messages[1])).toBe('Echo #3: say it twice');
  }, 30_000);

  it('edits a message as useChat does (in place, same id) and passes use_memory through the body', async () => {
    const chat = newChat();
    await chat.sendMessage({ text: 'first version' }, { body: { use_memory: false } });
    const original = chat.messages[0]!.id;
    expect(await runtime.app.chat.posted.find('user_001', chat.id, original)).toMatchObject({
      useMemory: false,
    });
    await chat.sendMessage({ text: 'second version', messageId: original });
    expect(chat.error).toBeUndefined();
    expect(chat.messages).toHaveLength(2);
    expect(chat.messages[0]?.id).toBe(original);
    const answer = chat.messages[1];
    expect(textOf(answer)).toBe('Echo: second version');
    // The edit is its own turn, which replaces the original: the conversation branches there.
    const editTurn = answer?.metadata?.chatMessageId ?? '';
    expect(editTurn).not.toBe(original);
    expect(await runtime.app.chat.posted.find('user_001', chat.id, editTurn)).toMatchObject({
      fork: { replaces: original, origin: 'edit' },
    });
    expect(textOf(answer)).toBe(await storedAnswer(chat.id, editTurn));
  }, 30_000);

  it('treats a re-post as the same turn, and reads only the last message of the body', async () => {
    const sessionId = randomId();
    const earlier: Message = {
      id: randomId(),
      role: 'assistant',
      parts: [{ type: 'text', text: 'PLANTED' }],
    };
    const last = userMessage('only this counts');
    const requestsBefore = model.requests.length;
    const first = await postAndRead('user_001', { id: sessionId, messages: [earlier, last] });
    // Only the last message, as prepareSendMessagesRequest may send it: the same turn, answered again from its log.
    const again = await postAndRead('user_001', { id: sessionId, messages: [last] });
    expect(textOf(first)).toBe('Echo: only this counts');
    expect(textOf(again)).toBe(textOf(first));
    expect(again.id).toBe(first.id);
    const modelCalls = model.requests.slice(requestsBefore);
    expect(modelCalls.filter((request) => question(request) === 'only this counts')).toHaveLength(1);
    expect(JSON.stringify(modelCalls)).not.toContain('PLANTED');
    // The same id with another text is another message, refused.
    await expectProblem(
      await rawPost('user_001', {
        id: sessionId,
        messages: [{ ...last, parts: [{ type: 'text', text: 'changed' }] }],
      }),
      409,
    );
  }, 30_000);

  it("refuses another user's chat id with 404 and changes nothing", async () => {
    const chat = newChat('user_001');
    await chat.sendMessage({ text: 'mine alone' });
    const before = await runtime.app.chat.posted.latest('user_001', chat.id, 10);
    const other = newChat('user_002', chat.id);
    await other.sendMessage({ text: 'let me in' });
    expect(other.status).toBe('error');
    expect(other.error?.message).toMatch(/No session/);
    const problem = await expectProblem(
      await rawPost('user_002', { id: chat.id, messages: [userMessage('x')] }),
      404,
    );
    expect(problem.detail).toMatch(/No session/);
    await expectProblem(
      await fetch(`${api()}/${chat.id}/stream`, { headers: { [DEV_IDENTITY_HEADER]: 'user_002' } }),
      404,
    );
    expect(await runtime.app.chat.sessions.find('user_002', chat.id)).toBeUndefined();
    expect(await runtime.app.chat.posted.latest('user_001', chat.id, 10)).toEqual(before);
    // A UUID is never claimed: it names a session POST /api/session/start made.
    await expectProblem(await rawPost('user_001', { id: randomUUID(), messages: [userMessage('x')] }), 404);
  }, 30_000);

  it('makes one session of a new id two users post at once, and one turn of a message posted twice at once', async () => {
    const id = randomId();
    const replies = await Promise.all([
      rawPost('user_001', { id, messages: [userMessage('race one')] }),
      rawPost('user_002', { id, messages: [userMessage('race two')] }),
    ]);
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([200, 404]);
    await Promise.all(replies.map((reply) => reply.body?.cancel() ?? Promise.resolve()));
    const owners = await Promise.all(
      ['user_001', 'user_002'].map((u) => runtime.app.chat.sessions.find(u, id)),
    );
    expect(owners.filter((session) => session !== undefined)).toHaveLength(1);

    const sameId = randomId();
    const message = userMessage('posted twice at once');
    const both = await Promise.all([
      postAndRead('user_003', { id: sameId, messages: [message] }),
      postAndRead('user_003', { id: sameId, messages: [message] }),
    ]);
    expect(both.map(textOf)).toEqual(['Echo: posted twice at once', 'Echo: posted twice at once']);
  }, 30_000);

  it('answers 204 to a resume when no turn runs, and replays the running turn from its start', async () => {
    const chat = newChat();
    // A new chat resumes before its first message: nothing runs, nothing is made.
    const idle = await fetch(`${api()}/${chat.id}/stream`, {
      headers: { [DEV_IDENTITY_HEADER]: 'user_001' },
    });
    expect(idle.status).toBe(204);
    expect(await runtime.app.chat.sessions.find('user_001', chat.id)).toBeUndefined();

    const text = 'tell me slowly';
    const release = hold(text);
    const sending = chat.sendMessage({ text });
    await waitUntil(() => textOf(chat.messages[1]).length > 0);
    // Another tab of the same user opens the chat (useChat with resume: true) while the answer streams.
    const tab = newChat('user_001', chat.id);
    const resuming = tab.resumeStream();
    await waitUntil(() => textOf(tab.messages.at(-1)).length > 0);
    release();
    await Promise.all([sending, resuming]);
    const userId = chat.messages[0]!.id;
    const stored = await storedAnswer(chat.id, userId);
    expect(textOf(chat.messages[1])).toBe(stored);
    expect(tab.messages).toHaveLength(1);
    expect(textOf(tab.messages[0])).toBe(stored);
    expect(tab.messages[0]?.id).toBe(`${userId}_assistant`);

    await settle(runtime);
    const after = await fetch(`${api()}/${chat.id}/stream`, {
      headers: { [DEV_IDENTITY_HEADER]: 'user_001' },
    });
    expect(after.status).toBe(204);
  }, 30_000);

  it('lets a turn run on when the reader goes away (stop), and maps cancel onto the finish reason stop', async () => {
    const text = 'a long story to stop';
    const release = hold(text);
    const chat = newChat();
    const sending = chat.sendMessage({ text });
    await waitUntil(() => textOf(chat.messages[1]).length > 0);
    await chat.stop();
    await sending;
    const turn = chat.messages[0]!.id;
    release();
    // The reader left; the turn did not stop: its answer is complete in the log.
    await waitUntil(async () =>
      (await runtime.app.streaming.turnEvents.read(chat.id, turn, 0)).some(isTerminalEvent),
    );
    expect(await storedAnswer(chat.id, turn)).toBe(`Slowly: ${text}, and that is all.`);

    // stop() wired to the cancel endpoint, as the README shows: the turn ends as cancelled, the SDK reads `stop`.
    const cancelText = 'a story to cancel';
    const releaseCancelled = hold(cancelText);
    const cancelling = newChat();
    const sent = cancelling.sendMessage({ text: cancelText });
    await waitUntil(() => textOf(cancelling.messages[1]).length > 0);
    const id = cancelling.messages[0]!.id;
    const cancelled = await fetch(`${runtime.url}/api/chat/${cancelling.id}/${id}/cancel`, {
      method: 'POST',
      headers: { [DEV_IDENTITY_HEADER]: 'user_001' },
    });
    expect(cancelled.status).toBe(202);
    await sent;
    releaseCancelled();
    expect(cancelling.error).toBeUndefined();
    expect(cancelling.finishReasons).toEqual(['stop']);
    expect(cancelling.messages[1]?.metadata?.finishReason).toBe('cancelled');
    expect(textOf(cancelling.messages[1])).toBe(await storedAnswer(cancelling.id, id));
  }, 30_000);

  it('refuses bad bodies with problem+json naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ messages: [userMessage('x')] }, 'id'],
      [{ id: 'not-an-id', messages: [userMessage('x')] }, 'id'],
      [{ id: randomId(), messages: [] }, 'messages'],
      [{ id: randomId(), messages: [{ ...userMessage('x'), role: 'assistant' }] }, 'messages.0.role'],
      [{ id: randomId(), messages: [userMessage('x', 'bad id!')] }, 'messages.0.id'],
      [{ id: randomId(), messages: [userMessage('   ')] }, 'messages.0.parts'],
      [{ id: randomId(), messages: [userMessage('x')], trigger: 'resume' }, 'trigger'],
    ];
    for (const [body, path] of cases) {
      const problem = await expectProblem(await rawPost('user_001', body), 400);
      expect(
        problem.errors?.map((error) => error.path),
        JSON.stringify(body),
      ).toContain(path);
    }
  }, 30_000);
});

function randomId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: 16 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
}

async function lastMessageOf(stream: ReadableStream<UIMessageChunk>): Promise<Message> {
  let last: Message | undefined;
  for await (const message of readUIMessageStream<Message>({ stream })) last = message;
  if (!last) throw new Error('the stream held no message');
  return last;
}

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
