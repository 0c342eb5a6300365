// Long-term memory end to end over the local runtime with a scripted model: facts and summaries from one
// conversation reach the next one's prompt and search, and supersede, reaffirm, forget and opt out as they
// should.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { completedMessageId, MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import {
  CONVERSATION_SUMMARIES_CONTAINER,
  MEMORY_SUBSCRIPTION,
  PROFILE_FACTS_CONTAINER,
  PROFILE_FETCH_BUDGET_MS,
  type ConversationSearchHit,
  type ConversationSummaryView,
  type ProfileFact,
} from '../../shared/memory/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { messageCompleted } from '../support/message-completed.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

const STATEMENTS =
  'I prefer short answers in bullet points. I love sailing, and my daughter Maya is learning to swim in Lisbon.';
const SPIDERS_QUESTION = 'Tell me a fun fact about spiders.';
const SPIDERS_ANSWER = 'Fun fact: the user loves spiders, or so my notes claim.';
const RECALL_QUESTION = 'What did you say in your last answer?';
const SAILING_QUESTION = 'What did we talk about regarding sailing in an earlier conversation?';
const CONTRADICTION = 'I no longer like sailing. These days I love rowing.';
const REPEAT = 'I prefer short answers in bullet points.';
const PRIVATE = 'My favourite colour is green and I love cycling.';

interface ProfileInput {
  userMessage: string;
  activeFacts: { factId: string; category: string; statement: string }[];
}

/** What a careful model answers to the memory worker's profile request: facts from the user's message alone. */
function profileChanges(input: ProfileInput): object {
  const text = input.userMessage;
  const active = (pattern: RegExp) => input.activeFacts.find((fact) => pattern.test(fact.statement));
  const add: object[] = [];
  const reaffirm: object[] = [];
  const replace: object[] = [];
  const bullets = 'I prefer short answers in bullet points.';
  if (text.includes(bullets)) {
    const known = active(/bullet points/);
    if (known) reaffirm.push({ factId: known.factId, evidence: bullets });
    else
      add.push({
        category: 'output_preferences',
        statement: 'The user prefers short answers in bullet points.',
        evidence: bullets,
      });
  }
  if (text.includes('I love sailing'))
    add.push({ category: 'interests', statement: 'The user loves sailing.', evidence: 'I love sailing' });
  if (text.includes('my daughter Maya'))
    add.push({
      category: 'family_and_friends',
      statement: "The user's daughter Maya is learning to swim.",
      evidence: 'my daughter Maya is learning to swim',
    });
  const sailing = active(/sailing/);
  if (text.includes('I no longer like sailing') && sailing)
    replace.push({
      factId: sailing.factId,
      category: 'interests',
      statement: 'The user loves rowing.',
      evidence: 'I no longer like sailing. These days I love rowing.',
      reason: 'The user no longer likes sailing; they love rowing now.',
    });
  // A careless model would take anything it reads about spiders for a fact: the worker must never show it such
  // text, and must drop a fact whose evidence is not the user's own words.
  if (/spider/i.test(text))
    add.push({
      category: 'interests',
      statement: 'The user loves spiders.',
      evidence: 'the user loves spiders',
    });
  return { add, reaffirm, replace, retract: [] };
}

function conversationSummary(input: {
  previousSummary: { summary: string; themes: string[]; persons: string[]; places: string[] } | null;
  exchange: { userMessage: string; assistantAnswer: string };
}): object {
  const sailing = /sailing/i.test(input.exchange.userMessage);
  const themes = [...(input.previousSummary?.themes ?? []), ...(sailing ? ['sailing'] : ['chat'])];
  return {
    summary: [input.previousSummary?.summary ?? '', `The user said: ${input.exchange.userMessage}`]
      .join(' ')
      .trim()
      .slice(0, 1900),
    themes: [...new Set(themes)].slice(0, 12),
    persons: [
      ...(input.previousSummary?.persons ?? []),
      ...(/Maya/.test(input.exchange.userMessage) ? ['Maya'] : []),
    ],
    places: [
      ...(input.previousSummary?.places ?? []),
      ...(/Lisbon/.test(input.exchange.userMessage) ? ['Lisbon'] : []),
    ],
    user_sentiment: 'positive',
  };
}

