// The activities of the chatTurn orchestration, as use-cases over ports: one model round (the first also prepares
// the turn, the one that answers also commits it), one tool call, and the record of a turn that failed. The
// turn's event log is the truth (DESIGN §5): each step stores its events before clients see them, and a step that
// runs again after a crash reads what it already stored and goes on from there. A model round that had streamed
// part of its answer is voided with a `discard` event and streamed anew, so the answer is always completed. Every
// commit touches the conversation's header before the stream ends, so a client that saw the end can list it.
// A new conversation's first round renders its system prompt (personalised from the user's profile, read within
// its budget); the turn record keeps it for later rounds, and the commit stores it in working memory for later
// turns and announces it so long-term history keeps it as the conversation's first message. Every turn takes its
// place in the conversation's tree when it begins (active-path.ts): it continues the active path, or, for an edit
// or a regenerate, follows the replaced turn's parent (working memory moves to that path first); its prompt holds
// that path only, and its commit stamps the branch on both its messages and makes it the path's leaf.
// Knowledge-base sources the tools found go out as a `sources` event at the start of the round after them, before
// the text that cites them, when that round's calls added to the list; and the answer keeps them (turn-sources.ts).
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { ConversationHeaders } from '../history/conversation-headers.js';
import type { SessionMemory } from '../history/session-memory.js';
import { digestStandsFor } from '../history/digest.js';
import type { ChatMessage, LlmGateway, LlmReply, LlmUsage } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import { conversationSystemPrompt, fetchProfileWithin } from '../memory/personalised-prompt.js';
import type { ProfileFacts } from '../memory/profile-facts.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import { isTerminalEvent, type ChatEvent, type ChatEventBody } from '../streaming/contracts.js';
import type { CoalescingOptions } from '../streaming/delta-coalescer.js';
import type { TurnEventSink } from '../streaming/turn-event-sink.js';
import type { TurnEventStore } from '../streaming/turn-event-store.js';
import { TurnStream } from '../streaming/turn-stream.js';
import { answerText, discardRange, keptEvents, shownSources } from '../streaming/turn-transcript.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { parseInput } from '../validation.js';
import { NotReadyError } from '../errors.js';
import { activeLeaf, continuationFrom, turnMessagesIn, type PathLeaf } from './active-path.js';
import { forkBranch } from './branch-path.js';
import {
  memoryFlag,
  assistantMessageId,
  CANCELLED_FINISH_REASON,
  completedMessageId,
  messageCompletedSchema,
  MESSAGE_COMPLETED_MAX_BYTES,
  MESSAGE_COMPLETED_TOPIC,
  TOOL_ROUNDS_EXHAUSTED,
  userMessageId,
  type ConversationMessage,
  type FailTurnInput,
  type LlmStepInput,
  type LlmStepOutput,
  type MessageCompleted,
  type RoundRecord,
  type RunToolInput,
  type RunToolOutput,
  type StoredToolCall,
  type SystemPrompt,
  type ToolResultRecord,
  type TurnBranch,
  type TurnFork,
  type TurnRecord,
  type TurnRef,
} from './contracts.js';
import { headerTouch, opensConversation } from './header-touch.js';
import { BASIC_SYSTEM_PROMPT, buildPrompt, historyInRange, type PromptDigest } from './prompt.js';
import type { SessionStore } from './session-store.js';
import type { TurnCancelSignals } from './cancellation/turn-cancel-signals.js';
import { turnLogLine, type FinishedTurn } from './turn/turn-log-line.js';
import { sourcesGrewIn, turnSources } from './turn/turn-sources.js';
import type { StoredTurn, TurnStateStore } from './turn-state-store.js';
import {
  PathMovedError,
  type AppendOptions,
  type WorkingMemory,
  type WorkingMemoryStore,
} from './working-memory-store.js';

export interface TurnServices {
  workingMemory: WorkingMemoryStore;
  turns: TurnStateStore;
  events: TurnEventStore;
  sink: TurnEventSink;
  llm: LlmGateway;
  tools: ToolRegistry;
  publisher: MessagePublisher;
  /** Conversation headers: each commit keeps its conversation's live fields. */
  headers: Pick<ConversationHeaders, 'touch' | 'delete'>;
  /** The conversation's tombstone, read before and after each step writes (a deleted conversation keeps nothing). */
  sessions: Pick<SessionStore, 'isDeleted'>;
  /** Removes what a step wrote when its conversation turns out to be deleted (the hot store's and turn-events'). */
  eraser: Pick<ConversationEraser, 'eraseTurnData'>;
  /** The conversation's memory beyond the prompt: its digest goes into each round's prompt. */
  sessionMemory: Pick<SessionMemory, 'getDigest'>;
  /** The user's long-term profile: a new conversation's first round renders its active facts into the prompt. */
  profile: Pick<ProfileFacts, 'list'>;
  /** Stops asked for by turns' owners: read before each round and tool call, watched while the model streams. */
  cancellation: Pick<TurnCancelSignals, 'isRequested' | 'watch'>;
  settings: {
    promptTokenBudget: number;
    maxOutputTokens: number;
    coalescing: CoalescingOptions;
    /** How long a new conversation's first round waits for the profile (MEMORY_PROFILE_TIMEOUT_MS). */
    profileTimeoutMs: number;
  };
  now?: () => Date;
  /** The invocation's logger: warnings, and the one line each finished turn leaves at the default level. */
  log?: Pick<Logger, 'warn'> & Partial<Pick<Logger, 'log'>>;
}

