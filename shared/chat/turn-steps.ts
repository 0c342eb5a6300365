// The activities of the chatTurn orchestration, as use-cases over ports: prepare the prompt, stream one LLM
// call, run one tool call, commit the turn or record its failure. Each publishes its part of the turn's event
// stream from the sequence number the orchestration hands it, and each can run again after a crash without
// answering twice: what it already did is found in the hot store.
import type { ChatMessage, LlmGateway, LlmUsage } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import type { CoalescingOptions } from '../streaming/delta-coalescer.js';
import type { TurnEventSink } from '../streaming/turn-event-sink.js';
import type { TurnEventStore } from '../streaming/turn-event-store.js';
import { TurnStream } from '../streaming/turn-stream.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { parseInput } from '../validation.js';
import {
  assistantMessageId,
  completedMessageId,
  messageCompletedSchema,
  MESSAGE_COMPLETED_TOPIC,
  userMessageId,
  type ChatTurnInput,
  type CommitTurnInput,
  type ConversationMessage,
  type FailTurnInput,
  type LlmStepInput,
  type LlmStepOutput,
  type MessageCompleted,
  type PrepareTurnOutput,
  type RunToolInput,
  type RunToolOutput,
  type StoredToolCall,
  type TurnRecord,
  type TurnRef,
} from './contracts.js';
import { BASIC_SYSTEM_PROMPT, buildPrompt } from './prompt.js';
import type { TurnStateStore } from './turn-state-store.js';
import type { WorkingMemoryStore } from './working-memory-store.js';

export interface TurnServices {
  workingMemory: WorkingMemoryStore;
  turns: TurnStateStore;
  events: TurnEventStore;
  sink: TurnEventSink;
  llm: LlmGateway;
  tools: ToolRegistry;
  publisher: MessagePublisher;
  settings: { promptTokenBudget: number; maxOutputTokens: number; coalescing: CoalescingOptions };
  now?: () => Date;
  /** The invocation's logger. */
  log?: Pick<Logger, 'warn'>;
}

export async function prepareTurn(services: TurnServices, input: ChatTurnInput): Promise<PrepareTurnOutput> {
  const ref: TurnRef = {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
  };
  // The client learns at once that its message is being answered; the prompt is built meanwhile.
  const stream = openStream(services, ref, 1);
  stream.emit({
    type: 'message-start',
    userMessageId: userMessageId(input.chatMessageId),
    assistantMessageId: assistantMessageId(input.chatMessageId),
  });
  const delivered = stream.close();
  try {
    const memory = await services.workingMemory.load(input.userId, input.sessionId);
    if (
      memory.messages.some((message) => message.chatMessageId === input.chatMessageId && isFinal(message))
    ) {
      return { alreadyDone: true, nextSeq: stream.nextSeq };
    }
    const prompt = buildPrompt({
      systemPrompt: BASIC_SYSTEM_PROMPT,
      history: memory.messages.filter((message) => message.chatMessageId !== input.chatMessageId),
      userText: input.text,
      tokenBudget: services.settings.promptTokenBudget,
    });
    await services.turns.create({
      ...ref,
      userText: input.text,
      postedAt: input.postedAt,
      prompt: prompt.messages,
      rounds: [],
    });
    return { alreadyDone: false, nextSeq: stream.nextSeq };
  } finally {
    await delivered;
  }
}

