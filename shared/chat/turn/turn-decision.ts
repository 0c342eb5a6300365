// The turn's rules for a model round: given what the step read of its turn and what just happened, the effects to
// carry out, in order (send again, store and send events, call the model, commit, free the slot, announce). Pure.
import type { LlmReply } from '../../llm/llm-gateway.js';
import { isTerminalEvent, type ChatEvent } from '../../streaming/contracts.js';
import { answerText, discardRange, keptEvents } from '../../streaming/turn-transcript.js';
import { turnMessagesIn } from '../../conversation/active-path.js';
import { assistantMessageId, userMessageId } from '../../conversation/turn-ids.js';
import type { ConversationMessage, StoredToolCall } from '../../conversation/messages.js';
import {
  CANCELLED_FINISH_REASON,
  TOOL_ROUNDS_EXHAUSTED,
  type LlmStepInput,
  type LlmStepOutput,
} from '../contracts/activities.js';
import type { RoundRecord, ToolResultRecord, TurnRecord } from '../contracts/documents.js';
import type { StoredTurn } from '../turn-state-store.js';
import { promptOf, type PromptState } from './turn-prompt.js';
import { sourcesGrewIn, turnSources } from './turn-sources.js';
import type { Decision, Happening, RoundReply, TurnEffect, TurnEnd } from './turn-effects.js';
import { keptReasoning } from './turn-reasoning.js';
import { memoryFlag, modelFlag } from '../contracts/queue.js';
import { totalUsage } from './turn-usage.js';
import { HAND_BACK, handsBack, toolsOutcome } from './client-tools.js';

/** What a model round read at its start, and what it has done since. */
export interface RoundStep extends PromptState {
  input: LlmStepInput;
  /** The turn's record as read; undefined until a round asked for tools. */
  turn: StoredTurn | undefined;
  /** Events already stored from this round's first seq on: what an earlier attempt of the step left. */
  stored: ChatEvent[];
  /** Stored by an earlier attempt, and maybe never sent: sent again first. */
  unsent: ChatEvent[];
  toolResults: ToolResultRecord[];
  /** seq the next stored event takes. */
  nextSeq: number;
  stopped: boolean;
  deleted: boolean;
  /** When the step read the stop mark and the tombstone (epoch ms): the model stream's watch follows it. */
  checkedAt: number;
  /** The step's clock when it read (ISO). */
  at: string;
  /**
   * A new conversation's first round reads the profile (up to its budget), and a later round may move working memory
   * back to its path, between the step's check and the stream: then the stream's watch reads at once.
   */
  preparedLong?: boolean;
  record?: TurnRecord;
  reply?: RoundReply;
  answer?: { message: ConversationMessage; model: string | undefined };
  end?: TurnEnd;
}

type RoundDecision = Decision<RoundStep, LlmStepOutput>;

/** The decisions of a model round (llmStep). */
export function decideRound(step: RoundStep, happened: Happening): RoundDecision {
  switch (happened.kind) {
    case 'read':
      return roundOpened(step);
    case 'prepared':
      return roundPrepared({ ...step, record: happened.record, memory: happened.memory });
    case 'replied':
      return roundReplied(step, happened.reply, happened.at);
    case 'recorded':
      return {
        state: step,
        effects: [{ kind: 'output', output: toolsOutcome(happened.round, recordOf(step)) }],
      };
    case 'committed':
      return answerCommitted({ ...step, memory: happened.memory });
    case 'closed':
      return roundClosed(step, happened.nextSeq);
    case 'ran':
      throw new Error('A model round runs no tool.');
  }
}

