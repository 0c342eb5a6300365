// Where a model round starts from, read once at the start of the step, and what an attempt that ran before it left:
// the stored events it goes on from, or a commit it made before it died, whose stream is then brought to its end.
import { isTerminalEvent, type ChatEvent, type ChatEventBody } from '../../streaming/contracts.js';
import { answerText, discardRange } from '../../streaming/turn-transcript.js';
import { turnMessagesIn } from '../../conversation/active-path.js';
import { assistantMessageId, userMessageId } from '../../conversation/turn-ids.js';
import type { ConversationMessage, TurnRef } from '../../conversation/messages.js';
import type { LlmStepInput } from '../contracts/activities.js';
import type { ToolResultRecord } from '../contracts/documents.js';
import type { PromptDigest } from '../prompt.js';
import type { StoredTurn } from '../turn-state-store.js';
import { announce } from './message-completed.js';
import { openStream } from './round-stream.js';
import { touchHeader } from './turn-commit.js';
import { freeQuotaSlot, logTurnEnd, type RoundResult, type TurnEnd } from './turn-end.js';
import type { PromptState } from './turn-prompt.js';
import type { TurnServices } from './turn-services.js';

/** What a model round starts from, read once at the start of the step. */
export interface RoundState extends PromptState {
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
 * The step's starting state, read in parallel: working memory, the digest, the turn record and what is already
 * stored.
 */
export async function readRoundState(services: TurnServices, input: LlmStepInput): Promise<RoundState> {
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
    // Sent live as soon as it is stored, whatever the other reads do: should one fail (the hot store down), the
    // failed turn's `error` follows it, and a WebSocket client sees no gap before it.
    const opened = services.events.append([start]).then((written) => ({
      written,
      sent: written === 'stored' ? sendLive(services, input, [start]) : undefined,
    }));
    const [memory, digest, { written, sent }] = await Promise.all([memoryRead, digestRead, opened]).catch(
      async (error: unknown) => {
        await opened.then(
          (sending) => sending.sent,
          () => undefined,
        );
        throw error;
      },
    );
    if (written === 'stored')
      return {
        memory,
        digest,
        turn: undefined,
        stored: [],
        toolResults: [],
        nextSeq: 2,
        ...(sent ? { sent } : {}),
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

/**
 * The turn was committed by an earlier attempt of this step, which may have died before ending the stream: the
 * stream is brought to the committed answer (the text still missing, or the round voided and sent whole) and
 * ended, and the turn is announced again (a duplicate announcement is dropped by its message id).
 */
export async function finishCommitted(
  services: TurnServices,
  input: LlmStepInput,
  state: RoundState,
  committed: ConversationMessage,
): Promise<RoundResult> {
  const finishReason = committed.finishReason ?? 'stop';
  // The earlier attempt may have died before touching the header (touching again is harmless) or freeing the turn's
  // quota slot; both first, so the stream's end still comes after them. The rest then goes out in one stored batch.
  await Promise.all([
    touchHeader(services, input, state.memory),
    state.stored.some(isTerminalEvent) ? undefined : freeQuotaSlot(services, input),
  ]);
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
      ...(committed.usage && services.pricing ? { cost: services.pricing(committed.usage, undefined) } : {}),
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