export async function llmStep(services: TurnServices, input: LlmStepInput): Promise<LlmStepOutput> {
  const turn = await requireTurn(services, input);
  const done = turn.rounds.find((round) => round.round === input.round);
  if (done) return stepResult(done.nextSeq, done.toolCalls, done.finishReason, input.toolsAllowed);

  // Events from this step's seq on mean an earlier attempt streamed and then died: a second answer would
  // contradict what the client already shows, so the turn ends here.
  const sent = await services.events.read(input.sessionId, input.chatMessageId, input.firstSeq - 1);
  if (sent.length > 0) {
    const last = sent[sent.length - 1];
    return {
      nextSeq: (last?.seq ?? input.firstSeq - 1) + 1,
      toolCalls: [],
      finishReason: 'error',
      failure: {
        code: 'stream_interrupted',
        message: 'The answer was interrupted. Your message is kept; send it again.',
      },
    };
  }

  const stream = openStream(services, input, input.firstSeq);
  let reasoningOpen = false;
  const messages = [...turn.prompt, ...(await roundMessages(services, input, turn))];
  let result;
  try {
    result = await services.llm.streamChat(
      {
        messages,
        tools: services.tools.specs(),
        toolChoice: input.toolsAllowed ? 'auto' : 'none',
        maxTokens: services.settings.maxOutputTokens,
      },
      (delta) => {
        if (delta.type === 'reasoning') {
          reasoningOpen = true;
          stream.emit({ type: 'reasoning-delta', delta: delta.text });
        } else if (delta.type === 'content') {
          if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
          reasoningOpen = false;
          stream.emit({ type: 'content', delta: delta.text });
        }
      },
    );
  } catch (error) {
    const partial = stream.emitted.length > 0;
    await stream.close();
    // Nothing sent yet: the orchestration's retry calls the model again. Otherwise the turn fails cleanly.
    if (!partial) throw error;
    services.log?.warn(`The model's stream broke after ${stream.emitted.length} events:`, error);
    return {
      nextSeq: stream.nextSeq,
      toolCalls: [],
      finishReason: 'error',
      failure: {
        code: 'llm_stream_failed',
        message: 'The model stopped answering midway. Your message is kept; send it again.',
      },
    };
  }
  if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
  const toolCalls = input.toolsAllowed ? result.toolCalls : [];
  for (const call of toolCalls) {
    stream.emit({
      type: 'tool-call',
      round: input.round,
      toolCallId: call.id,
      name: call.name,
      arguments: call.arguments,
    });
  }
  await stream.close();
  const round = await services.turns.addRound(input, {
    round: input.round,
    content: result.content,
    reasoning: result.reasoning,
    toolCalls,
    finishReason: result.finishReason,
    ...(result.usage ? { usage: result.usage } : {}),
    nextSeq: stream.nextSeq,
  });
  return stepResult(round.nextSeq, round.toolCalls, round.finishReason, input.toolsAllowed);
}

export async function runTool(services: TurnServices, input: RunToolInput): Promise<RunToolOutput> {
  const turn = await requireTurn(services, input);
  const call = turn.rounds.find((round) => round.round === input.round)?.toolCalls[input.index];
  if (call === undefined)
    throw new Error(`Turn ${input.chatMessageId} has no tool call ${input.index} in round ${input.round}.`);
  let stored = await services.turns.getToolResult(input, input.round, input.index);
  if (stored === undefined) {
    const outcome = await services.tools.execute(call, {
      userId: input.userId,
      sessionId: input.sessionId,
      chatMessageId: input.chatMessageId,
    });
    stored = {
      round: input.round,
      index: input.index,
      toolCallId: call.id,
      name: call.name,
      arguments: call.arguments,
      ...outcome,
    };
    await services.turns.putToolResult(input, stored);
  }
  const stream = openStream(services, input, input.seq);
  stream.emit({
    type: 'tool-result',
    round: input.round,
    toolCallId: stored.toolCallId,
    name: stored.name,
    result: stored.result,
    isError: stored.isError,
  });
  await stream.close();
  return { isError: stored.isError };
}