function roundOpened(step: RoundStep): RoundDecision {
  const { input, turn } = step;
  // Deleted before the round began: no model call, and what the round wrote as it opened is erased.
  if (step.deleted) return { state: step, effects: [{ kind: 'deleted' }] };
  // What an earlier attempt stored may never have been sent (it died in between): sent again while the stream is
  // open. Once its end is stored, a step run again sends nothing (a client missing the tail reads it from the log).
  const resend: TurnEffect<LlmStepOutput>[] =
    step.unsent.length > 0 && !step.stored.some(isTerminalEvent)
      ? [{ kind: 'resend', events: step.unsent }]
      : [];
  const committed = turnMessagesIn(step.memory, input.chatMessageId).find(
    (message) => message.messageId === assistantMessageId(input.chatMessageId),
  );
  if (committed) return finishCommitted(step, committed, resend);
  step = {
    ...step,
    preparedLong:
      (turn === undefined && step.memory.messageCount === 0) || Boolean(turn?.branch?.parentChatMessageId),
  };
  const recorded = turn?.rounds.find((round) => round.round === input.round);
  if (recorded)
    return { state: step, effects: [...resend, { kind: 'output', output: toolsOutcome(recorded, turn) }] };
  if (turn === undefined)
    return {
      state: step,
      effects: [...resend, { kind: 'begin-turn', input, memory: step.memory, digest: step.digest }],
    };
  // A later round's history is a range of the window, which holds the active path: should the user have switched
  // branches while tools ran, working memory moves back to the turn's path first (as its commit would).
  const parentId = turn.branch?.parentChatMessageId;
  if (parentId)
    return {
      state: step,
      effects: [
        ...resend,
        { kind: 'show-path', record: turn, parentChatMessageId: parentId, memory: step.memory },
      ],
    };
  const next = roundPrepared({ ...step, record: turn });
  return { state: next.state, effects: [...resend, ...next.effects] };
}

/** The round's record and path are ready: its sources, then its stream (or the end of a stopped turn). */
function roundPrepared(step: RoundStep): RoundDecision {
  const { input, stored, toolResults } = step;
  const record = recordOf(step);
  const effects: TurnEffect<LlmStepOutput>[] = [];
  // What the last tool round added to the turn's sources goes out before the text that cites it (also when the turn
  // was stopped: the answer keeps the sources), unless an earlier attempt of this round sent it already.
  if (sourcesGrewIn(toolResults, input.round - 1) && !stored.some((e) => e.type === 'sources'))
    effects.push({ kind: 'emit', event: { type: 'sources', sources: turnSources(toolResults) } });
  if (step.stopped) {
    const stopped = stoppedRound(stored);
    const next = roundReplied({ ...step, record }, stopped.reply, step.at);
    return { state: next.state, effects: [...effects, ...stopped.effects, ...next.effects] };
  }
  // The last round called the client's tools: the turn ends, handing the calls back, with no model call.
  if (handsBack(record, input.round)) {
    const next = roundReplied(
      { ...step, record, input: { ...input, toolsAllowed: true } },
      HAND_BACK,
      step.at,
    );
    return { state: next.state, effects: [...effects, ...next.effects] };
  }
  // What an earlier attempt of this round showed is voided before the round is streamed again.
  const voided = discardRange(stored);
  if (voided) effects.push({ kind: 'emit', event: { type: 'discard', ...voided } });
  effects.push({
    kind: 'call-model',
    messages: promptOf(step, record, toolResults),
    toolsAllowed: input.toolsAllowed,
    watchFrom: step.preparedLong ? undefined : step.checkedAt,
    ...(record.tools === undefined ? {} : { tools: record.tools }),
    ...(record.clientTools === undefined ? {} : { clientTools: record.clientTools }),
  });
  return { state: { ...step, record }, effects };
}

/**
 * A round that begins after its turn was stopped calls no model. What an earlier attempt of it showed ends the
 * answer; tool calls it announced are voided (they will never run), and reasoning it left open is closed.
 */
function stoppedRound(stored: readonly ChatEvent[]): { reply: LlmReply; effects: TurnEffect<never>[] } {
  const kept = keptEvents(stored);
  const calls = kept.filter((event) => event.type === 'tool-call');
  const effects: TurnEffect<never>[] = [];
  const first = calls[0];
  const last = calls.at(-1);
  if (first && last)
    effects.push({ kind: 'emit', event: { type: 'discard', fromSeq: first.seq, toSeq: last.seq } });
  const reasoning = kept.filter(
    (event) => event.type === 'reasoning-delta' || event.type === 'reasoning-end',
  );
  if (reasoning.at(-1)?.type === 'reasoning-delta')
    effects.push({ kind: 'emit', event: { type: 'reasoning-end' } });
  const reply: LlmReply = {
    content: answerText(stored),
    reasoning: '',
    toolCalls: [],
    finishReason: CANCELLED_FINISH_REASON,
  };
  return { reply, effects };
}

