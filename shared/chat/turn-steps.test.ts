// The chat turn's activities over in-memory ports: what each publishes, and that running any of them again —
// as Durable does after a crash — neither calls the model twice, nor runs a tool twice, nor answers twice.
import { beforeEach, describe, expect, it } from 'vitest';
import type { LlmDelta, LlmGateway, LlmReply, StreamChatRequest } from '../llm/llm-gateway.js';
import type { MessagePublisher, OutgoingMessage } from '../messaging/message-publisher.js';
import { MemoryEvents, MemoryTurns, MemoryWorkingMemory } from '../../test/support/in-memory-ports.js';
import { createChatTools } from '../tools/index.js';
import type { ChatTurnInput, TurnRef } from './contracts.js';
import { commitTurn, failTurn, llmStep, prepareTurn, runTool, type TurnServices } from './turn-steps.js';

const input: ChatTurnInput = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  text: 'use the add_numbers tool to add 2 and 3',
  postedAt: '2026-11-21T10:00:00.000Z',
  maxToolRounds: 10,
};
const ref: TurnRef = { userId: input.userId, sessionId: input.sessionId, chatMessageId: input.chatMessageId };

/** A model that plays a script: each call streams the next reply's deltas, then returns it. */
class ScriptedModel implements Pick<LlmGateway, 'streamChat'> {
  readonly requests: StreamChatRequest[] = [];
  constructor(private readonly replies: (LlmReply | Error)[]) {}
  streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
    this.requests.push(request);
    const reply = this.replies.shift();
    if (reply === undefined) throw new Error('the script has no more replies');
    if (reply instanceof Error) return Promise.reject(reply);
    if (reply.reasoning) onDelta?.({ type: 'reasoning', text: reply.reasoning });
    for (const word of reply.content.split(/(?= )/)) if (word) onDelta?.({ type: 'content', text: word });
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
};

let turns: MemoryTurns;
let events: MemoryEvents;
let memory: MemoryWorkingMemory;
let published: OutgoingMessage[];
let model: ScriptedModel;

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
    tools: createChatTools(),
    publisher,
    settings: {
      promptTokenBudget: 4_000,
      maxOutputTokens: 256,
      coalescing: { flushIntervalMs: 0, flushMaxChars: 256 },
    },
    now: () => new Date('2026-11-21T10:00:05.000Z'),
  };
}

beforeEach(() => {
  turns = new MemoryTurns();
  events = new MemoryEvents();
  memory = new MemoryWorkingMemory();
  published = [];
  model = new ScriptedModel([toolCallReply, answerReply]);
});

async function runWholeTurn(): Promise<void> {
  const prepared = await prepareTurn(services(), input);
  const first = await llmStep(services(), {
    ...ref,
    round: 0,
    firstSeq: prepared.nextSeq,
    toolsAllowed: true,
  });
  await runTool(services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
  const second = await llmStep(services(), {
    ...ref,
    round: 1,
    firstSeq: first.nextSeq + 1,
    toolsAllowed: true,
  });
  await commitTurn(services(), { ...ref, seq: second.nextSeq, finishReason: second.finishReason });
}

describe('chat turn steps', () => {
  it('publish one gap-free event sequence and commit exactly what the client assembled', async () => {
    await runWholeTurn();
    const stream = [...events.stored.values()].sort((a, b) => a.seq - b.seq);
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
    expect(events.sent).toEqual(stream);
    const text = stream.map((e) => (e.type === 'content' ? e.delta : '')).join('');
    const assistant = memory.messages.find((m) => m.role === 'assistant');
    expect(assistant?.content).toBe(text);
    expect(assistant?.toolCalls).toEqual([
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
    // The second call saw the tool call and its result.
    expect(model.requests[1]?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', tool_calls: toolCallReply.toolCalls },
      { role: 'tool', tool_call_id: 'call_1', content: '{"sum":5}' },
    ]);
  });

  it('run again after a crash without calling the model, running the tool or answering a second time', async () => {
    await runWholeTurn();
    const stored = new Map(events.stored);
    // Every step once more, as Durable does when a result was not recorded before the crash.
    model = new ScriptedModel([]);
    await runWholeTurn().catch(() => undefined);
    const again = await prepareTurn(services(), input);
    expect(again.alreadyDone).toBe(true);
    expect(model.requests).toHaveLength(0);
    expect(memory.messages).toHaveLength(2);
    expect(events.stored).toEqual(stored);
  });

  it('retry a model call that failed before anything was sent, and end a turn whose stream broke midway', async () => {
    const prepared = await prepareTurn(services(), input);
    model = new ScriptedModel([new Error('429 rate limited')]);
    await expect(
      llmStep(services(), { ...ref, round: 0, firstSeq: prepared.nextSeq, toolsAllowed: true }),
    ).rejects.toThrow('429');
    expect(events.stored.size).toBe(1); // only message-start

    // An earlier attempt streamed two events and died: a retry must not stream a different answer over them.
    await events.append([
      { ...ref, seq: 2, type: 'content', delta: 'The' },
      { ...ref, seq: 3, type: 'content', delta: ' sum' },
    ]);
    const step = await llmStep(services(), {
      ...ref,
      round: 0,
      firstSeq: prepared.nextSeq,
      toolsAllowed: true,
    });
    expect(step.failure?.code).toBe('stream_interrupted');
    expect(step.nextSeq).toBe(4);
    expect(model.requests).toHaveLength(1);
  });

  it('record a failed turn: the user message kept with its failure, an error event, and the announcement', async () => {
    await failTurn(services(), {
      ...ref,
      seq: 2,
      userText: input.text,
      postedAt: input.postedAt,
      failure: { code: 'llm_unavailable', message: 'The model did not answer.' },
    });
    expect(memory.messages).toEqual([
      expect.objectContaining({
        role: 'user',
        content: input.text,
        failure: { code: 'llm_unavailable', message: 'The model did not answer.' },
      }),
    ]);
    expect(events.stored.get(2)).toMatchObject({ type: 'error', code: 'llm_unavailable' });
    expect(published[0]).toMatchObject({ body: { outcome: 'failed' } });
    // The same message posted again is not answered again.
    expect((await prepareTurn(services(), input)).alreadyDone).toBe(true);
  });

  it('ask for a text answer, and run no tools, once the tool rounds are used up', async () => {
    model = new ScriptedModel([toolCallReply]);
    const prepared = await prepareTurn(services(), input);
    const step = await llmStep(services(), {
      ...ref,
      round: 0,
      firstSeq: prepared.nextSeq,
      toolsAllowed: false,
    });
    expect(model.requests[0]?.toolChoice).toBe('none');
    expect(step.toolCalls).toEqual([]);
    expect([...events.stored.values()].some((e) => e.type === 'tool-call')).toBe(false);
  });
});