export async function commitTurn(services: TurnServices, input: CommitTurnInput): Promise<void> {
  const turn = await requireTurn(services, input);
  const now = (services.now?.() ?? new Date()).toISOString();
  const toolCalls: StoredToolCall[] = [];
  for (const round of turn.rounds) {
    for (const [index, call] of round.toolCalls.entries()) {
      const result = await services.turns.getToolResult(input, round.round, index);
      toolCalls.push({
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        result: result?.result ?? '',
        isError: result?.isError ?? true,
        round: round.round,
      });
    }
  }
  const assistant: ConversationMessage = {
    messageId: assistantMessageId(input.chatMessageId),
    chatMessageId: input.chatMessageId,
    role: 'assistant',
    content: answerText(turn),
    timestamp: now,
    finishReason: input.finishReason,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
  await services.workingMemory.append(input.userId, input.sessionId, [userMessage(turn), assistant]);

  const stream = openStream(services, input, input.seq);
  const usage = totalUsage(turn.rounds.map((round) => round.usage));
  stream.emit({ type: 'message-end', finishReason: input.finishReason, ...(usage ? { usage } : {}) });
  await stream.close();
  await announce(services, input, 'completed', now);
}

export async function failTurn(services: TurnServices, input: FailTurnInput): Promise<void> {
  const turn = await services.turns.get(input);
  const now = (services.now?.() ?? new Date()).toISOString();
  const messages: ConversationMessage[] = [
    {
      ...userMessage(turn ?? { ...input, prompt: [], rounds: [] }),
      failure: input.failure,
    },
  ];
  const partial = turn ? answerText(turn) : '';
  if (partial !== '') {
    messages.push({
      messageId: assistantMessageId(input.chatMessageId),
      chatMessageId: input.chatMessageId,
      role: 'assistant',
      content: partial,
      timestamp: now,
      finishReason: 'error',
    });
  }
  await services.workingMemory.append(input.userId, input.sessionId, messages);
  const stream = openStream(services, input, input.seq);
  stream.emit({ type: 'error', code: input.failure.code, message: input.failure.message });
  await stream.close();
  await announce(services, input, 'failed', now);
}

function openStream(services: TurnServices, ref: TurnRef, firstSeq: number): TurnStream {
  return new TurnStream({
    ...ref,
    firstSeq,
    store: services.events,
    sink: services.sink,
    coalescing: services.settings.coalescing,
  });
}

async function requireTurn(services: TurnServices, ref: TurnRef): Promise<TurnRecord> {
  const turn = await services.turns.get(ref);
  if (turn === undefined) throw new Error(`No turn record for ${ref.chatMessageId}.`);
  return turn;
}

/** The assistant and tool messages of the rounds before `input.round`, so the model sees its tool results. */
async function roundMessages(
  services: TurnServices,
  input: LlmStepInput,
  turn: TurnRecord,
): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  for (const round of turn.rounds.filter((r) => r.round < input.round).sort((a, b) => a.round - b.round)) {
    messages.push({
      role: 'assistant',
      content: round.content,
      ...(round.toolCalls.length > 0 ? { tool_calls: round.toolCalls } : {}),
    });
    for (const [index, call] of round.toolCalls.entries()) {
      const result = await services.turns.getToolResult(input, round.round, index);
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: result?.result ?? JSON.stringify({ error: 'The tool did not return a result.' }),
      });
    }
  }
  return messages;
}

function stepResult(
  nextSeq: number,
  toolCalls: readonly { name: string }[],
  finishReason: string,
  toolsAllowed: boolean,
): LlmStepOutput {
  return {
    nextSeq,
    toolCalls: toolsAllowed ? toolCalls.map((call, index) => ({ index, name: call.name })) : [],
    finishReason,
  };
}

function userMessage(turn: Pick<TurnRecord, 'chatMessageId' | 'userText' | 'postedAt'>): ConversationMessage {
  return {
    messageId: userMessageId(turn.chatMessageId),
    chatMessageId: turn.chatMessageId,
    role: 'user',
    content: turn.userText,
    timestamp: turn.postedAt,
  };
}

/** Exactly the text a client assembles from the turn's content events, across its rounds. */
function answerText(turn: TurnRecord): string {
  return turn.rounds.map((round) => round.content).join('');
}

/** The turn is over once its assistant reply or its failure is stored. */
function isFinal(message: ConversationMessage): boolean {
  return message.role === 'assistant' || message.failure !== undefined;
}

function totalUsage(usages: readonly (LlmUsage | undefined)[]): LlmUsage | undefined {
  const known = usages.filter((usage): usage is LlmUsage => usage !== undefined);
  if (known.length === 0) return undefined;
  return {
    promptTokens: known.reduce((sum, usage) => sum + usage.promptTokens, 0),
    completionTokens: known.reduce((sum, usage) => sum + usage.completionTokens, 0),
    totalTokens: known.reduce((sum, usage) => sum + usage.totalTokens, 0),
  };
}

async function announce(
  services: TurnServices,
  ref: TurnRef,
  outcome: MessageCompleted['outcome'],
  completedAt: string,
): Promise<void> {
  const body = parseInput(
    messageCompletedSchema,
    {
      userId: ref.userId,
      sessionId: ref.sessionId,
      chatMessageId: ref.chatMessageId,
      outcome,
      completedAt,
    } satisfies MessageCompleted,
    'message-completed body',
  );
  await services.publisher.publish(MESSAGE_COMPLETED_TOPIC, {
    body,
    messageId: completedMessageId(ref.sessionId, ref.chatMessageId),
    sessionId: ref.sessionId,
    subject: outcome,
  });
}