/** The model's reply: its tool calls recorded for the orchestration to run, or the answer committed. */
function roundReplied(step: RoundStep, replied: RoundReply, at: string): RoundDecision {
  const { input } = step;
  const record = recordOf(step);
  // Stopped while it streamed: the text so far is the answer, and tool calls it was making are not run.
  const reply = replied.finishReason === CANCELLED_FINISH_REASON ? { ...replied, toolCalls: [] } : replied;
  // A reply cut at the token limit may have broken arguments and no room left: its text is the answer.
  const toolCalls = input.toolsAllowed && reply.finishReason !== 'length' ? reply.toolCalls : [];
  if (toolCalls.length > 0) {
    const effects: TurnEffect<LlmStepOutput>[] = toolCalls.map((call) => ({
      kind: 'emit',
      event: {
        type: 'tool-call',
        round: input.round,
        toolCallId: call.id,
        name: call.name,
        arguments: call.arguments,
      },
    }));
    effects.push({ kind: 'close' });
    return { state: { ...step, reply: { ...reply, toolCalls } }, effects };
  }
  const finishReason =
    !input.toolsAllowed && reply.finishReason === 'tool_calls' ? TOOL_ROUNDS_EXHAUSTED : reply.finishReason;
  const usage = totalUsage([...record.rounds.map((round) => round.usage), reply.usage]);
  const sources = turnSources(step.toolResults);
  const message: ConversationMessage = {
    messageId: assistantMessageId(input.chatMessageId),
    chatMessageId: input.chatMessageId,
    role: 'assistant',
    content: record.rounds.map((round) => round.content).join('') + reply.content,
    timestamp: at,
    finishReason,
    ...(usage ? { usage } : {}),
    ...toolCallsField(record, step.toolResults),
    ...(sources.length > 0 ? { sources } : {}),
    ...keptReasoning(record.rounds, reply),
    ...memoryFlag(input),
    // Which of the catalogue's models answered: a regenerate with another model shows on its alternative.
    ...modelFlag(input),
  };
  return {
    state: {
      ...step,
      reply,
      answer: { message, model: reply.model },
      end: { finishReason, usage, rounds: record.rounds.length + 1, postedAt: record.postedAt },
    },
    // The last coalesced text is still held: it goes out with `message-end` in one stored batch.
    effects: [
      { kind: 'settle' },
      {
        kind: 'commit',
        messages: [{ ...userMessage(record), ...memoryFlag(input) }, message],
        memory: step.memory,
        record,
      },
    ],
  };
}

/** The answer is committed: the header and the slot before the stream's end, which then goes out. */
function answerCommitted(step: RoundStep): RoundDecision {
  const { answer, end } = step;
  if (answer === undefined || end === undefined) throw new Error('No answer was committed.');
  return {
    state: step,
    effects: [
      { kind: 'touch-header', memory: step.memory },
      { kind: 'settle' },
      { kind: 'free-slot' },
      { kind: 'emit-end', finishReason: end.finishReason, usage: end.usage, model: answer.model },
      { kind: 'close' },
    ],
  };
}

function roundClosed(step: RoundStep, nextSeq: number): RoundDecision {
  const { input, reply } = step;
  if (step.answer === undefined) {
    // The tool calls are stored: the round joins the record, with the seq its tools' results take.
    if (reply === undefined) throw new Error('The round closed before the model replied.');
    const round: RoundRecord = {
      round: input.round,
      content: reply.content,
      reasoning: reply.reasoning,
      ...(reply.reasoningMs !== undefined ? { reasoningMs: reply.reasoningMs } : {}),
      toolCalls: reply.toolCalls,
      finishReason: reply.finishReason,
      ...(reply.usage ? { usage: reply.usage } : {}),
      nextSeq,
    };
    return { state: step, effects: [{ kind: 'record-round', record: recordOf(step), round }] };
  }
  const { message } = step.answer;
  return {
    state: step,
    effects: [
      {
        kind: 'output',
        output: { outcome: 'answered', nextSeq, toolCalls: [], finishReason: message.finishReason ?? 'stop' },
      },
      ...(step.end ? [{ kind: 'log-end' as const, end: step.end }] : []),
      { kind: 'announce', outcome: 'completed', completedAt: message.timestamp, memory: step.memory },
    ],
  };
}

