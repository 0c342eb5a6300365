// The chat turn's activities over in-memory ports: the events each stores (always before they are sent), and that
// running any of them again — as Durable does after a crash — neither answers twice nor leaves clients with text
// that differs from the committed answer: a round that had streamed part of its answer is voided and streamed anew.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { LlmDelta, LlmGateway, LlmReply, StreamChatRequest } from '../llm/llm-gateway.js';
import type { MessagePublisher, OutgoingMessage } from '../messaging/message-publisher.js';
import {
  MemorySessions,
  MemoryEvents,
  MemoryTurnCancellations,
  MemoryTurns,
  MemoryWorkingMemory,
} from '../../test/support/in-memory-ports.js';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
  MemorySessionMemory,
} from '../../test/support/in-memory-history.js';
import type { SessionDigest } from '../history/contracts.js';
import type { HeaderTouch } from '../history/conversation-headers.js';
import { answerText } from '../streaming/turn-transcript.js';
import { EventSeqTakenError } from '../streaming/turn-event-store.js';
import { createChatTools } from '../tools/index.js';
import { MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import { storeFacts } from '../../test/support/memory-fixtures.js';
import { PROFILE_FETCH_BUDGET_MS, type ProfileFact } from '../memory/contracts.js';
import { MAX_TURN_SOURCES, type KnowledgeSearchHit, type KnowledgeSource } from '../knowledge/contracts.js';
import type { ChatEvent } from '../streaming/contracts.js';
import { sourceOf } from '../tools/knowledge-search.js';
import {
  MESSAGE_COMPLETED_MAX_BYTES,
  messageCompletedSchema,
  type ChatTurnInput,
  type ConversationMessage,
  type LlmStepInput,
  type MessageCompleted,
  type TurnRef,
} from './contracts.js';
import { NotReadyError } from '../errors.js';
import { BASIC_SYSTEM_PROMPT } from './prompt.js';
import { TurnCancelSignals } from './cancellation/turn-cancel-signals.js';
import { failTurn } from './turn/fail-turn.js';
import { llmStep } from './turn/llm-step.js';
import { completedBody } from './turn/message-completed.js';
import { runTool } from './turn/run-tool.js';
import type { TurnServices } from './turn/turn-services.js';

const input: ChatTurnInput = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  text: 'use the add_numbers tool to add 2 and 3',
  postedAt: '2026-11-21T10:00:00.000Z',
  maxToolRounds: 10,
};
const ref: TurnRef = { userId: input.userId, sessionId: input.sessionId, chatMessageId: input.chatMessageId };
const round0: LlmStepInput = {
  ...ref,
  round: 0,
  firstSeq: 1,
  toolsAllowed: true,
  message: { text: input.text, postedAt: input.postedAt },
};

/** Stops a scripted reply after some deltas, as a process that dies mid-answer would. */
class Crash extends Error {
  constructor(readonly afterDeltas: number) {
    super(`the process died after ${afterDeltas} deltas`);
  }
}

/** A model that plays a script: each call streams the next reply's deltas (word by word), then returns it. */
class ScriptedModel implements Pick<LlmGateway, 'streamChat'> {
  readonly requests: StreamChatRequest[] = [];
  constructor(private readonly replies: (LlmReply | Error | { reply: LlmReply; crash: Crash })[]) {}
  streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
    this.requests.push(request);
    const next = this.replies.shift();
    if (next === undefined) return Promise.reject(new Error('the script has no more replies'));
    if (next instanceof Error) return Promise.reject(next);
    const [reply, crash] = 'crash' in next ? [next.reply, next.crash] : [next, undefined];
    const deltas: LlmDelta[] = [
      ...(reply.reasoning ? [{ type: 'reasoning' as const, text: reply.reasoning }] : []),
      ...reply.content
        .split(/(?= )/)
        .filter(Boolean)
        .map((text) => ({ type: 'content' as const, text })),
    ];
    for (const [index, delta] of deltas.entries()) {
      if (crash && index === crash.afterDeltas) return Promise.reject(crash);
      onDelta?.(delta);
    }
    return Promise.resolve(reply);
  }
}