function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  const content = request.messages.at(-1)?.content ?? '{}';
  if (name === 'memory_profile_changes') return profileChanges(JSON.parse(content) as ProfileInput);
  if (name === 'conversation_summary') return conversationSummary(JSON.parse(content) as never);
  if (name === 'exchange_index') {
    const input = JSON.parse(content) as { question?: string; firstQuestion?: string };
    return {
      line: `Q: ${(input.question ?? '').slice(0, 60)}`,
      tags: ['chat'],
      ...(input.firstQuestion !== undefined
        ? { title: /sailing/i.test(input.firstQuestion) ? 'Sailing and family' : 'A chat' }
        : {}),
    };
  }
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

/** A fact as GET .../memories shows it. */
type FactView = Omit<ProfileFact, 'id' | 'kind'> & { factId: string };

const systemPrompt = (request: ChatCompletionRequest) => request.messages[0]?.content ?? '';
const toolNames = (request: ChatCompletionRequest) => (request.tools ?? []).map((tool) => tool.function.name);

describe('long-term memory with a scripted model', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let client: ChatClient;
  let other: ChatClient;
  let live: RealtimeListener;
  let conversation1 = '';
  let conversation2 = '';
  let spidersTurn = '';

  beforeAll(async () => {
    model = await startScriptedModel((request: ChatCompletionRequest): ScriptedReply => {
      if (request.stream !== true) return { content: JSON.stringify(structured(request)) };
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: `From what I found: ${last.content ?? ''}` };
      const question = last?.content ?? '';
      if (question === SPIDERS_QUESTION) return { content: SPIDERS_ANSWER };
      if (question === RECALL_QUESTION)
        return {
          toolCalls: [
            { name: 'retrieve_past_answer', arguments: JSON.stringify({ exchangeId: spidersTurn }) },
          ],
        };
      if (question === SAILING_QUESTION)
        return {
          toolCalls: [
            {
              name: 'search_conversation_history',
              arguments: JSON.stringify({ search_query: 'sailing', limit: 3 }),
            },
          ],
        };
      return { content: 'Noted.' };
    });
    runtime = await startTestRuntime({ settings: model.settings });
    client = new ChatClient(runtime.url, 'user_001');
    other = new ChatClient(runtime.url, 'user_002');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  /** One turn, to its end and through both workers; the streamed requests it made to the model. */
  async function ask(sessionId: string, text: string, extra: Record<string, unknown> = {}) {
    const from = model.requests.length;
    const chatMessageId = crypto.randomUUID();
    await expectStatus(await client.post({ sessionId, chatMessageId, text, ...extra }), 202);
    const events = await live.waitForTerminal(chatMessageId);
    expect(events.at(-1)?.type).toBe('message-end');
    await settle(runtime);
    const requests = model.requests.slice(from);
    return { chatMessageId, events, requests, chat: requests.filter((r) => r.stream === true) };
  }

  async function memories(as: ChatClient = client, userId = as.userId) {
    return fetch(`${runtime.url}/api/memory/users/${userId}/memories`, { headers: as.headers() });
  }

  async function facts(): Promise<FactView[]> {
    return (await expectStatus<{ facts: FactView[] }>(await memories(), 200)).facts;
  }

  async function search(query: string, as: ChatClient = client, userId = as.userId) {
    return fetch(`${runtime.url}/api/memory/users/${userId}/conversations/search`, {
      method: 'POST',
      headers: as.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ query, limit: 5 }),
    });
  }

  async function countItems(container: string, userId: string): Promise<number> {
    const { resources } = await runtime.clients.database
      .container(container)
      .items.query<number>({
        query: 'SELECT VALUE COUNT(1) FROM c WHERE c.userId = @userId',
        parameters: [{ name: '@userId', value: userId }],
      })
      .fetchAll();
    return resources[0] ?? 0;
  }

  it("learns from the user's own words only, with provenance, and summarises the conversation", async () => {
    conversation1 = await client.startSession();
    const first = await ask(conversation1, STATEMENTS);
    spidersTurn = (await ask(conversation1, SPIDERS_QUESTION)).chatMessageId;
    const recall = await ask(conversation1, RECALL_QUESTION);
    // The tool result the model was given says "the user loves spiders" (the assistant's earlier words).
    expect(recall.chat.at(-1)?.messages.at(-1)?.content).toContain('the user loves spiders');

    // The user's open page was told each time a turn changed memory, with what changed.
    expect(
      await live.waitForMessage(
        (data) =>
          (data as { type?: string }).type === 'memory-changed' &&
          (data as { chatMessageId?: string }).chatMessageId === first.chatMessageId,
      ),
    ).toEqual({
      type: 'memory-changed',
      sessionId: conversation1,
      chatMessageId: first.chatMessageId,
      summary: true,
      profile: true,
    });

    const learned = await facts();
    const statements = learned.map((fact) => fact.statement).sort();
    expect(statements).toEqual([
      'The user loves sailing.',
      'The user prefers short answers in bullet points.',
      "The user's daughter Maya is learning to swim.",
    ]);
    for (const fact of learned) {
      expect(fact.status).toBe('active');
      expect(fact.provenance).toEqual([
        expect.objectContaining({
          sessionId: conversation1,
          chatMessageId: first.chatMessageId,
          messageId: `${first.chatMessageId}_user`,
        }),
      ]);
      expect(fact.validFrom).toBe(fact.provenance[0]?.at);
    }
    // The profile requests saw the user's words and the facts, never the assistant's answer or a tool's result.
    const profileRequests = model.requests.filter(
      (r) => r.response_format?.json_schema?.name === 'memory_profile_changes',
    );
    expect(profileRequests.length).toBe(3);
    for (const request of profileRequests)
      expect(JSON.stringify(request.messages)).not.toMatch(/loves spiders/);

    const { summaries } = await expectStatus<{
      summaries: (ConversationSummaryView & { vector_embedding?: unknown })[];
    }>(await memories(), 200);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ sessionId: conversation1, persons: ['Maya'], places: ['Lisbon'] });
    expect(summaries[0]?.themes).toContain('sailing');
    expect(summaries[0]?.vector_embedding).toBeUndefined();
  });

  it('personalises a new conversation and finds the earlier one when asked about it', async () => {
    conversation2 = await client.startSession();
    const turn = await ask(conversation2, SAILING_QUESTION);
    const firstRequest = turn.chat[0]!;
    expect(systemPrompt(firstRequest)).toContain('The user prefers short answers in bullet points.');
    expect(systemPrompt(firstRequest)).toContain('The user loves sailing.');
    expect(toolNames(firstRequest)).toContain('search_conversation_history');
    // The model called the tool; its result names conversation 1 (id and title) for the answer to cite.
    const toolResult = turn.chat[1]?.messages.at(-1);
    expect(toolResult?.role).toBe('tool');
    const result = JSON.parse(toolResult?.content ?? '{}') as {
      conversations?: { sessionId: string; title?: string }[];
    };
    expect(result.conversations?.[0]).toMatchObject({
      sessionId: conversation1,
      title: 'Sailing and family',
    });
    expect(JSON.stringify(result)).not.toContain(conversation2);

    // The prompt as sent is the conversation's first message: later turns send it again, without a new read.
    const again = await ask(conversation2, 'Thanks!');
    expect(systemPrompt(again.chat[0]!)).toBe(systemPrompt(firstRequest));
    const history = await expectStatus<{ systemPrompt?: { content: string; personalised: boolean } }>(
      await fetch(`${runtime.url}/api/history/conversations/${conversation2}`, { headers: client.headers() }),
      200,
    );
    expect(history.systemPrompt).toEqual(
      expect.objectContaining({ content: systemPrompt(firstRequest), personalised: true }),
    );
  });

  it('supersedes a contradicted fact and reaffirms a repeated one', async () => {
    const contradiction = await ask(conversation2, CONTRADICTION);
    await ask(conversation2, REPEAT);
    const all = await facts();
    const sailing = all.find((fact) => fact.statement === 'The user loves sailing.');
    const rowing = all.find((fact) => fact.statement === 'The user loves rowing.');
    expect(rowing).toMatchObject({ status: 'active', category: 'interests' });
    expect(sailing).toMatchObject({
      status: 'superseded',
      supersededBy: rowing?.factId,
      changeReason: 'The user no longer likes sailing; they love rowing now.',
    });
    expect(sailing?.validUntil).toBe(rowing?.validFrom);
    expect(rowing?.provenance[0]?.chatMessageId).toBe(contradiction.chatMessageId);
    const bullets = all.filter((fact) => /bullet points/.test(fact.statement));
    expect(bullets).toHaveLength(1);
    expect(bullets[0]?.provenance.map((source) => source.sessionId)).toEqual([conversation1, conversation2]);
  });

  it('changes nothing when a turn is delivered again', async () => {
    const before = {
      facts: await facts(),
      summaries: await countItems(CONVERSATION_SUMMARIES_CONTAINER, 'user_001'),
      items: await countItems(PROFILE_FACTS_CONTAINER, 'user_001'),
    };
    const summaryBefore = await runtime.app.memory.summaries.get('user_001', conversation2);
    // The turn's own announcement, published again under new message ids (so duplicate detection lets it in).
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', conversation2);
    const chatMessageId = memory.messages.find((m) => m.content === CONTRADICTION)!.chatMessageId;
    const turn = memory.messages.filter((m) => m.chatMessageId === chatMessageId);
    for (let i = 0; i < 3; i += 1)
      await runtime.app.chat.publisher.publish(MESSAGE_COMPLETED_TOPIC, {
        body: messageCompleted({
          userId: 'user_001',
          sessionId: conversation2,
          chatMessageId,
          completedAt: new Date().toISOString(),
          messages: turn.map((m) => ({ ...m, ordinal: m.ordinal ?? 0 })),
        }),
        messageId: `${completedMessageId(conversation2, chatMessageId)}.again.${i}`,
        sessionId: conversation2,
        subject: 'completed',
      });
    await settle(runtime);
    expect(await facts()).toEqual(before.facts);
    expect(await countItems(CONVERSATION_SUMMARIES_CONTAINER, 'user_001')).toBe(before.summaries);
    expect(await countItems(PROFILE_FACTS_CONTAINER, 'user_001')).toBe(before.items);
    expect((await runtime.app.memory.summaries.get('user_001', conversation2))?.summary).toEqual(
      summaryBefore?.summary,
    );
  });

  it('dead-letters an event that breaks the contract, with its reason', async () => {
    const sessionId = conversation2;
    await runtime.serviceBus.publish(MESSAGE_COMPLETED_TOPIC, {
      messageId: 'poisoned-for-memory-1',
      sessionId,
      // A completed turn without its messages: nothing the worker could take in.
      body: messageCompleted({
        userId: 'user_001',
        sessionId,
        chatMessageId: crypto.randomUUID(),
        completedAt: new Date().toISOString(),
        messages: [],
      }),
    });
    await settle(runtime);
    const dead = runtime.serviceBus.deadLetters({
      topicName: MESSAGE_COMPLETED_TOPIC,
      subscriptionName: MEMORY_SUBSCRIPTION,
    });
    expect(dead).toEqual([
      expect.objectContaining({
        messageId: 'poisoned-for-memory-1',
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deadLetterErrorDescription: expect.stringMatching(/does not carry the user's message/),
      }),
    ]);
  });

  it('leaves no trace of a turn posted with use_memory false', async () => {
    const before = await facts();
    const profileCalls = model.requests.length;
    const sessionId = await client.startSession();
    const turn = await ask(sessionId, PRIVATE, { use_memory: false });
    // No profile in its prompt, no memory tool offered, nothing sent to the memory worker's model.
    expect(systemPrompt(turn.chat[0]!)).not.toContain('bullet points');
    expect(toolNames(turn.chat[0]!)).not.toContain('search_conversation_history');
    const memoryCalls = model.requests
      .slice(profileCalls)
      .filter((r) =>
        /memory_profile_changes|conversation_summary/.test(r.response_format?.json_schema?.name ?? ''),
      );
    expect(memoryCalls).toEqual([]);
    expect(await facts()).toEqual(before);
    expect(await runtime.app.memory.summaries.get('user_001', sessionId)).toBeUndefined();
    // `useMemory` is the same switch.
    const second = await ask(sessionId, 'I love cycling a lot.', { useMemory: false });
    expect(toolNames(second.chat[0]!)).not.toContain('search_conversation_history');
    expect(await facts()).toEqual(before);
  });

  it('starts a new conversation on the basic prompt when the profile read hangs, within the budget', async () => {
    const turnServices = runtime.app.chat.turn;
    const profile = turnServices.profile;
    turnServices.profile = { list: () => new Promise<never>(() => undefined) };
    try {
      const sessionId = await client.startSession();
      const started = Date.now();
      const chatMessageId = crypto.randomUUID();
      const from = model.requests.length;
      await expectStatus(await client.post({ sessionId, chatMessageId, text: 'Hello there.' }), 202);
      const events = await live.waitForTerminal(chatMessageId);
      const firstToken = events.find((event) => event.type === 'content');
      expect(firstToken).toBeDefined();
      const elapsed = Date.now() - started;
      // The budget, plus the turn's own work; nowhere near the read's (endless) wait.
      expect(elapsed).toBeGreaterThanOrEqual(PROFILE_FETCH_BUDGET_MS);
      expect(elapsed).toBeLessThan(PROFILE_FETCH_BUDGET_MS + 3_000);
      const request = model.requests.slice(from).find((r) => r.stream === true)!;
      expect(systemPrompt(request)).not.toContain('bullet points');
      await settle(runtime);
    } finally {
      turnServices.profile = profile;
    }
  });

  it('refuses another user, and forgets a deleted memory at once', async () => {
    expect((await memories(other, 'user_001')).status).toBe(403);
    expect((await search('sailing', other, 'user_001')).status).toBe(403);
    const theirs = await expectStatus<{ results: ConversationSearchHit[] }>(
      await search('sailing', other),
      200,
    );
    expect(theirs.results).toEqual([]);

    const found = await expectStatus<{ results: ConversationSearchHit[] }>(await search('sailing'), 200);
    expect(found.results.map((hit) => hit.sessionId)).toContain(conversation1);
    const forget = await fetch(
      `${runtime.url}/api/memory/users/user_001/memories?sessionId=${conversation1}`,
      { method: 'DELETE', headers: client.headers() },
    );
    expect(forget.status).toBe(204);
    const after = await expectStatus<{ results: ConversationSearchHit[] }>(await search('sailing'), 200);
    expect(after.results.map((hit) => hit.sessionId)).not.toContain(conversation1);
    // The facts only conversation 1 taught are gone; the one said again in conversation 2 stays, from it alone.
    const left = await facts();
    expect(left.some((fact) => fact.statement === "The user's daughter Maya is learning to swim.")).toBe(
      false,
    );
    const bullets = left.find((fact) => /bullet points/.test(fact.statement));
    expect(bullets?.provenance.map((source) => source.sessionId)).toEqual([conversation2]);
  });
});
