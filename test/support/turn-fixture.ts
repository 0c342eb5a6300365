// The shared fixture of the chat turn's step tests: a turn, a scripted model, and in-memory ports made fresh for each
// test (`new TurnFixture()` in a beforeEach), with the services the steps run on and helpers to read what they stored.
import { expect } from 'vitest';
import type { LlmDelta, LlmGateway, LlmReply, StreamChatRequest } from '../../shared/llm/llm-gateway.js';
import type { MessagePublisher, OutgoingMessage } from '../../shared/messaging/message-publisher.js';
import {
  MemorySessions,
  MemoryEvents,
  MemoryTurnCancellations,
  MemoryTurns,
  MemoryWorkingMemory,
} from './in-memory-ports.js';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
  MemorySessionMemory,
} from './in-memory-history.js';
import type { HeaderTouch } from '../../shared/history/conversation-headers.js';
import { createChatTools } from '../../shared/tools/index.js';
import { MemoryProfileFacts } from './in-memory-memory.js';
import { PROFILE_FETCH_BUDGET_MS } from '../../shared/memory/contracts.js';
import type { KnowledgeSearchHit } from '../../shared/knowledge/contracts.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import type { ChatTurnInput, LlmStepInput } from '../../shared/chat/contracts/activities.js';
import type { TurnRef } from '../../shared/conversation/messages.js';
import { TurnCancelSignals } from '../../shared/chat/cancellation/turn-cancel-signals.js';
import { llmStep } from '../../shared/chat/turn/llm-step.js';
import { runTool } from '../../shared/chat/turn/run-tool.js';
import type { TurnServices } from '../../shared/chat/turn/turn-services.js';

export const input: ChatTurnInput = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  text: 'use the add_numbers tool to add 2 and 3',
  postedAt: '2026-11-21T10:00:00.000Z',
  maxToolRounds: 10,
};
export const ref: TurnRef = {
  userId: input.userId,
  sessionId: input.sessionId,
  chatMessageId: input.chatMessageId,
};
export const round0: LlmStepInput = {
  ...ref,
  round: 0,
  firstSeq: 1,
  toolsAllowed: true,
  message: { text: input.text, postedAt: input.postedAt },
};

/** Stops a scripted reply after some deltas, as a process that dies mid-answer would. */
export class Crash extends Error {
  constructor(readonly afterDeltas: number) {
    super(`the process died after ${afterDeltas} deltas`);
  }
}

/** A model that plays a script: each call streams the next reply's deltas (word by word), then returns it. */
export class ScriptedModel implements Pick<LlmGateway, 'streamChat'> {
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

export const toolCallReply: LlmReply = {
  content: '',
  reasoning: '',
  toolCalls: [{ id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b":3}' }],
  finishReason: 'tool_calls',
};
export const answerReply: LlmReply = {
  content: 'The sum is 5.',
  reasoning: 'Add them.',
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
};

/** Headers that note, with each touch, the events stored by then: a touch must come before the stream's end. */
export class RecordingHeaders extends MemoryConversationHeaders {
  readonly touches: { touch: HeaderTouch; storedBefore: string[] }[] = [];
  constructor(private readonly storedEvents: () => ChatEvent[]) {
    super();
  }
  override touch(touch: HeaderTouch) {
    this.touches.push({
      touch: structuredClone(touch),
      storedBefore: this.storedEvents().map((e) => e.type),
    });
    return super.touch(touch);
  }
}

/** One test's ports and model, each made fresh; the test may replace the model or any port before it runs steps. */
export class TurnFixture {
  turns = new MemoryTurns();
  events = new MemoryEvents();
  memory = new MemoryWorkingMemory();
  headers = new RecordingHeaders(() => this.storedEvents());
  longTerm = new MemoryConversationMessages();
  sessionMemory = new MemorySessionMemory(this.longTerm);
  published: OutgoingMessage[] = [];
  model = new ScriptedModel([toolCallReply, answerReply]);
  profile = new MemoryProfileFacts();
  searches: unknown[] = [];
  cancellations = new MemoryTurnCancellations();
  sessions = new MemorySessions();
  /** What the knowledge search finds, by query. */
  knowledge = new Map<string, KnowledgeSearchHit[]>();

  services(): TurnServices {
    const publisher: MessagePublisher = {
      publish: (_entity, messages) => {
        this.published.push(...([] as OutgoingMessage[]).concat(messages));
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
    };
    return {
      workingMemory: this.memory,
      turns: this.turns,
      events: this.events,
      sink: this.events,
      llm: this.model as unknown as LlmGateway,
      tools: createChatTools({
        messages: this.longTerm,
        sessionMemory: this.sessionMemory,
        workingMemory: this.memory,
        searchConversations: (userId, query, limit, options) => {
          this.searches.push({ userId, query, limit, options });
          return Promise.resolve([]);
        },
        searchKnowledge: (_userId, query) => Promise.resolve(this.knowledge.get(query) ?? []),
      }),
      publisher,
      headers: this.headers,
      sessions: this.sessions,
      eraser: { eraseTurnData: () => Promise.resolve(0) },
      sessionMemory: this.sessionMemory,
      profile: this.profile,
      cancellation: new TurnCancelSignals(this.cancellations, { pollIntervalMs: 1_000 }),
      settings: {
        promptTokenBudget: 4_000,
        maxOutputTokens: 256,
        coalescing: { flushIntervalMs: 0, flushMaxChars: 256 },
        profileTimeoutMs: PROFILE_FETCH_BUDGET_MS,
      },
      now: () => new Date('2026-11-21T10:00:05.000Z'),
    };
  }

  storedEvents() {
    return [...this.events.stored.values()].sort((a, b) => a.seq - b.seq);
  }

  committedAnswer() {
    return this.memory.messages.find((m) => m.messageId === `${input.chatMessageId}_assistant`);
  }

  async runWholeTurn(): Promise<void> {
    const first = await llmStep(this.services(), round0);
    expect(first.outcome).toBe('tools');
    await runTool(this.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
    const second = await llmStep(this.services(), {
      ...ref,
      round: 1,
      firstSeq: first.nextSeq + 1,
      toolsAllowed: true,
    });
    expect(second.outcome).toBe('answered');
  }
}