const toolCallReply: LlmReply = {
  content: '',
  reasoning: '',
  toolCalls: [{ id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b":3}' }],
  finishReason: 'tool_calls',
};
const answerReply: LlmReply = {
  content: 'The sum is 5.',
  reasoning: 'Add them.',
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
};

/** Headers that note, with each touch, the events stored by then: a touch must come before the stream's end. */
class RecordingHeaders extends MemoryConversationHeaders {
  readonly touches: { touch: HeaderTouch; storedBefore: string[] }[] = [];
  override touch(touch: HeaderTouch) {
    this.touches.push({ touch: structuredClone(touch), storedBefore: storedEvents().map((e) => e.type) });
    return super.touch(touch);
  }
}

let turns: MemoryTurns;
let headers: RecordingHeaders;
let longTerm: MemoryConversationMessages;
let sessionMemory: MemorySessionMemory;
let events: MemoryEvents;
let memory: MemoryWorkingMemory;
let published: OutgoingMessage[];
let model: ScriptedModel;
let profile: MemoryProfileFacts;
let searches: unknown[];
let cancellations: MemoryTurnCancellations;
let sessions: MemorySessions;
/** What the knowledge search finds, by query. */
let knowledge: Map<string, KnowledgeSearchHit[]>;

function services(): TurnServices {
  const publisher: MessagePublisher = {
    publish: (_entity, messages) => {
      published.push(...([] as OutgoingMessage[]).concat(messages));
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  return {
    workingMemory: memory,
    turns,
    events,
    sink: events,
    llm: model as unknown as LlmGateway,
    tools: createChatTools({
      messages: longTerm,
      sessionMemory,
      workingMemory: memory,
      searchConversations: (userId, query, limit, options) => {
        searches.push({ userId, query, limit, options });
        return Promise.resolve([]);
      },
      searchKnowledge: (_userId, query) => Promise.resolve(knowledge.get(query) ?? []),
    }),
    publisher,
    headers,
    sessions,
    eraser: { eraseTurnData: () => Promise.resolve(0) },
    sessionMemory,
    profile,
    cancellation: new TurnCancelSignals(cancellations, { pollIntervalMs: 1_000 }),
    settings: {
      promptTokenBudget: 4_000,
      maxOutputTokens: 256,
      coalescing: { flushIntervalMs: 0, flushMaxChars: 256 },
      profileTimeoutMs: PROFILE_FETCH_BUDGET_MS,
    },
    now: () => new Date('2026-11-21T10:00:05.000Z'),
  };
}

beforeEach(() => {
  turns = new MemoryTurns();
  events = new MemoryEvents();
  memory = new MemoryWorkingMemory();
  headers = new RecordingHeaders();
  longTerm = new MemoryConversationMessages();
  sessionMemory = new MemorySessionMemory(longTerm);
  published = [];
  model = new ScriptedModel([toolCallReply, answerReply]);
  profile = new MemoryProfileFacts();
  searches = [];
  cancellations = new MemoryTurnCancellations();
  sessions = new MemorySessions();
  knowledge = new Map();
});

function storedEvents() {
  return [...events.stored.values()].sort((a, b) => a.seq - b.seq);
}

function committedAnswer() {
  return memory.messages.find((m) => m.messageId === `${input.chatMessageId}_assistant`);
}

async function runWholeTurn(): Promise<void> {
  const first = await llmStep(services(), round0);
  expect(first.outcome).toBe('tools');
  await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
  const second = await llmStep(services(), {
    ...ref,
    round: 1,
    firstSeq: first.nextSeq + 1,
    toolsAllowed: true,
  });
  expect(second.outcome).toBe('answered');
}

describe('chat turn steps', () => {
  it('store one gap-free event sequence before sending it, and commit exactly what the client assembled', async () => {
    await runWholeTurn();
    const stream = storedEvents();
    expect(stream.map((e) => e.seq)).toEqual(stream.map((_, i) => i + 1));
    expect(stream.map((e) => e.type)).toEqual([
      'message-start',
      'tool-call',
      'tool-result',
      'reasoning-delta',
      'reasoning-end',
      'content',
      'content',
      'content',
      'content',
      'message-end',
    ]);
    // MemoryEvents refuses a send of an event it has not stored; everything stored was sent, in order.
    expect(events.sent).toEqual(stream);
    expect(stream.at(-1)).toMatchObject({
      type: 'message-end',
      finishReason: 'stop',
      usage: answerReply.usage,
    });
    expect(committedAnswer()?.content).toBe(answerText(stream));
    expect(committedAnswer()?.toolCalls).toEqual([
      {
        id: 'call_1',
        name: 'add_numbers',
        arguments: '{"a":2,"b":3}',
        result: '{"sum":5}',
        isError: false,
        round: 0,
      },
    ]);
    expect(memory.messages.map((m) => m.messageId)).toEqual([
      `${input.chatMessageId}_user`,
      `${input.chatMessageId}_assistant`,
    ]);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      sessionId: input.sessionId,
      body: { outcome: 'completed', ...ref },
    });
    // The second call saw the tool call and its result, after the same prompt as the first.
    expect(model.requests[1]?.messages.slice(0, 2)).toEqual(model.requests[0]?.messages);
    expect(model.requests[1]?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', tool_calls: toolCallReply.toolCalls },
      { role: 'tool', tool_call_id: 'call_1', content: '{"sum":5}' },
    ]);
  });

  it('answer a turn without tools in one step that keeps no turn record', async () => {
    model = new ScriptedModel([answerReply]);
    const coalescing = { flushIntervalMs: 60_000, flushMaxChars: 256 };
    const step = await llmStep({ ...services(), settings: { ...services().settings, coalescing } }, round0);
    expect(step).toMatchObject({ outcome: 'answered', finishReason: 'stop' });
    expect(turns.turns.size).toBe(0);
    // The first text goes out at once; the rest is held and travels with message-end, in one stored batch.
    expect(storedEvents().map((e) => e.type)).toEqual([
      'message-start',
      'reasoning-delta',
      'reasoning-end',
      'content',
      'content',
      'message-end',
    ]);
    expect(events.batches.get(step.nextSeq - 2)?.map((e) => e.type)).toEqual(['content', 'message-end']);
    expect(answerText(storedEvents())).toBe(committedAnswer()?.content);
  });

  it('run again after the turn ended without calling the model, running the tool or adding an event', async () => {
    await runWholeTurn();
    const stored = new Map(events.stored);
    model = new ScriptedModel([]);
    expect(await llmStep(services(), round0)).toMatchObject({ outcome: 'answered' });
    await runTool(services(), { ...ref, round: 0, index: 0, seq: 3 });
    const round1 = { ...ref, round: 1, firstSeq: 4, toolsAllowed: true };
    expect(await llmStep(services(), round1)).toMatchObject({ outcome: 'answered' });
    expect(model.requests).toHaveLength(0);
    expect(memory.messages).toHaveLength(2);
    expect(events.stored).toEqual(stored);
    // Announced again under the same message id: Service Bus drops the duplicate.
    expect(new Set(published.map((m) => m.messageId)).size).toBe(1);
  });

  it('continue a round that died midway: the streamed part is discarded and the answer streamed whole', async () => {
    model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }, answerReply]);
    await expect(llmStep(services(), round0)).rejects.toThrow('died');
    const partial = storedEvents();
    expect(partial.map((e) => e.type)).toEqual([
      'message-start',
      'reasoning-delta',
      'reasoning-end',
      'content',
      'content',
    ]);
    // What a live client had by then.
    const live = [...events.sent];

    const step = await llmStep(services(), round0);
    expect(step.outcome).toBe('answered');
    const all = storedEvents();
    expect(all.slice(0, partial.length)).toEqual(partial); // no seq ever gets other content
    expect(all[partial.length]).toMatchObject({ type: 'discard', fromSeq: 2, toSeq: 5 });
    expect(answerText(all)).toBe('The sum is 5.');
    expect(committedAnswer()?.content).toBe('The sum is 5.');
    // The live client receives only what follows, and ends up with the committed answer too.
    expect(events.sent.slice(0, live.length)).toEqual(live);
    expect(answerText(events.sent)).toBe('The sum is 5.');
    expect(model.requests).toHaveLength(2);
  });

  it('finish the stream of a turn committed just before a crash, from what its clients already have', async () => {
    model = new ScriptedModel([answerReply]);
    await llmStep(services(), round0);
    const all = storedEvents();
    // As if the process died after the commit, before its last batch ([content, message-end]) was stored.
    const lastBatch = all.length - 2;
    for (const event of all.slice(lastBatch)) events.stored.delete(event.seq);
    events.batches.delete(all[lastBatch]!.seq);

    model = new ScriptedModel([]);
    const step = await llmStep(services(), round0);
    expect(step.outcome).toBe('answered');
    const finished = storedEvents();
    expect(finished.map((e) => e.type).slice(-2)).toEqual(['content', 'message-end']);
    expect(answerText(finished)).toBe(committedAnswer()?.content);
    expect(finished.at(-1)).toMatchObject({ usage: answerReply.usage });
    expect(model.requests).toHaveLength(0);
  });

  it('stop when another attempt of the step is writing the same seqs', async () => {
    model = new ScriptedModel([answerReply]);
    await events.append([
      { ...ref, seq: 1, type: 'message-start', userMessageId: 'x_user', assistantMessageId: 'x_assistant' },
    ]);
    await expect(llmStep(services(), round0)).rejects.toBeInstanceOf(EventSeqTakenError);
  });

  it('record a failed turn with the text its client was shown, end the stream with error, and announce it', async () => {
    model = new ScriptedModel([
      { reply: answerReply, crash: new Crash(3) },
      { reply: answerReply, crash: new Crash(4) },
    ]);
    await expect(llmStep(services(), round0)).rejects.toThrow('died');
    await expect(llmStep(services(), round0)).rejects.toThrow('died');
    const shown = answerText(storedEvents());
    expect(shown).toBe('The sum is');

    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    const failInput = { ...ref, userText: input.text, postedAt: input.postedAt, failure };
    await failTurn(services(), failInput);
    expect(memory.messages).toEqual([
      expect.objectContaining({ role: 'user', content: input.text, failure }),
      expect.objectContaining({ role: 'assistant', content: shown, finishReason: 'error' }),
    ]);
    const stream = storedEvents();
    expect(stream.at(-1)).toMatchObject({ type: 'error', code: 'llm_unavailable', seq: stream.length });
    expect(published[0]).toMatchObject({ body: { outcome: 'failed' } });

    // Running it again adds nothing.
    await failTurn(services(), failInput);
    expect(storedEvents()).toEqual(stream);
    expect(memory.messages).toHaveLength(2);
  });

  describe('the one line a finished turn logs', () => {
    function logged(): { lines: string[]; services: TurnServices } {
      const lines: string[] = [];
      const log = {
        log: (...args: unknown[]) => void lines.push(args.map(String).join(' ')),
        warn: () => undefined,
      };
      return { lines, services: { ...services(), log } };
    }

    it('is written once by the step that commits, with tokens over every round, and not again on a rerun', async () => {
      const { lines, services: withLog } = logged();
      const first = await llmStep(withLog, round0);
      await runTool(withLog, { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await llmStep(withLog, round1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^Turn ended: session ${ref.sessionId}, turn ${ref.chatMessageId}, finish stop, tokens \\d+ in`,
        ),
      );
      expect(lines[0]).toContain('5.0 s since posted, 2 model rounds');
      await llmStep(withLog, round1);
      expect(lines).toHaveLength(1);
    });

    it('is written by the attempt that ends the stream of a turn committed just before a crash', async () => {
      model = new ScriptedModel([answerReply]);
      await llmStep(services(), round0);
      const all = storedEvents();
      for (const event of all.slice(all.length - 2)) events.stored.delete(event.seq);
      const { lines, services: withLog } = logged();
      await llmStep(withLog, round0);
      expect(lines).toEqual([expect.stringMatching(/finish stop, tokens \d+ in, \d+ out/)]);
    });

    it('says error for a failed turn, once', async () => {
      model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }]);
      await expect(llmStep(services(), round0)).rejects.toThrow('died');
      const { lines, services: withLog } = logged();
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      const failInput = { ...ref, userText: input.text, postedAt: input.postedAt, failure };
      await failTurn(withLog, failInput);
      await failTurn(withLog, failInput);
      expect(lines).toEqual([
        expect.stringMatching(/finish error, tokens not reported, 5\.0 s since posted/),
      ]);
    });
  });

  it('ask for a text answer, and run no tools, once the tool rounds are used up', async () => {
    model = new ScriptedModel([toolCallReply]);
    const step = await llmStep(services(), { ...round0, toolsAllowed: false });
    expect(model.requests[0]?.toolChoice).toBe('none');
    expect(step).toMatchObject({ outcome: 'answered', toolCalls: [], finishReason: 'tool_rounds_exhausted' });
    expect(storedEvents().some((e) => e.type === 'tool-call')).toBe(false);
  });

  it('run no tool call of a reply cut at the token limit, and commit its text as the answer', async () => {
    // Cut off mid-call: the arguments may be broken JSON, and the answer is all the model will give.
    const cut: LlmReply = {
      content: 'Let me add them.',
      reasoning: '',
      toolCalls: [{ id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b' }],
      finishReason: 'length',
    };
    model = new ScriptedModel([cut]);
    const step = await llmStep(services(), round0);
    expect(step).toMatchObject({ outcome: 'answered', toolCalls: [], finishReason: 'length' });
    expect(turns.turns.size).toBe(0);
    expect(storedEvents().some((e) => e.type === 'tool-call')).toBe(false);
    expect(storedEvents().at(-1)).toMatchObject({ type: 'message-end', finishReason: 'length' });
    expect(committedAnswer()).toMatchObject({ content: 'Let me add them.', finishReason: 'length' });
    expect(committedAnswer()?.toolCalls).toBeUndefined();
  });

  it('build the prompt from the history in the budget, and rebuild the same one in a later round', async () => {
    memory.messages = [
      { messageId: 'a_user', chatMessageId: 'a', role: 'user', content: 'earlier question', timestamp: 't' },
      {
        messageId: 'a_assistant',
        chatMessageId: 'a',
        role: 'assistant',
        content: 'earlier answer',
        timestamp: 't',
      },
    ];
    await runWholeTurn();
    expect(turns.turns.get(input.chatMessageId)?.history).toEqual({
      fromMessageId: 'a_user',
      toMessageId: 'a_assistant',
    });
    expect(model.requests[0]?.messages.map((m) => m.content).slice(1)).toEqual([
      'earlier question',
      'earlier answer',
      input.text,
    ]);
    expect(model.requests[1]?.messages.slice(0, 4)).toEqual(model.requests[0]?.messages);
  });

  it('touch the header once per commit, before the stream ends, so a client that saw the end can list it', async () => {
    await runWholeTurn();
    expect(headers.touches).toHaveLength(1);
    expect(headers.touches[0]!.storedBefore).not.toContain('message-end');
    expect(headers.touches[0]!.touch).toEqual({
      userId: input.userId,
      sessionId: input.sessionId,
      createdAt: input.postedAt,
      lastActivity: '2026-11-21T10:00:05.000Z',
      messageCount: 2,
      preview: 'The sum is 5.',
      firstUserText: input.text,
      opensConversation: true,
      // The conversation's first turn begins the main line, and its path.
      path: {
        leafChatMessageId: input.chatMessageId,
        branch: { parentChatMessageId: null, branchId: 'main', gaps: [] },
        lastOrdinal: 1,
      },
    });
    expect(await headers.get(input.userId, input.sessionId)).toMatchObject({
      title: input.text,
      titleSource: 'first-message',
      messageCount: 2,
    });
    // The announcement comes after the touch: the history worker finds the header it needs.
    expect(published).toHaveLength(1);
  });

  it('touch the header again, before message-end, when finishing a turn committed just before a crash', async () => {
    model = new ScriptedModel([answerReply]);
    await llmStep(services(), round0);
    const all = storedEvents();
    const end = all.at(-1)!;
    events.stored.delete(end.seq);
    events.batches.delete(end.seq);

    model = new ScriptedModel([]);
    await llmStep(services(), round0);
    expect(headers.touches).toHaveLength(2);
    expect(headers.touches[1]!.storedBefore).not.toContain('message-end');
    expect(storedEvents().at(-1)?.type).toBe('message-end');
    expect(headers.touches[1]!.touch).toEqual(headers.touches[0]!.touch);

    // Once the stream has ended, a later run still touches once (harmless) and adds no event.
    await llmStep(services(), round0);
    expect(headers.touches).toHaveLength(3);
    expect(storedEvents()).toHaveLength(all.length);
  });

  it('touch the header of a failed turn before its error is stored, with the text its client was shown', async () => {
    model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }]);
    await expect(llmStep(services(), round0)).rejects.toThrow('died');
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    await failTurn(services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
    expect(headers.touches).toHaveLength(1);
    expect(headers.touches[0]!.storedBefore).not.toContain('error');
    expect(headers.touches[0]!.touch).toMatchObject({
      messageCount: 2,
      preview: 'The sum',
      firstUserText: input.text,
    });
  });

  it('give the model the digest and leave out the history it summarises, in every round', async () => {
    memory.messages = [
      {
        messageId: 'a_user',
        chatMessageId: 'a',
        role: 'user',
        content: 'old question',
        timestamp: 't',
        ordinal: 0,
      },
      {
        messageId: 'a_assistant',
        chatMessageId: 'a',
        role: 'assistant',
        content: 'old answer',
        timestamp: 't',
        ordinal: 1,
      },
      {
        messageId: 'b_user',
        chatMessageId: 'b',
        role: 'user',
        content: 'recent question',
        timestamp: 't',
        ordinal: 2,
      },
      {
        messageId: 'b_assistant',
        chatMessageId: 'b',
        role: 'assistant',
        content: 'recent answer',
        timestamp: 't',
        ordinal: 3,
      },
    ];
    const digest: SessionDigest = {
      summary: 'Earlier the user asked an old question.',
      summarizedThrough: 2,
      recentExchanges: [
        { exchangeId: 'a', ordinal: 0, line: 'old question, old answer', tags: ['old'], at: 't' },
      ],
      summarizedTokens: 0,
      updatedAt: 't',
      gaps: [],
    };
    await sessionMemory.putDigest(input.userId, input.sessionId, digest, undefined);
    await runWholeTurn();
    const sent = model.requests[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'user']);
    expect(sent[1]?.content).toContain('Summary of the earlier part of this conversation: ' + digest.summary);
    expect(sent[1]?.content).toContain('- a: old question, old answer [old]');
    expect(sent.slice(2).map((m) => m.content)).toEqual(['recent question', 'recent answer', input.text]);
    expect(sent.some((m) => m.content === 'old question')).toBe(false);
    // The turn record keeps the range of the history it sent, and the next round sends the same prompt.
    expect(turns.turns.get(input.chatMessageId)?.history).toEqual({
      fromMessageId: 'b_user',
      toMessageId: 'b_assistant',
    });
    expect(model.requests[1]?.messages.slice(0, 5)).toEqual(sent);
  });

  it('keep use_memory false in the turn record and on the announcement of a completed or failed turn', async () => {
    const off = { useMemory: false } as const;
    const first = await llmStep(services(), { ...round0, ...off });
    expect(turns.turns.get(input.chatMessageId)?.useMemory).toBe(false);
    await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq, ...off });
    await llmStep(services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true, ...off });
    expect(published[0]?.body).toMatchObject({ outcome: 'completed', useMemory: false });

    published = [];
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    const other = { ...ref, chatMessageId: 'b0e8e7a2-7f4f-4b0a-9d55-4b1b6a0e2f10' };
    events = new MemoryEvents();
    await failTurn(services(), { ...other, userText: 'hi', postedAt: input.postedAt, failure, ...off });
    expect(published[0]?.body).toMatchObject({ outcome: 'failed', useMemory: false });
  });

  it('offer the conversation search only when the turn may use memory, and refuse a call to it otherwise', async () => {
    const searchCall: LlmReply = {
      ...toolCallReply,
      toolCalls: [
        { id: 'call_s', name: 'search_conversation_history', arguments: '{"search_query":"boat"}' },
      ],
    };
    model = new ScriptedModel([searchCall, answerReply]);
    const first = await llmStep(services(), round0);
    expect(model.requests[0]?.tools?.map((tool) => tool.name)).toContain('search_conversation_history');
    await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
    expect(searches).toEqual([
      { userId: input.userId, query: 'boat', limit: 5, options: { excludeSessionId: input.sessionId } },
    ]);

    // A use_memory false turn: not offered; a model that calls it anyway gets an error result.
    const other = { ...ref, chatMessageId: 'b0e8e7a2-7f4f-4b0a-9d55-4b1b6a0e2f10' };
    events = new MemoryEvents();
    model = new ScriptedModel([searchCall, answerReply]);
    const off = { useMemory: false } as const;
    const step = await llmStep(services(), { ...round0, ...other, ...off });
    expect(model.requests[0]?.tools?.map((tool) => tool.name)).not.toContain('search_conversation_history');
    expect(await runTool(services(), { ...other, round: 0, index: 0, seq: step.nextSeq, ...off })).toEqual({
      isError: true,
    });
    expect(searches).toHaveLength(1);
    expect(storedEvents().find((e) => e.type === 'tool-result')).toMatchObject({
      isError: true,
      result: expect.stringContaining('use_memory false') as unknown,
    });
  });

  it('leave useMemory off the announcement of a turn that may use memory (absent means true)', async () => {
    await runWholeTurn();
    expect(turns.turns.get(input.chatMessageId)).not.toHaveProperty('useMemory');
    expect(published[0]?.body).not.toHaveProperty('useMemory');
  });

  describe("a new conversation's system prompt", () => {
    const sailing: ProfileFact = {
      id: 'fact-1',
      kind: 'fact',
      userId: input.userId,
      category: 'interests',
      statement: 'Loves sailing.',
      status: 'active',
      validFrom: '2026-11-01T09:00:00.000Z',
      provenance: [
        { sessionId: 'earlier', chatMessageId: 'c', messageId: 'c_user', at: '2026-11-01T09:00:00.000Z' },
      ],
      createdAt: '2026-11-01T09:00:00.000Z',
      updatedAt: '2026-11-01T09:00:00.000Z',
    };

    /** Counts the profile's reads. */
    function countReads(): { reads: number } {
      const counter = { reads: 0 };
      const list = profile.list.bind(profile);
      profile.list = (...args) => {
        counter.reads += 1;
        return list(...args);
      };
      return counter;
    }

    it("is personalised with the user's facts, sent in every round, stored and announced with the turn", async () => {
      await storeFacts(profile, sailing);
      await storeFacts(profile, { ...sailing, id: 'fact-2', statement: 'Likes golf.', status: 'superseded' });
      const counter = countReads();
      await runWholeTurn();
      const system = model.requests[0]?.messages[0];
      expect(system?.role).toBe('system');
      expect(system?.content).toContain(`${BASIC_SYSTEM_PROMPT}\n\n`);
      expect(system?.content).toContain('- Loves sailing.');
      expect(system?.content).not.toContain('golf');
      // The tool round's prompt is the same, from the turn record: the profile was read once.
      expect(model.requests[1]?.messages[0]).toEqual(system);
      expect(counter.reads).toBe(1);
      const expected = {
        content: system?.content,
        personalised: true,
        createdAt: '2026-11-21T10:00:05.000Z',
      };
      expect(turns.turns.get(input.chatMessageId)?.systemPrompt).toEqual(expected);
      expect(memory.systemPrompt).toEqual(expected);
      expect(published[0]?.body).toMatchObject({ systemPrompt: expected });
      // Not a numbered message: the turn's ordinals are 0 and 1 as ever.
      expect(memory.messages.map((m) => m.ordinal)).toEqual([0, 1]);
    });

    it("is the stored one in the conversation's later turns, without reading the profile again", async () => {
      await storeFacts(profile, sailing);
      model = new ScriptedModel([answerReply, answerReply]);
      await llmStep(services(), round0);
      const first = model.requests[0]?.messages[0];
      expect(first?.content).toContain('Loves sailing.');
      const counter = countReads();
      await storeFacts(profile, { ...sailing, id: 'fact-3', statement: 'Now loves rowing.' });

      const next = { ...ref, chatMessageId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };
      events = new MemoryEvents();
      published = [];
      await llmStep(services(), {
        ...round0,
        ...next,
        message: { text: 'and now?', postedAt: input.postedAt },
      });
      expect(model.requests[1]?.messages[0]).toEqual(first);
      expect(counter.reads).toBe(0);
      // Only the turn that opened the conversation announces the prompt.
      expect(published[0]?.body).not.toHaveProperty('systemPrompt');
    });

    it('is the basic one when the turn was posted with use_memory false: the profile is never read', async () => {
      await storeFacts(profile, sailing);
      const counter = countReads();
      model = new ScriptedModel([answerReply]);
      await llmStep(services(), { ...round0, useMemory: false });
      expect(model.requests[0]?.messages[0]).toEqual({ role: 'system', content: BASIC_SYSTEM_PROMPT });
      expect(counter.reads).toBe(0);
      expect(memory.systemPrompt).toMatchObject({ content: BASIC_SYSTEM_PROMPT, personalised: false });
      expect(published[0]?.body).toMatchObject({ useMemory: false, systemPrompt: { personalised: false } });
    });

    it('is the basic one when the profile does not answer within its budget, which the round waits for at most', async () => {
      vi.useFakeTimers();
      try {
        profile.list = () => new Promise(() => undefined);
        const warnings: string[] = [];
        model = new ScriptedModel([answerReply]);
        const step = llmStep(
          {
            ...services(),
            log: { warn: (...args: unknown[]) => void warnings.push(args.map(String).join(' ')) },
          },
          round0,
        );
        await vi.advanceTimersByTimeAsync(PROFILE_FETCH_BUDGET_MS - 1);
        expect(model.requests).toHaveLength(0);
        await vi.advanceTimersByTimeAsync(1);
        await vi.runAllTimersAsync();
        expect(await step).toMatchObject({ outcome: 'answered' });
        expect(model.requests[0]?.messages[0]).toEqual({ role: 'system', content: BASIC_SYSTEM_PROMPT });
        expect(warnings).toEqual([
          `The profile of user ${input.userId} did not answer within 2000 ms: the conversation starts with the basic system prompt.`,
        ]);
        expect(memory.systemPrompt?.personalised).toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });

    it('is announced again with the commit a crashed step had made, and kept by a turn that failed after a tool round', async () => {
      await storeFacts(profile, sailing);
      model = new ScriptedModel([answerReply]);
      await llmStep(services(), round0);
      const end = storedEvents().at(-1)!;
      events.stored.delete(end.seq);
      events.batches.delete(end.seq);
      model = new ScriptedModel([]);
      await llmStep(services(), round0);
      expect(published).toHaveLength(2);
      expect(published[1]?.body).toEqual(published[0]?.body);
      expect(published[1]?.body).toMatchObject({ systemPrompt: { personalised: true } });

      // Another new conversation whose model asked for a tool, then failed: the prompt it was sent stays.
      memory = new MemoryWorkingMemory();
      turns = new MemoryTurns();
      events = new MemoryEvents();
      published = [];
      model = new ScriptedModel([toolCallReply]);
      await llmStep(services(), round0);
      const failure = { code: 'turn_failed', message: 'The answer could not be completed.' };
      await failTurn(services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
      expect(memory.systemPrompt).toEqual(turns.turns.get(input.chatMessageId)?.systemPrompt);
      expect(published[0]?.body).toMatchObject({ outcome: 'failed', systemPrompt: { personalised: true } });
    });

    it('is the basic one, and none is stored, in a conversation begun before prompts were kept', async () => {
      await storeFacts(profile, sailing);
      const counter = countReads();
      memory.messages = [
        { messageId: 'a_user', chatMessageId: 'a', role: 'user', content: 'hi', timestamp: 't', ordinal: 0 },
      ];
      model = new ScriptedModel([answerReply]);
      await llmStep(services(), round0);
      expect(model.requests[0]?.messages[0]?.content).toBe(BASIC_SYSTEM_PROMPT);
      expect(counter.reads).toBe(0);
      expect(memory.systemPrompt).toBeUndefined();
    });
  });

  it('answer without the digest when it cannot be read', async () => {
    model = new ScriptedModel([answerReply]);
    sessionMemory.getDigest = () => Promise.reject(new Error('the store is down'));
    const warnings: unknown[] = [];
    const step = await llmStep(
      { ...services(), log: { warn: (...args: unknown[]) => void warnings.push(args) } },
      round0,
    );
    expect(step.outcome).toBe('answered');
    expect(model.requests[0]?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(warnings).toHaveLength(1);
  });

  describe('branches', () => {
    // The committed turns' ids: a tool names an exchange by its turn's id, which is a UUID.
    const [A, B, C] = [
      'aaaaaaaa-0000-4000-8000-000000000001',
      'bbbbbbbb-0000-4000-8000-000000000002',
      'cccccccc-0000-4000-8000-000000000003',
    ];
    /** Committed turns, each continuing the one before: a (0,1), b (2,3), c (4,5). */
    async function threeTurns() {
      for (const [label, id] of [
        ['a', A],
        ['b', B],
        ['c', C],
      ] as const)
        await memory.append(input.userId, input.sessionId, [
          {
            messageId: `${id}_user`,
            chatMessageId: id,
            role: 'user',
            content: `question ${label}`,
            timestamp: 't',
          },
          {
            messageId: `${id}_assistant`,
            chatMessageId: id,
            role: 'assistant',
            content: `answer ${label}`,
            timestamp: 't',
          },
        ]);
    }

    const said = (request: StreamChatRequest | undefined) =>
      (request?.messages ?? []).filter((m) => m.role !== 'system').map((m) => m.content);

    const editOfB = {
      ...round0,
      message: { ...round0.message!, fork: { replaces: B, origin: 'edit' as const } },
    };

    it('stamp the branch on both messages of every turn and on its announcement, each continuing the path', async () => {
      model = new ScriptedModel([answerReply]);
      await threeTurns();
      await llmStep(services(), round0);
      const branch = { parentChatMessageId: C, branchId: 'main', gaps: [] };
      const committed = memory.messages.filter((m) => m.chatMessageId === input.chatMessageId);
      expect(committed.map((m) => [m.role, m.ordinal, m.branch])).toEqual([
        ['user', 6, branch],
        ['assistant', 7, branch],
      ]);
      expect(memory.path).toEqual({ leafChatMessageId: input.chatMessageId, branch, lastOrdinal: 7 });
      const announced = published[0]?.body as MessageCompleted;
      expect(announced.messages.map((m) => m.branch)).toEqual([branch, branch]);
    });

    it("follow an edit's parent: the prompt holds only that path, and a retried round 0 decides the same branch", async () => {
      await threeTurns();
      model = new ScriptedModel([{ reply: answerReply, crash: new Crash(2) }, answerReply]);
      await expect(llmStep(services(), editOfB)).rejects.toThrow('died');
      // The first attempt moved working memory to a's path: the retry finds a as the leaf.
      expect(memory.path?.leafChatMessageId).toBe(A);
      expect(await llmStep(services(), editOfB)).toMatchObject({ outcome: 'answered' });
      expect(said(model.requests[0])).toEqual(['question a', 'answer a', input.text]);
      expect(said(model.requests[1])).toEqual(said(model.requests[0]));
      const branch = {
        parentChatMessageId: A,
        branchId: input.chatMessageId,
        alternativeOf: B,
        origin: 'edit',
        gaps: [{ from: 2, to: 6 }],
      };
      expect(committedAnswer()?.branch).toEqual(branch);
      const loaded = await memory.load(input.userId, input.sessionId);
      expect(loaded.messages.map((m) => m.chatMessageId)).toEqual([
        A,
        A,
        input.chatMessageId,
        input.chatMessageId,
      ]);
      expect(loaded.offPath?.map((m) => m.chatMessageId)).toEqual([B, B, C, C]);
      expect((published[0]?.body as MessageCompleted).messages.map((m) => m.branch)).toEqual([
        branch,
        branch,
      ]);
    });

    it('keep the branch in the turn record of a round that asks for tools, and commit on it later', async () => {
      await threeTurns();
      const first = await llmStep(services(), editOfB);
      expect(turns.turns.get(input.chatMessageId)?.branch).toMatchObject({
        parentChatMessageId: A,
        alternativeOf: B,
      });
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await llmStep(services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(said(model.requests[1]).slice(0, 3)).toEqual(['question a', 'answer a', input.text]);
      expect(committedAnswer()?.branch).toEqual(turns.turns.get(input.chatMessageId)?.branch);
    });

    it("give the turn's tools its path: an exchange the edit left is refused as another branch's", async () => {
      await threeTurns();
      await longTerm.put(
        memory.messages
          .filter((m) => m.chatMessageId === B)
          .map((m) => ({
            ...m,
            id: m.messageId,
            kind: 'message' as const,
            userId: input.userId,
            sessionId: input.sessionId,
            ordinal: m.ordinal ?? 0,
          })),
      );
      model = new ScriptedModel([
        {
          ...toolCallReply,
          toolCalls: [
            { id: 'call_b', name: 'retrieve_past_answer', arguments: JSON.stringify({ exchangeId: B }) },
          ],
        },
        answerReply,
      ]);
      const first = await llmStep(services(), editOfB);
      expect(await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq })).toEqual({
        isError: true,
      });
      expect(turns.results.get(`${input.chatMessageId}/0/0`)?.result).toMatch(/another branch/);
    });

    it("leave a digest out of a fork's prompt when it folded turns the fork skips, and keep it otherwise", async () => {
      await threeTurns();
      const digest: SessionDigest = {
        summary: 'The user asked about a and b.',
        summarizedThrough: 4,
        recentExchanges: [],
        summarizedTokens: 0,
        updatedAt: 't',
        gaps: [],
      };
      await sessionMemory.putDigest(input.userId, input.sessionId, digest, undefined);
      model = new ScriptedModel([answerReply, answerReply]);
      await llmStep(services(), editOfB);
      const systemTexts = (request: StreamChatRequest | undefined) =>
        (request?.messages ?? []).filter((m) => m.role === 'system').map((m) => m.content);
      expect(systemTexts(model.requests[0])).toHaveLength(1);
      // The next turn continues the edit's path: still not the path the digest was folded along.
      events = new MemoryEvents();
      const next = { ...ref, chatMessageId: 'e1e1e1e1-7425-40de-944b-e07fc1f90ae7' };
      await llmStep(services(), { ...round0, ...next });
      expect(systemTexts(model.requests[1])).toHaveLength(1);
      // A regenerate of c follows b: the digest's summary of a and b stands for that path.
      events = new MemoryEvents();
      model = new ScriptedModel([answerReply]);
      const regenerate = { ...round0, chatMessageId: 'f2f2f2f2-7425-40de-944b-e07fc1f90ae7' };
      await llmStep(services(), {
        ...regenerate,
        message: { ...round0.message!, fork: { replaces: C, origin: 'regenerate' } },
      });
      expect(systemTexts(model.requests[0])).toEqual([
        BASIC_SYSTEM_PROMPT,
        expect.stringContaining('a and b'),
      ]);
    });

    it('keep a failed edit on the branch it began', async () => {
      await threeTurns();
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      await failTurn(services(), {
        ...ref,
        userText: 'edited question',
        postedAt: input.postedAt,
        failure,
        fork: { replaces: B, origin: 'edit' },
      });
      const kept = memory.messages.find((m) => m.chatMessageId === input.chatMessageId);
      expect(kept).toMatchObject({ content: 'edited question', failure, ordinal: 6 });
      expect(kept?.branch).toMatchObject({
        parentChatMessageId: A,
        alternativeOf: B,
        gaps: [{ from: 2, to: 6 }],
      });
      expect(memory.path?.leafChatMessageId).toBe(input.chatMessageId);
    });

    it('commit on the path the turn began on when the user switched branches while it ran', async () => {
      await threeTurns();
      model = new ScriptedModel([toolCallReply, answerReply]);
      const first = await llmStep(services(), round0);
      // Meanwhile the user shows b's path (as a switch to another branch would).
      const b = await memory.findTurn(input.userId, input.sessionId, B);
      await memory.showPath(input.userId, input.sessionId, b!);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await llmStep(services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(committedAnswer()?.branch).toEqual({ parentChatMessageId: C, branchId: 'main', gaps: [] });
      expect(memory.path?.leafChatMessageId).toBe(input.chatMessageId);
    });

    it('send a later round the history of its own path when the user switched branches while tools ran', async () => {
      await threeTurns();
      model = new ScriptedModel([toolCallReply, answerReply]);
      const first = await llmStep(services(), round0);
      const b = await memory.findTurn(input.userId, input.sessionId, B);
      await memory.showPath(input.userId, input.sessionId, b!);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await llmStep(services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(said(model.requests[1]).slice(0, 7)).toEqual(said(model.requests[0]));
      expect(said(model.requests[0])).toEqual([
        'question a',
        'answer a',
        'question b',
        'answer b',
        'question c',
        'answer c',
        input.text,
      ]);
    });

    it('refuse to go on while the replaced turn cannot be found, so the step is retried', async () => {
      await threeTurns();
      await expect(
        llmStep(services(), {
          ...round0,
          message: { ...round0.message!, fork: { replaces: 'zz', origin: 'edit' } },
        }),
      ).rejects.toBeInstanceOf(NotReadyError);
      expect(model.requests).toHaveLength(0);
    });
  });

  describe('knowledge-base sources', () => {
    const hit = (n: number, title = 'Employee Handbook'): KnowledgeSearchHit => ({
      chunkId: `doc:${n}`,
      documentId: 'a'.repeat(32),
      title,
      headings: [],
      pages: [n],
      text: `Passage ${n} of the handbook.`,
      library: 'shared',
      score: 1 / (60 + n),
      similarity: 0.5,
      citation: `${title}, p. ${n}`,
    });
    const searchFor = (query: string, id = 'call_k'): LlmReply => ({
      content: '',
      reasoning: '',
      toolCalls: [{ id, name: 'search_knowledge_base', arguments: JSON.stringify({ query }) }],
      finishReason: 'tool_calls',
    });
    const cites: LlmReply = {
      content: 'Parents get twenty weeks [Employee Handbook, p. 1].',
      reasoning: '',
      toolCalls: [],
      finishReason: 'stop',
    };
    const types = (stream: readonly ChatEvent[]) =>
      stream.map((e) => e.type).filter((type, i, all) => type !== 'content' || all[i - 1] !== type);
    const sourcesEvents = () =>
      storedEvents().flatMap((e) => (e.type === 'sources' ? [e.sources.map((s) => s.chunkId)] : []));

    beforeEach(() => {
      knowledge.set('parental leave', [hit(1), hit(2)]);
      knowledge.set('leave split', [hit(2), hit(3)]);
    });

    /** Runs rounds 0..n-1 of the scripted turn, each tool round's calls in turn; the last round answers. */
    async function runRounds(): Promise<void> {
      let firstSeq = 1;
      for (let round = 0; ; round++) {
        const step = await llmStep(services(), {
          ...round0,
          round,
          firstSeq,
          ...(round > 0 ? { message: undefined } : {}),
        });
        if (step.outcome === 'answered') return;
        for (const call of step.toolCalls)
          await runTool(services(), { ...ref, round, index: call.index, seq: step.nextSeq + call.index });
        firstSeq = step.nextSeq + step.toolCalls.length;
      }
    }

    it('stream what a search found before the answer, and keep it on the answer, its announcement and the tool result', async () => {
      model = new ScriptedModel([searchFor('parental leave'), cites]);
      await runRounds();
      const stream = storedEvents();
      expect(stream.map((e) => e.seq)).toEqual(stream.map((_, i) => i + 1));
      expect(types(stream)).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'content',
        'message-end',
      ]);
      const expected = [sourceOf(hit(1)), sourceOf(hit(2))];
      expect(stream.find((e) => e.type === 'sources')).toMatchObject({ seq: 4, sources: expected });
      expect(events.sent).toEqual(stream);
      expect(committedAnswer()?.sources).toEqual(expected);
      const announced = published[0]?.body as MessageCompleted;
      expect(announced.messages.find((m) => m.role === 'assistant')?.sources).toEqual(expected);
      expect([...turns.results.values()][0]?.sources).toEqual(expected);
      // The model read the passages with their citations.
      expect(model.requests[1]?.messages.at(-1)?.content).toContain('"citation":"Employee Handbook, p. 1"');
    });

    it('send the turn’s sources so far after each round that found some: every round counted, each chunk once', async () => {
      model = new ScriptedModel([
        searchFor('parental leave'),
        searchFor('leave split', 'call_2'),
        toolCallReply,
        cites,
      ]);
      await runRounds();
      // Round 1 follows the first search, round 2 the second; round 3 follows add_numbers, which found nothing.
      expect(sourcesEvents()).toEqual([
        ['doc:1', 'doc:2'],
        ['doc:1', 'doc:2', 'doc:3'],
      ]);
      const stream = storedEvents();
      expect(stream.findIndex((e) => e.type === 'sources')).toBeLessThan(
        stream.findIndex((e) => e.type === 'content'),
      );
      expect(committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2', 'doc:3']);
      expect(committedAnswer()?.sources?.[1]).toEqual(sourceOf(hit(2)));
    });

    it('send no sources event after a round that found only chunks already listed', async () => {
      model = new ScriptedModel([
        searchFor('parental leave'),
        searchFor('parental leave', 'call_2'),
        searchFor('leave split', 'call_3'),
        cites,
      ]);
      await runRounds();
      expect(sourcesEvents()).toEqual([
        ['doc:1', 'doc:2'],
        ['doc:1', 'doc:2', 'doc:3'],
      ]);
      expect(types(storedEvents())).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'tool-call',
        'tool-result',
        'tool-call',
        'tool-result',
        'sources',
        'content',
        'message-end',
      ]);
      expect(committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2', 'doc:3']);
    });

    it(`send no sources event once ${MAX_TURN_SOURCES} are listed, while the model still reads what later searches find`, async () => {
      const many = Array.from({ length: MAX_TURN_SOURCES + 5 }, (_, n) => hit(n + 1));
      knowledge.set('first', many.slice(0, 10));
      knowledge.set('second', many.slice(10, MAX_TURN_SOURCES));
      knowledge.set('third', many.slice(MAX_TURN_SOURCES));
      model = new ScriptedModel([
        searchFor('first'),
        searchFor('second', 'call_2'),
        searchFor('third', 'call_3'),
        cites,
      ]);
      await runRounds();
      expect(sourcesEvents().map((listed) => listed.length)).toEqual([10, MAX_TURN_SOURCES]);
      expect(committedAnswer()?.sources).toHaveLength(MAX_TURN_SOURCES);
      const read = model.requests[3]?.messages.at(-1)?.content ?? '';
      expect(read).toContain(`"citation":"Employee Handbook, p. ${MAX_TURN_SOURCES + 1}"`);
    });

    it('leave the event and the field out when the searches found nothing', async () => {
      model = new ScriptedModel([searchFor('boats'), cites]);
      await runRounds();
      expect(sourcesEvents()).toEqual([]);
      expect(committedAnswer()).not.toHaveProperty('sources');
    });

    it('send the sources once when a round that died is run again, and give no stored seq other content', async () => {
      model = new ScriptedModel([searchFor('parental leave'), { reply: cites, crash: new Crash(2) }, cites]);
      const first = await llmStep(services(), round0);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(services(), round1)).rejects.toThrow('died');
      const partial = storedEvents();
      expect(types(partial)).toEqual(['message-start', 'tool-call', 'tool-result', 'sources', 'content']);

      expect(await llmStep(services(), round1)).toMatchObject({ outcome: 'answered' });
      const all = storedEvents();
      expect(all.slice(0, partial.length)).toEqual(partial);
      expect(types(all.slice(partial.length))).toEqual(['discard', 'content', 'message-end']);
      expect(all[partial.length]).toMatchObject({ type: 'discard', fromSeq: 5, toSeq: partial.length });
      expect(sourcesEvents()).toHaveLength(1);
      expect(answerText(all)).toBe(cites.content);
      expect(committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
    });

    it('send the same sources event again when the attempt that died had stored nothing of its round', async () => {
      model = new ScriptedModel([searchFor('parental leave'), { reply: cites, crash: new Crash(0) }, cites]);
      const first = await llmStep(services(), round0);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(services(), round1)).rejects.toThrow('died');
      const [sent] = storedEvents().filter((e) => e.type === 'sources');
      // As if the process had died before its first batch was stored.
      events.stored.delete(sent!.seq);
      events.batches.delete(sent!.seq);
      await llmStep(services(), round1);
      expect(storedEvents().filter((e) => e.type === 'sources')).toEqual([sent]);
    });

    it('keep the sources on the answer of a turn stopped before its next round, and stream them first', async () => {
      model = new ScriptedModel([searchFor('parental leave')]);
      const first = await llmStep(services(), round0);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await cancellations.request(ref, '2026-11-21T10:00:03.000Z');
      await llmStep(services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(types(storedEvents())).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'message-end',
      ]);
      expect(committedAnswer()).toMatchObject({ finishReason: 'cancelled', content: '' });
      expect(committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
    });

    it('keep the sources its client was shown on the partial answer of a failed turn', async () => {
      model = new ScriptedModel([
        searchFor('parental leave'),
        { reply: cites, crash: new Crash(3) },
        { reply: cites, crash: new Crash(3) },
      ]);
      const first = await llmStep(services(), round0);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(services(), round1)).rejects.toThrow('died');
      await expect(llmStep(services(), round1)).rejects.toThrow('died');
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      await failTurn(services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
      expect(committedAnswer()).toMatchObject({ finishReason: 'error', content: 'Parents get twenty' });
      expect(committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
    });

    it('keep the sources its client was shown on an empty answer of a turn that failed before any text', async () => {
      model = new ScriptedModel([searchFor('parental leave'), new Error('the model is down')]);
      const first = await llmStep(services(), round0);
      await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await expect(llmStep(services(), round1)).rejects.toThrow('the model is down');
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      await failTurn(services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
      expect(types(storedEvents())).toEqual([
        'message-start',
        'tool-call',
        'tool-result',
        'sources',
        'error',
      ]);
      expect(committedAnswer()).toMatchObject({ finishReason: 'error', content: '' });
      expect(committedAnswer()?.sources?.map((s) => s.chunkId)).toEqual(['doc:1', 'doc:2']);
      const announced = published.at(-1)?.body as MessageCompleted;
      expect(announced.messages.find((m) => m.role === 'assistant')?.sources).toHaveLength(2);
    });
  });
});

describe('completedBody', () => {
  const head = { ...ref, outcome: 'completed' as const, completedAt: '2026-11-21T10:00:05.000Z' };
  const source = (n: number, excerpt: string, title = 'Handbook'): KnowledgeSource => ({
    chunkId: `doc:${n}`,
    documentId: 'a'.repeat(32),
    title,
    citation: `${title}, p. ${n}`,
    excerpt,
    score: 0.01,
  });
  const answerWith = (sources: KnowledgeSource[], result = 'found'): ConversationMessage => ({
    messageId: `${input.chatMessageId}_assistant`,
    chatMessageId: input.chatMessageId,
    role: 'assistant',
    content: 'The answer.',
    timestamp: head.completedAt,
    toolCalls: [
      { id: 'c1', name: 'search_knowledge_base', arguments: '{}', result, isError: false, round: 0 },
    ],
    sources,
    ordinal: 1,
  });
  const size = (body: MessageCompleted) => Buffer.byteLength(JSON.stringify(body), 'utf8');
  const assistantOf = (body: MessageCompleted) => body.messages.find((m) => m.role === 'assistant');

  it('carries the messages whole when they fit', () => {
    const body = completedBody(head, [answerWith([source(1, 'Leave is paid.')])]);
    expect(body.complete).toBe(true);
    expect(assistantOf(body)?.sources).toEqual([source(1, 'Leave is paid.')]);
  });

  it('cuts the tool results first, and keeps the sources whole when that is enough', () => {
    const body = completedBody(head, [answerWith([source(1, 'Leave is paid.')], 'r'.repeat(300_000))]);
    expect(body.complete).toBe(false);
    expect(size(body)).toBeLessThanOrEqual(MESSAGE_COMPLETED_MAX_BYTES);
    expect(assistantOf(body)?.toolCalls?.[0]?.result).toHaveLength(1_000);
    expect(assistantOf(body)?.sources).toEqual([source(1, 'Leave is paid.')]);
  });

  it("then drops the sources' excerpts, then the sources, until the body fits a Service Bus message", () => {
    const long = Array.from({ length: 20 }, (_, n) => source(n, 'e'.repeat(12_000)));
    const withoutExcerpts = completedBody(head, [answerWith(long)]);
    expect(withoutExcerpts.complete).toBe(false);
    expect(size(withoutExcerpts)).toBeLessThanOrEqual(MESSAGE_COMPLETED_MAX_BYTES);
    expect(assistantOf(withoutExcerpts)?.sources).toEqual(long.map((s) => ({ ...s, excerpt: '' })));
    expect(() => messageCompletedSchema.parse(withoutExcerpts)).not.toThrow();

    const titled = Array.from({ length: 20 }, (_, n) => source(n, 'e', 't'.repeat(12_000)));
    const withoutSources = completedBody(head, [answerWith(titled)]);
    expect(size(withoutSources)).toBeLessThanOrEqual(MESSAGE_COMPLETED_MAX_BYTES);
    expect(assistantOf(withoutSources)).not.toHaveProperty('sources');
    expect(assistantOf(withoutSources)?.content).toBe('The answer.');
  });
});