/**
 * The turn was committed by an earlier attempt, which may have died before ending the stream: the header and the
 * slot first, then the stream brought to the committed answer (the text still missing, or the round voided and sent
 * whole) and ended; the turn is announced again (a duplicate announcement is dropped by its message id).
 */
function finishCommitted(
  step: RoundStep,
  committed: ConversationMessage,
  resend: TurnEffect<LlmStepOutput>[],
): RoundDecision {
  const { input, stored } = step;
  const finishReason = committed.finishReason ?? 'stop';
  const announce: TurnEffect<LlmStepOutput> = {
    kind: 'announce',
    outcome: 'completed',
    completedAt: committed.timestamp,
    memory: step.memory,
  };
  if (stored.some(isTerminalEvent))
    return {
      state: step,
      effects: [
        { kind: 'touch-header', memory: step.memory },
        {
          kind: 'output',
          output: { outcome: 'answered', nextSeq: step.nextSeq, toolCalls: [], finishReason },
        },
        announce,
      ],
    };
  const earlier = (step.turn?.rounds ?? [])
    .filter((round) => round.round < input.round)
    .map((round) => round.content)
    .join('');
  const roundText = committed.content.slice(earlier.length);
  const shown = answerText(stored);
  const effects: TurnEffect<LlmStepOutput>[] = [
    ...resend,
    { kind: 'touch-header', memory: step.memory },
    { kind: 'free-slot' },
  ];
  if (roundText.startsWith(shown)) {
    if (roundText.length > shown.length)
      effects.push({ kind: 'emit', event: { type: 'content', delta: roundText.slice(shown.length) } });
  } else {
    const voided = discardRange(stored);
    if (voided) effects.push({ kind: 'emit', event: { type: 'discard', ...voided } });
    if (roundText !== '') effects.push({ kind: 'emit', event: { type: 'content', delta: roundText } });
  }
  effects.push(
    { kind: 'emit-end', finishReason, usage: committed.usage, model: undefined },
    { kind: 'close' },
  );
  const posted = turnMessagesIn(step.memory, input.chatMessageId).find((message) => message.role === 'user');
  const end: TurnEnd = {
    finishReason,
    usage: committed.usage,
    rounds: input.round + 1,
    postedAt: posted?.timestamp ?? committed.timestamp,
  };
  return { state: { ...step, answer: { message: committed, model: undefined }, end }, effects };
}

function recordOf(step: RoundStep): TurnRecord {
  const record = step.record ?? step.turn;
  if (record === undefined) throw new Error(`Turn ${step.input.chatMessageId} has no record yet.`);
  return record;
}

/** The user's message of a turn, as committed. */
export function userMessage(
  turn: Pick<TurnRecord, 'chatMessageId' | 'userText' | 'postedAt' | 'attachments'>,
): ConversationMessage {
  return {
    messageId: userMessageId(turn.chatMessageId),
    chatMessageId: turn.chatMessageId,
    role: 'user',
    content: turn.userText,
    ...(turn.attachments?.length ? { attachments: turn.attachments } : {}),
    timestamp: turn.postedAt,
  };
}

function toolCallsField(
  record: TurnRecord,
  results: readonly ToolResultRecord[],
): { toolCalls?: StoredToolCall[] } {
  const toolCalls: StoredToolCall[] = record.rounds.flatMap((round) =>
    round.toolCalls.map((call, index) => {
      const result = results.find((r) => r.round === round.round && r.index === index);
      return {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        result: result?.result ?? '',
        isError: result?.isError ?? true,
        round: round.round,
      };
    }),
  );
  return toolCalls.length > 0 ? { toolCalls } : {};
}
