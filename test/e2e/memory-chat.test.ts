// Long-term memory on the chat side, end to end over the local runtime with the offline model: one
// conversation's facts reach the next one's prompt and search, and use_memory false leaves no trace.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { BASIC_SYSTEM_PROMPT } from '../../shared/chat/prompt.js';
import type { ConversationWithMessages } from '../../shared/history/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

describe('long-term memory in the chat, with the offline model', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    alice = new ChatClient(runtime.url, 'user_003');
    live = await alice.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  async function turn(sessionId: string, text: string, options: { useMemory?: boolean } = {}) {
    const chatMessageId = randomUUID();
    await expectStatus(
      await alice.post({
        sessionId,
        chatMessageId,
        text,
        ...(options.useMemory === undefined ? {} : { use_memory: options.useMemory }),
      }),
      202,
    );
    const events = await live.waitForTerminal(chatMessageId);
    expect(events.at(-1)?.type).toBe('message-end');
    await settle(runtime);
    return events;
  }

  async function conversation(sessionId: string): Promise<ConversationWithMessages> {
    return expectStatus<ConversationWithMessages>(
      await fetch(`${runtime.url}/api/history/conversations/${sessionId}`, { headers: alice.headers() }),
      200,
    );
  }

  it("personalises the next conversation's prompt and finds the earlier one when asked about it", async () => {
    const first = await alice.startSession();
    await turn(first, 'I love sailing. Where should I sail in Portugal?');
    const opening = await conversation(first);
    // The first conversation of a user with no profile: the basic prompt, kept as its first message.
    expect(opening.systemPrompt).toMatchObject({ content: BASIC_SYSTEM_PROMPT, personalised: false });
    expect(opening.messages.map((m) => m.ordinal)).toEqual([0, 1]);
    const facts = await runtime.app.memory.facts.list('user_003', { statuses: ['active'] });
    expect(facts.map((fact) => fact.statement).join(' ')).toMatch(/sailing/);

    const second = await alice.startSession();
    // A question with a topic: a search returns only conversations that match it, never the least bad of all.
    const events = await turn(second, 'What did we say about sailing last time?');
    const call = events.find((event) => event.type === 'tool-call');
    expect(call).toMatchObject({ name: 'search_conversation_history' });
    const result = events.find((event) => event.type === 'tool-result');
    expect(result).toMatchObject({ isError: false });
    const found = JSON.parse((result as { result: string }).result) as {
      conversations: { sessionId: string; title?: string; date: string }[];
    };
    // The current conversation is left out; the earlier one is found, with its title and date.
    expect(found.conversations.map((c) => c.sessionId)).toEqual([first]);
    const answer = events
      .filter((event) => event.type === 'content')
      .map((event) => (event as { delta: string }).delta)
      .join('');
    expect(answer).toContain(`"${opening.title}" (${found.conversations[0]!.date.slice(0, 10)}`);

    const later = await conversation(second);
    expect(later.systemPrompt?.personalised).toBe(true);
    expect(later.systemPrompt?.content.startsWith(BASIC_SYSTEM_PROMPT)).toBe(true);
    for (const fact of facts) expect(later.systemPrompt?.content).toContain(`- ${fact.statement}`);
    // The prompt is not a numbered message: the conversation's count and ordinals are its turns'.
    expect(later.messageCount).toBe(2);
    expect(later.messages.map((m) => m.ordinal)).toEqual([0, 1]);
  });

  it('reads and writes no long-term memory in a use_memory false turn', async () => {
    const before = await runtime.app.memory.facts.list('user_003');
    const session = await alice.startSession();
    const events = await turn(session, 'I love climbing. What did we talk about last time?', {
      useMemory: false,
    });
    // Not offered the search, the model answers without it; the prompt is the basic one.
    expect(events.some((event) => event.type === 'tool-call')).toBe(false);
    expect((await conversation(session)).systemPrompt).toMatchObject({
      content: BASIC_SYSTEM_PROMPT,
      personalised: false,
    });
    expect(await runtime.app.memory.summaries.get('user_003', session)).toBeUndefined();
    expect(await runtime.app.memory.facts.list('user_003')).toEqual(before);
  });
});