/** What a model round starts from, read once at the start of the step. */
interface RoundState {
  memory: WorkingMemory;
  /** The conversation's summary and exchange lines; undefined while there are none (or they could not be read). */
  digest: PromptDigest | undefined;
  /** The turn's record; undefined until a round asked for tools. */
  turn: StoredTurn | undefined;
  /** Events already stored from this round's first seq on: what an earlier attempt of the step left. */
  stored: ChatEvent[];
  /** The tool results of the earlier rounds (none in round 0). */
  toolResults: ToolResultRecord[];
  /** seq the next stored event takes. */
  nextSeq: number;
  /** The live send of what the step stored before streaming; later sends go after it, keeping seq order. */
  sent?: Promise<void>;
}

/**
 * One model round: streams the model's answer (or its tool calls) as events, then either records the tool calls
 * for the orchestration to run, or commits the turn and ends its stream. Safe to run again at any point.
 */
export async function llmStep(services: TurnServices, input: LlmStepInput): Promise<LlmStepOutput> {
  const round = await unlessDeleted(services, input, () => modelRound(services, input));
  if (round === DELETED)
    return { outcome: 'deleted', nextSeq: input.firstSeq, toolCalls: [], finishReason: 'deleted' };
  // Announced only once the conversation was seen to stand after every write of the step (the workers check again).
  await round.announce?.();
  return round.output;
}

/**
 * A model round's outcome, and what follows once the round is known kept: the turn it committed logged (when this
 * attempt ended the stream) and announced.
 */
interface RoundResult {
  output: LlmStepOutput;
  announce?: () => Promise<void>;
}

async function modelRound(
  services: TurnServices,
  input: LlmStepInput,
): Promise<RoundResult | typeof DELETED> {
  const [state, stopped, deleted] = await Promise.all([
    readRoundState(services, input),
    stopRequested(services, input),
    conversationDeleted(services, input),
  ]);
  // Deleted before the round began: no model call, and what the round wrote as it opened (message-start) is erased.
  if (deleted) return DELETED;
  const { turn } = state;

  const committed = turnMessagesIn(state.memory, input.chatMessageId).find(
    (message) => message.messageId === assistantMessageId(input.chatMessageId),
  );
  if (committed) return finishCommitted(services, input, state, committed);
  const recorded = turn?.rounds.find((round) => round.round === input.round);
  if (recorded) return { output: toolsOutcome(recorded) };

  const record: TurnRecord = turn ?? (await newTurnRecord(services, input, state));
  // A later round's history is a range of the window, which holds the active path: should the user have switched
  // branches while tools ran, working memory moves back to the turn's path first (as its commit would).
  const parentId = turn?.branch?.parentChatMessageId;
  if (parentId) state.memory = await showParentPath(services, input, parentId, state.memory);
  const stream = openStream(services, input, state.nextSeq, state.sent);
  const { toolResults } = state;
  const sources = turnSources(toolResults);
  // What the last tool round added to the turn's sources goes out before the text that cites it (also when the turn
  // was stopped: the answer keeps the sources, so its clients see them), unless an earlier attempt of this round
  // sent it already. A round that found only chunks already listed, or none that fit the full list, sends nothing.
  if (sourcesGrewIn(toolResults, input.round - 1) && !state.stored.some((e) => e.type === 'sources'))
    stream.emit({ type: 'sources', sources });
  let reply: LlmReply;
  if (stopped) reply = stoppedRound(stream, state.stored);
  else {
    // What an earlier attempt of this round showed is voided before the round is streamed again.
    const voided = discardRange(state.stored);
    if (voided) stream.emit({ type: 'discard', ...voided });
    reply = await streamRound(services, input, stream, promptOf(state, record, toolResults));
    // Stopped while it streamed: the text so far is the answer, and tool calls it was making are not run.
    if (reply.finishReason === CANCELLED_FINISH_REASON) reply = { ...reply, toolCalls: [] };
  }

  // A reply cut at the token limit may have broken arguments and no room left: its text is the answer.
  const toolCalls = input.toolsAllowed && reply.finishReason !== 'length' ? reply.toolCalls : [];
  if (toolCalls.length > 0) {
    for (const call of toolCalls)
      stream.emit({
        type: 'tool-call',
        round: input.round,
        toolCallId: call.id,
        name: call.name,
        arguments: call.arguments,
      });
    await stream.close();
    const round = await services.turns.addRound(record, {
      round: input.round,
      content: reply.content,
      reasoning: reply.reasoning,
      toolCalls,
      finishReason: reply.finishReason,
      ...(reply.usage ? { usage: reply.usage } : {}),
      nextSeq: stream.nextSeq,
    });
    return { output: toolsOutcome(round) };
  }

  // The answer is complete: commit it, then end the stream. The last coalesced text is still held, so it goes
  // out with `message-end` in one stored batch. A conversation deleted meanwhile (its delete stopped the model
  // stream, or came after it) gets no commit: nothing of the turn is written from here on.
  const [, deletedNow] = await Promise.all([stream.settle(), conversationDeleted(services, input)]);
  if (deletedNow) {
    await stream.close();
    return DELETED;
  }
  const finishReason =
    !input.toolsAllowed && reply.finishReason === 'tool_calls' ? TOOL_ROUNDS_EXHAUSTED : reply.finishReason;
  const usage = totalUsage([...record.rounds.map((round) => round.usage), reply.usage]);
  const assistant: ConversationMessage = {
    messageId: assistantMessageId(input.chatMessageId),
    chatMessageId: input.chatMessageId,
    role: 'assistant',
    content: record.rounds.map((round) => round.content).join('') + reply.content,
    timestamp: now(services),
    finishReason,
    ...(usage ? { usage } : {}),
    ...toolCallsField(record, toolResults),
    ...(sources.length > 0 ? { sources } : {}),
  };
  const stored = await commitMessages(
    services,
    input,
    [userMessage(record), assistant],
    state.memory,
    record,
  );
  // The header before message-end (list read-your-writes), while text emitted during the commit is stored.
  await Promise.all([touchHeader(services, input, stored), stream.settle()]);
  stream.emit({ type: 'message-end', finishReason, ...(usage ? { usage } : {}) });
  await stream.close();
  // Whoever ends the stream logs the turn's line: an attempt run again after this finds the stream ended.
  const end: TurnEnd = { finishReason, usage, rounds: record.rounds.length + 1, postedAt: record.postedAt };
  return {
    output: { outcome: 'answered', nextSeq: stream.nextSeq, toolCalls: [], finishReason },
    announce: () => {
      logTurnEnd(services, input, end);
      return announce(services, input, 'completed', assistant.timestamp, stored);
    },
  };
}

/** The result of a tool call its turn was stopped before it ran. */
const NOT_RUN = {
  result: JSON.stringify({ error: 'Not run: the user stopped the answer before this tool ran.' }),
  isError: true,
};

export async function runTool(services: TurnServices, input: RunToolInput): Promise<RunToolOutput> {
  const ran = await unlessDeleted(services, input, () => toolCall(services, input));
  // The orchestration's next round finds the conversation deleted too, and ends the turn.
  return ran === DELETED ? { isError: true } : ran;
}

async function toolCall(
  services: TurnServices,
  input: RunToolInput,
): Promise<RunToolOutput | typeof DELETED> {
  const turn = await services.turns.get(input);
  const call = turn?.rounds.find((round) => round.round === input.round)?.toolCalls[input.index];
  if (call === undefined)
    throw new Error(`Turn ${input.chatMessageId} has no tool call ${input.index} in round ${input.round}.`);
  const [done, stopped, deleted] = await Promise.all([
    services.turns.getToolResult(input, input.round, input.index),
    stopRequested(services, input),
    conversationDeleted(services, input),
  ]);
  // A deleted conversation's tool is not run, and nothing of it is stored.
  if (deleted) return DELETED;
  let stored = done;
  if (stored === undefined) {
    // A use_memory false turn is not offered the memory tools; the registry refuses a call to one anyway. A call
    // of a stopped turn is not run, but it gets its result (and its event, whose seq is reserved) all the same.
    const outcome = stopped
      ? NOT_RUN
      : await services.tools.execute(call, {
          userId: input.userId,
          sessionId: input.sessionId,
          chatMessageId: input.chatMessageId,
          ...memoryFlag(input),
          // The past-answer tools answer from the turn's own path, never from other branches.
          ...(turn?.branch ? { branch: turn.branch } : {}),
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
  // The event is the same however often this runs, so storing it again is a no-op.
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

/**
 * Ends a turn that could not be answered: the user's message is kept with the failure, and so is what the client
 * was shown (the stream's kept content and its last sources), as the assistant's partial message, empty when only
 * sources were shown; the stream ends with `error`.
 */
export async function failTurn(services: TurnServices, input: FailTurnInput): Promise<void> {
  const failed = await unlessDeleted(services, input, () => recordFailure(services, input));
  if (failed !== DELETED) await failed();
}

/** Records the failed turn; what it returns logs and announces it, once the conversation is known to be kept. */
async function recordFailure(
  services: TurnServices,
  input: FailTurnInput,
): Promise<(() => Promise<void>) | typeof DELETED> {
  const [memory, events, turn, deleted] = await Promise.all([
    services.workingMemory.load(input.userId, input.sessionId),
    services.events.read(input.sessionId, input.chatMessageId, 0),
    services.turns.get(input),
    conversationDeleted(services, input),
  ]);
  if (deleted) return DELETED;
  const at = now(services);
  let stored = memory;
  if (turnMessagesIn(memory, input.chatMessageId).length === 0) {
    const messages: ConversationMessage[] = [{ ...userMessage(input), failure: input.failure }];
    const shown = answerText(events);
    // The sources its client was shown stay with the text they were shown beside, or alone when none was.
    const sources = shownSources(events);
    if (shown !== '' || sources.length > 0)
      messages.push({
        messageId: assistantMessageId(input.chatMessageId),
        chatMessageId: input.chatMessageId,
        role: 'assistant',
        content: shown,
        timestamp: at,
        finishReason: 'error',
        ...(sources.length > 0 ? { sources } : {}),
      });
    // A prompt the model was sent (the turn record has it once a round asked for tools) stays the conversation's.
    // The message stays where the turn began: its record says where, else its place is decided as round 0 did.
    const placed = turn?.branch
      ? { branch: turn.branch, memory }
      : await failedTurnPlace(services, input, memory);
    stored = await commitMessages(services, input, messages, placed.memory, {
      ...(turn?.systemPrompt ? { systemPrompt: turn.systemPrompt } : {}),
      ...(placed.branch ? { branch: placed.branch } : {}),
    });
  }
  // Before the stream ends, as for an answer: the failed turn is in the list once the client sees its error.
  await touchHeader(services, input, stored);
  let end: TurnEnd | undefined;
  if (!events.some(isTerminalEvent)) {
    const stream = openStream(services, input, (events.at(-1)?.seq ?? 0) + 1);
    if (events.length === 0)
      stream.emit({
        type: 'message-start',
        userMessageId: userMessageId(input.chatMessageId),
        assistantMessageId: assistantMessageId(input.chatMessageId),
      });
    stream.emit({ type: 'error', code: input.failure.code, message: input.failure.message });
    await stream.close();
    end = {
      finishReason: 'error',
      usage: totalUsage((turn?.rounds ?? []).map((round) => round.usage)),
      // The rounds that asked for tools, and the one that failed.
      rounds: (turn?.rounds.length ?? 0) + 1,
      postedAt: input.postedAt,
    };
  }
  return () => {
    logTurnEnd(services, input, end);
    return announce(services, input, 'failed', at, stored);
  };
}

/**
 * The step's starting state, read in parallel: working memory, the digest, the turn record and what is already
 * stored.
 */
async function readRoundState(services: TurnServices, input: LlmStepInput): Promise<RoundState> {
  const memoryRead = services.workingMemory.load(input.userId, input.sessionId);
  const digestRead = readDigest(services, input);
  if (input.round === 0 && input.firstSeq === 1) {
    // The first round opens the stream. Whether its `message-start` was stored already tells whether an earlier
    // attempt ran: only then is anything more to be read.
    const start = stamp(input, 1, {
      type: 'message-start',
      userMessageId: userMessageId(input.chatMessageId),
      assistantMessageId: assistantMessageId(input.chatMessageId),
    });
    const [memory, digest, written] = await Promise.all([
      memoryRead,
      digestRead,
      services.events.append([start]),
    ]);
    if (written === 'stored')
      return {
        memory,
        digest,
        turn: undefined,
        stored: [],
        toolResults: [],
        nextSeq: 2,
        sent: sendLive(services, input, [start]),
      };
    const [turn, stored] = await Promise.all([
      services.turns.get(input),
      services.events.read(input.sessionId, input.chatMessageId, 1),
    ]);
    return { memory, digest, turn, stored, toolResults: [], nextSeq: (stored.at(-1)?.seq ?? 1) + 1 };
  }
  const [memory, digest, turn, stored, toolResults] = await Promise.all([
    memoryRead,
    digestRead,
    services.turns.get(input),
    services.events.read(input.sessionId, input.chatMessageId, input.firstSeq - 1),
    services.turns.listToolResults(input),
  ]);
  return {
    memory,
    digest,
    turn,
    stored,
    toolResults,
    nextSeq: Math.max(input.firstSeq, (stored.at(-1)?.seq ?? 0) + 1),
  };
}

/**
 * The turn was committed by an earlier attempt of this step, which may have died before ending the stream: the
 * stream is brought to the committed answer (the text still missing, or the round voided and sent whole) and
 * ended, and the turn is announced again (a duplicate announcement is dropped by its message id).
 */
async function finishCommitted(
  services: TurnServices,
  input: LlmStepInput,
  state: RoundState,
  committed: ConversationMessage,
): Promise<RoundResult> {
  const finishReason = committed.finishReason ?? 'stop';
  // The earlier attempt may have died before touching the header (touching again is harmless); first, so the
  // stream's end still comes after it. The rest of the stream then goes out in one stored batch.
  await touchHeader(services, input, state.memory);
  let nextSeq = state.nextSeq;
  let end: TurnEnd | undefined;
  if (!state.stored.some(isTerminalEvent)) {
    const earlier = (state.turn?.rounds ?? [])
      .filter((round) => round.round < input.round)
      .map((round) => round.content)
      .join('');
    const roundText = committed.content.slice(earlier.length);
    const shown = answerText(state.stored);
    const stream = openStream(services, input, state.nextSeq);
    if (roundText.startsWith(shown)) {
      if (roundText.length > shown.length)
        stream.emit({ type: 'content', delta: roundText.slice(shown.length) });
    } else {
      const voided = discardRange(state.stored);
      if (voided) stream.emit({ type: 'discard', ...voided });
      if (roundText !== '') stream.emit({ type: 'content', delta: roundText });
    }
    stream.emit({
      type: 'message-end',
      finishReason,
      ...(committed.usage ? { usage: committed.usage } : {}),
    });
    await stream.close();
    nextSeq = stream.nextSeq;
    // The attempt that committed died before ending the stream, so before logging the turn's line: this one does.
    const posted = turnMessagesIn(state.memory, input.chatMessageId).find(
      (message) => message.role === 'user',
    );
    end = {
      finishReason,
      usage: committed.usage,
      rounds: input.round + 1,
      postedAt: posted?.timestamp ?? committed.timestamp,
    };
  }
  return {
    output: { outcome: 'answered', nextSeq, toolCalls: [], finishReason },
    announce: () => {
      logTurnEnd(services, input, end);
      return announce(services, input, 'completed', committed.timestamp, state.memory);
    },
  };
}

/**
 * Streams one model call into the turn's events; a broken call throws after what it streamed is stored. A stop of
 * the turn while the model streams aborts the call, which then resolves with what arrived (finish `cancelled`).
 */
async function streamRound(
  services: TurnServices,
  input: LlmStepInput,
  stream: TurnStream,
  messages: ChatMessage[],
): Promise<LlmReply> {
  let reasoningOpen = false;
  const stop = services.cancellation.watch(input, (error) =>
    services.log?.warn(`Whether turn ${input.chatMessageId} was stopped could not be read:`, error),
  );
  try {
    const reply = await services.llm.streamChat(
      {
        messages,
        tools: services.tools.specs(memoryFlag(input)),
        toolChoice: input.toolsAllowed ? 'auto' : 'none',
        maxTokens: services.settings.maxOutputTokens,
        signal: stop.signal,
      },
      (delta) => {
        if (delta.type === 'reasoning') {
          reasoningOpen = true;
          stream.emit({ type: 'reasoning-delta', delta: delta.text });
        } else if (delta.type === 'reasoning-end') {
          // The Responses API closes each summary part: one `reasoning-end` per part.
          if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
          reasoningOpen = false;
        } else if (delta.type === 'content') {
          if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
          reasoningOpen = false;
          stream.emit({ type: 'content', delta: delta.text });
        }
      },
    );
    if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
    return reply;
  } catch (error) {
    // Stored now, the partial text is what the retried round voids (or what a failed turn keeps).
    await stream.close().catch(() => undefined);
    services.log?.warn(
      `The model's stream broke after ${stream.emitted.length} events of turn ${input.chatMessageId}:`,
      error,
    );
    throw error;
  } finally {
    stop.close();
  }
}

/**
 * A round that begins after its turn was stopped calls no model. What an earlier attempt of it showed (it was
 * stopped, or its process died, before committing) ends the answer, as the client has it; tool calls it announced
 * (they come after its text) are voided, since they will never run, and reasoning it left open is closed.
 */
function stoppedRound(stream: TurnStream, stored: readonly ChatEvent[]): LlmReply {
  const kept = keptEvents(stored);
  const calls = kept.filter((event) => event.type === 'tool-call');
  const first = calls[0];
  const last = calls.at(-1);
  if (first && last) stream.emit({ type: 'discard', fromSeq: first.seq, toSeq: last.seq });
  // An attempt that died mid-reasoning left it open: it is closed, as a client expects, before the answer ends.
  const reasoning = kept.filter(
    (event) => event.type === 'reasoning-delta' || event.type === 'reasoning-end',
  );
  if (reasoning.at(-1)?.type === 'reasoning-delta') stream.emit({ type: 'reasoning-end' });
  return { content: answerText(stored), reasoning: '', toolCalls: [], finishReason: CANCELLED_FINISH_REASON };
}

/**
 * Whether the turn's owner asked to stop it, read beside the step's other reads. A failed read lets the turn go
 * on (a stop is then found by the next check) rather than failing it.
 */
function stopRequested(services: TurnServices, ref: TurnRef): Promise<boolean> {
  return services.cancellation.isRequested(ref).catch((error: unknown) => {
    services.log?.warn(`Whether turn ${ref.chatMessageId} was stopped could not be read; it goes on:`, error);
    return false;
  });
}

/** What a step returns when its conversation was deleted: it has kept nothing of the turn. */
const DELETED = Symbol('deleted');

/**
 * Runs a step that writes the turn's data, so that nothing of it outlives a delete of its conversation. The step reads
 * the tombstone before it writes (and writes nothing once it stands); after the step, the tombstone is read again, and
 * if it appeared meanwhile what the conversation holds in the hot store, turn-events and its header is erased. That
 * closes the race with the delete, which marks the session before it purges: a write that lands after the purge
 * was made before this second read, which then sees the mark. A step that fails on a deleted conversation is done
 * too (there is nothing to retry for), after the same erase.
 */
async function unlessDeleted<T>(
  services: TurnServices,
  ref: TurnRef,
  step: () => Promise<T | typeof DELETED>,
): Promise<T | typeof DELETED> {
  let result: T | typeof DELETED;
  try {
    result = await step();
  } catch (error) {
    if (!(await conversationDeleted(services, ref).catch(() => false))) throw error;
    result = DELETED;
  }
  if (result === DELETED || (await conversationDeleted(services, ref))) {
    await Promise.all([
      services.eraser.eraseTurnData(ref.sessionId),
      services.headers.delete(ref.userId, ref.sessionId),
    ]);
    services.log?.warn(
      `Turn ${ref.chatMessageId} ended: its conversation was deleted, and nothing of the turn is kept.`,
    );
    return DELETED;
  }
  return result;
}

/** Whether the turn's conversation is being deleted or was: a point read of its session's tombstone. */
function conversationDeleted(services: TurnServices, ref: TurnRef): Promise<boolean> {
  return services.sessions.isDeleted(ref.userId, ref.sessionId);
}

/**
 * The prompt of a round: the digest, the turn's history (by its range), the user's message, then earlier rounds'
 * traffic.
 */
function promptOf(
  state: Pick<RoundState, 'memory' | 'digest'>,
  record: TurnRecord,
  toolResults: readonly ToolResultRecord[],
): ChatMessage[] {
  const digest = digestOnPath(state.digest, record.branch);
  const prompt = buildPrompt({
    systemPrompt: systemPromptText(state.memory, record),
    history: historyInRange(state.memory.messages, record.history),
    ...(digest ? { digest } : {}),
    userText: record.userText,
    // The range was chosen to fit the budget when the turn began; the same messages are sent again.
    tokenBudget: Number.POSITIVE_INFINITY,
  });
  const messages = prompt.messages;
  for (const round of [...record.rounds].sort((a, b) => a.round - b.round)) {
    messages.push({
      role: 'assistant',
      content: round.content,
      ...(round.toolCalls.length > 0 ? { tool_calls: round.toolCalls } : {}),
    });
    for (const [index, call] of round.toolCalls.entries()) {
      const result = toolResults.find((r) => r.round === round.round && r.index === index);
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: result?.result ?? JSON.stringify({ error: 'The tool did not return a result.' }),
      });
    }
  }
  return messages;
}

/**
 * The system prompt a round sends: the one this turn rendered for its new conversation, else the conversation's
 * stored one, else (a conversation begun before prompts were kept) the basic one.
 */
function systemPromptText(memory: WorkingMemory, record: Pick<TurnRecord, 'systemPrompt'>): string {
  return (record.systemPrompt ?? memory.systemPrompt)?.content ?? BASIC_SYSTEM_PROMPT;
}

/**
 * A new conversation's system prompt: personalised with the user's active facts, read within the budget (a slow
 * or failing profile costs the round at most the budget, and the basic prompt stands in); the basic one for a turn
 * posted with use_memory false. Undefined for a conversation that has begun: its prompt is the stored one.
 */
async function newConversationPrompt(
  services: TurnServices,
  input: LlmStepInput,
  memory: WorkingMemory,
): Promise<SystemPrompt | undefined> {
  const isNew =
    memory.messages.length === 0 && memory.messageCount === 0 && memory.systemPrompt === undefined;
  if (!isNew) return undefined;
  const facts =
    input.useMemory === false
      ? undefined
      : await fetchProfileWithin(
          services.profile,
          input.userId,
          services.settings.profileTimeoutMs,
          services.log,
        );
  return conversationSystemPrompt(BASIC_SYSTEM_PROMPT, facts, now(services));
}

/**
 * The record a turn starts from: the message, its place in the conversation's tree, its new conversation's prompt,
 * and which history of its path fits the budget. A fork may move working memory to its path (`state.memory`).
 */
async function newTurnRecord(
  services: TurnServices,
  input: LlmStepInput,
  state: Pick<RoundState, 'memory' | 'digest'>,
): Promise<TurnRecord> {
  if (input.message === undefined)
    throw new Error(`Round ${input.round} of turn ${input.chatMessageId} has no turn record to go on from.`);
  const placed = await beginTurn(services, input, input.message.fork, state.memory);
  state.memory = placed.memory;
  const { branch } = placed;
  const systemPrompt = await newConversationPrompt(services, input, state.memory);
  // The window holds the active path, which is now the one the turn follows; a fork of the conversation's first
  // turn follows none, so nothing of it is history.
  const opensTree = branch.parentChatMessageId === null && branch.origin !== undefined;
  const history = opensTree
    ? []
    : state.memory.messages.filter((message) => message.chatMessageId !== input.chatMessageId);
  const digest = digestOnPath(state.digest, branch);
  const { history: range } = buildPrompt({
    systemPrompt: systemPromptText(state.memory, { systemPrompt }),
    history,
    ...(digest ? { digest } : {}),
    userText: input.message.text,
    tokenBudget: services.settings.promptTokenBudget,
  });
  return {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
    userText: input.message.text,
    postedAt: input.message.postedAt,
    history: range,
    rounds: [],
    ...(systemPrompt ? { systemPrompt } : {}),
    ...memoryFlag(input),
    branch,
  };
}

/**
 * Where a turn goes in the conversation's tree, decided when it begins, and working memory from then on. A plain
 * turn continues the active path. An edit or a regenerate of X follows X's parent: working memory moves to the
 * parent's path first (unless it is the leaf already), so the prompt, later rounds and the commit all see that path;
 * so a retried round 0 finds the parent as the leaf and decides the same branch. A replaced turn (or its parent)
 * that cannot be found yet (history still storing it) fails the attempt, which the activity's retry repeats.
 */
async function beginTurn(
  services: TurnServices,
  ref: TurnRef,
  fork: TurnFork | undefined,
  memory: WorkingMemory,
): Promise<{ branch: TurnBranch; memory: WorkingMemory }> {
  if (fork === undefined)
    return { branch: continuationFrom(activeLeaf(memory), memory.messageCount), memory };
  const { userId, sessionId } = ref;
  const replaced = await services.workingMemory.findTurn(userId, sessionId, fork.replaces, memory);
  if (replaced === undefined)
    throw new NotReadyError(
      `Turn ${fork.replaces}, which turn ${ref.chatMessageId} replaces, is not found yet.`,
    );
  const parentId = replaced.branch.parentChatMessageId;
  let parent: PathLeaf | undefined;
  let moved = memory;
  if (parentId !== null) {
    const leaf = activeLeaf(memory);
    if (leaf?.chatMessageId === parentId) parent = leaf;
    else {
      parent = await services.workingMemory.findTurn(userId, sessionId, parentId, memory);
      if (parent === undefined)
        throw new NotReadyError(
          `Turn ${parentId}, where turn ${ref.chatMessageId} branches, is not found yet.`,
        );
      moved = await services.workingMemory.showPath(userId, sessionId, parent, memory);
    }
  }
  const branch = forkBranch({
    fork,
    newChatMessageId: ref.chatMessageId,
    replaced: replaced.branch,
    parent,
    firstOrdinal: moved.messageCount,
  });
  return { branch, memory: moved };
}

/**
 * The place of a failed turn that never recorded one (it failed in round 0): decided as round 0 decides it. When
 * even that fails (the replaced turn is still not found, or its path is full of forks), the message continues the
 * active path, so it is kept where the user looks, and the reason is logged.
 */
async function failedTurnPlace(
  services: TurnServices,
  input: FailTurnInput,
  memory: WorkingMemory,
): Promise<{ branch?: TurnBranch; memory: WorkingMemory }> {
  try {
    return await beginTurn(services, input, input.fork, memory);
  } catch (error) {
    services.log?.warn(
      `Failed turn ${input.chatMessageId} could not take its branch; it continues the active path:`,
      error,
    );
    return { memory };
  }
}

/**
 * Commits a turn's messages on its branch. When its parent is no longer the active path's leaf (the user switched
 * branches while it ran), the path moves back to the parent first: the answer lands where it was asked, and the
 * conversation shows it, as after any commit.
 */
async function commitMessages(
  services: TurnServices,
  ref: TurnRef,
  messages: readonly ConversationMessage[],
  memory: WorkingMemory,
  record: Pick<TurnRecord, 'systemPrompt' | 'branch'>,
): Promise<WorkingMemory> {
  const options: AppendOptions = {
    ...(record.systemPrompt ? { systemPrompt: record.systemPrompt } : {}),
    ...(record.branch ? { branch: record.branch } : {}),
  };
  const { userId, sessionId } = ref;
  try {
    return await services.workingMemory.append(userId, sessionId, messages, memory, options);
  } catch (error) {
    if (!(error instanceof PathMovedError)) throw error;
    const moved = await showParentPath(services, ref, error.parentChatMessageId);
    return services.workingMemory.append(userId, sessionId, messages, moved, options);
  }
}

/**
 * Working memory on the path of the turn's parent, the leaf the turn follows: as it is when that is the leaf
 * already (no read, no write), else moved back there (the user switched branches while the turn ran). `base`, when
 * current, saves the reads.
 */
async function showParentPath(
  services: TurnServices,
  ref: TurnRef,
  parentChatMessageId: string,
  base?: WorkingMemory,
): Promise<WorkingMemory> {
  if (base !== undefined && activeLeaf(base)?.chatMessageId === parentChatMessageId) return base;
  const { userId, sessionId } = ref;
  const parent = await services.workingMemory.findTurn(userId, sessionId, parentChatMessageId, base);
  if (parent === undefined)
    throw new NotReadyError(
      `Turn ${parentChatMessageId}, which turn ${ref.chatMessageId} follows, is not found yet.`,
    );
  return services.workingMemory.showPath(userId, sessionId, parent, base);
}

/**
 * The digest, when it stands for the turn's path: it summarises the messages below `summarizedThrough` of the path
 * it was folded along, so a turn whose path differs there (another branch) goes without it until history rebases
 * it. A turn begun before branches (no branch) takes it as it is.
 */
function digestOnPath(
  digest: PromptDigest | undefined,
  branch: TurnBranch | undefined,
): PromptDigest | undefined {
  if (digest === undefined || branch === undefined) return digest;
  return digestStandsFor({ ...digest, gaps: digest.gaps ?? [] }, branch.gaps) ? digest : undefined;
}

function toolsOutcome(round: RoundRecord): LlmStepOutput {
  return {
    outcome: 'tools',
    nextSeq: round.nextSeq,
    toolCalls: round.toolCalls.map((call, index) => ({ index, name: call.name })),
    finishReason: round.finishReason,
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

function openStream(
  services: TurnServices,
  ref: TurnRef,
  firstSeq: number,
  sendAfter?: Promise<void>,
): TurnStream {
  return new TurnStream({
    ...ref,
    firstSeq,
    ...(sendAfter ? { sendAfter } : {}),
    store: services.events,
    sink: services.sink,
    coalescing: services.settings.coalescing,
    onSendError: (error) => services.log?.warn(`Live delivery of turn ${ref.chatMessageId} failed:`, error),
  });
}

/**
 * The digest for the prompt, read beside the round's other reads. A digest that cannot be read leaves the prompt
 * without it (the recent history alone, as before any summary), rather than failing the turn.
 */
function readDigest(services: TurnServices, ref: TurnRef): Promise<PromptDigest | undefined> {
  return services.sessionMemory.getDigest(ref.userId, ref.sessionId).then(
    (stored) => stored?.digest,
    (error: unknown) => {
      services.log?.warn(
        `The digest of session ${ref.sessionId} could not be read; the turn goes on without it:`,
        error,
      );
      return undefined;
    },
  );
}

/** Keeps the conversation's header live after a commit, from working memory as the commit left it. */
async function touchHeader(services: TurnServices, ref: TurnRef, memory: WorkingMemory): Promise<void> {
  const touch = headerTouch(ref, memory);
  if (touch !== undefined) await services.headers.touch(touch);
}

function stamp(ref: TurnRef, seq: number, body: ChatEventBody): ChatEvent {
  return { ...body, sessionId: ref.sessionId, chatMessageId: ref.chatMessageId, seq };
}

/** Live delivery of events already stored; a failure is logged (clients recover them from the log). */
function sendLive(services: TurnServices, ref: TurnRef, events: ChatEvent[]): Promise<void> {
  return services.sink
    .send({ userId: ref.userId, sessionId: ref.sessionId }, events)
    .catch((error: unknown) =>
      services.log?.warn(`Live delivery of turn ${ref.chatMessageId} failed:`, error),
    );
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

/** How a turn ended, as its log line tells it. */
type TurnEnd = Pick<FinishedTurn, 'finishReason' | 'usage' | 'rounds' | 'postedAt'>;

/**
 * The turn's one line at the default log level, written by the step that ended its stream once that step is known
 * kept (a turn whose conversation was deleted meanwhile is kept by nobody, and logs no line of an ending).
 */
function logTurnEnd(services: TurnServices, turn: TurnRef, end: TurnEnd | undefined): void {
  if (end === undefined) return;
  services.log?.log?.(
    turnLogLine({
      ...end,
      sessionId: turn.sessionId,
      chatMessageId: turn.chatMessageId,
      endedAt: services.now?.() ?? new Date(),
    }),
  );
}

function now(services: TurnServices): string {
  return (services.now?.() ?? new Date()).toISOString();
}

function totalUsage(usages: readonly (LlmUsage | undefined)[]): LlmUsage | undefined {
  const known = usages.filter((usage): usage is LlmUsage => usage !== undefined);
  if (known.length === 0) return undefined;
  const sum = (pick: (usage: LlmUsage) => number | undefined) =>
    known.reduce((total, usage) => total + (pick(usage) ?? 0), 0);
  const reasoning = known.some((usage) => usage.reasoningTokens !== undefined);
  const cached = known.some((usage) => usage.cachedPromptTokens !== undefined);
  return {
    promptTokens: sum((usage) => usage.promptTokens),
    completionTokens: sum((usage) => usage.completionTokens),
    totalTokens: sum((usage) => usage.totalTokens),
    ...(reasoning ? { reasoningTokens: sum((usage) => usage.reasoningTokens) } : {}),
    ...(cached ? { cachedPromptTokens: sum((usage) => usage.cachedPromptTokens) } : {}),
  };
}

/**
 * Announces the turn with its committed messages (found in `stored`, working memory after the commit). The turn
 * that opened the conversation (its message has ordinal 0) carries the conversation's system prompt too, so
 * history keeps it as the conversation's first message; the prompt is taken from working memory, so a commit that
 * is announced again says the same.
 */
async function announce(
  services: TurnServices,
  input: TurnRef & { useMemory?: boolean | undefined },
  outcome: MessageCompleted['outcome'],
  completedAt: string,
  stored: Pick<WorkingMemory, 'messages' | 'offPath' | 'systemPrompt'>,
): Promise<void> {
  const ref: TurnRef = {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
  };
  // The turn is the leaf after its commit; announced again after a switch, it may be off the path by then.
  const turn = turnMessagesIn(stored, ref.chatMessageId);
  const systemPrompt = opensConversation(ref, turn) ? stored.systemPrompt : undefined;
  const body = parseInput(
    messageCompletedSchema,
    completedBody(
      { ...ref, outcome, completedAt, ...memoryFlag(input), ...(systemPrompt ? { systemPrompt } : {}) },
      turn,
    ),
    'message-completed body',
  );
  await services.publisher.publish(MESSAGE_COMPLETED_TOPIC, {
    body,
    messageId: completedMessageId(ref.sessionId, ref.chatMessageId),
    sessionId: ref.sessionId,
    subject: outcome,
  });
}

/**
 * The `message-completed` body: the turn's messages whole, or, when they would not fit a Service Bus message, cut
 * (complete: false) step by step until they do: their tool calls' arguments and results first, then their sources'
 * excerpts, then their sources. A consumer that needs them whole reads them from working memory.
 */
export function completedBody(
  head: Omit<MessageCompleted, 'messages' | 'complete'>,
  messages: readonly ConversationMessage[],
): MessageCompleted {
  let cut = messages.map((message) => ({ ...message, ordinal: message.ordinal ?? 0 }));
  const whole: MessageCompleted = { ...head, messages: cut, complete: true };
  if (fitsServiceBus(whole)) return whole;
  let body: MessageCompleted = whole;
  for (const shorten of [cutToolCalls, withoutExcerpts, withoutSources]) {
    cut = cut.map(shorten);
    body = { ...head, messages: cut, complete: false };
    if (fitsServiceBus(body)) break;
  }
  return body;
}

function fitsServiceBus(body: MessageCompleted): boolean {
  return Buffer.byteLength(JSON.stringify(body), 'utf8') <= MESSAGE_COMPLETED_MAX_BYTES;
}

type CompletedMessage = MessageCompleted['messages'][number];

function cutToolCalls(message: CompletedMessage): CompletedMessage {
  if (message.toolCalls === undefined) return message;
  const toolCalls = message.toolCalls.map((call) => ({
    ...call,
    arguments: call.arguments.slice(0, 1_000),
    result: call.result.slice(0, 1_000),
  }));
  return { ...message, toolCalls };
}

function withoutExcerpts(message: CompletedMessage): CompletedMessage {
  if (message.sources === undefined) return message;
  return { ...message, sources: message.sources.map((source) => ({ ...source, excerpt: '' })) };
}

function withoutSources(message: CompletedMessage): CompletedMessage {
  const { sources: _sources, ...rest } = message;
  return rest;
}
