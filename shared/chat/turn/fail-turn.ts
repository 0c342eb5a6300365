// The failTurn activity: a turn that could not be answered keeps the user's message with its failure and what its
// client was shown, on the branch it began; the stream ends with `error`, and the turn is announced as failed.
import { isTerminalEvent } from '../../streaming/contracts.js';
import { answerText, shownSources } from '../../streaming/turn-transcript.js';
import { placeTurn, turnMessagesIn } from '../../conversation/active-path.js';
import { assistantMessageId, userMessageId } from '../../conversation/turn-ids.js';
import type { ConversationMessage, TurnRef } from '../../conversation/messages.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import { DependencyError } from '../../errors.js';
import type { FailTurnInput } from '../contracts/activities.js';
import { announce } from './message-completed.js';
import { openStream } from './round-stream.js';
import { conversationDeleted, DELETED, unlessDeleted } from './step-guards.js';
import { touchHeader, userMessage } from './turn-commit.js';
import { freeQuotaSlot, logTurnEnd, type TurnEnd } from './turn-end.js';
import { commitMessages, failedTurnPlace } from './turn-place.js';
import { now, type TurnServices } from './turn-services.js';
import { totalUsage } from './turn-usage.js';

/**
 * Ends a turn that could not be answered: the user's message is kept with the failure, and so is what the client
 * was shown (the stream's kept content and its last sources), as the assistant's partial message, empty when only
 * sources were shown; the stream ends with `error`.
 */
export async function failTurn(services: TurnServices, input: FailTurnInput): Promise<void> {
  const failed = await unlessDeleted(services, input, () => recordFailure(services, input));
  if (failed !== DELETED) await failed();
}

const UNREACHABLE = Symbol('unreachable');

/** A hot store read, or UNREACHABLE when the store does not answer (any other failure still fails the step). */
function unlessUnreachable<T>(read: Promise<T>): Promise<T | typeof UNREACHABLE> {
  return read.catch((error: unknown) => {
    if (error instanceof DependencyError) return UNREACHABLE;
    throw error;
  });
}

/** Working memory as far as the header knows it (its count and path), for a failure the hot store cannot record. */
async function unplacedMemory(services: TurnServices, ref: TurnRef): Promise<WorkingMemory> {
  const header = await services.headers.get(ref.userId, ref.sessionId);
  return {
    userId: ref.userId,
    sessionId: ref.sessionId,
    messages: [],
    messageCount: header?.messageCount ?? 0,
    ...(header?.path ? { path: header.path } : {}),
  };
}

/** Records the failed turn; what it returns logs and announces it, once the conversation is known to be kept. */
async function recordFailure(
  services: TurnServices,
  input: FailTurnInput,
): Promise<(() => Promise<void>) | typeof DELETED> {
  const [memoryRead, events, turnRead, deleted] = await Promise.all([
    unlessUnreachable(services.workingMemory.load(input.userId, input.sessionId)),
    services.events.read(input.sessionId, input.chatMessageId, 0),
    unlessUnreachable(services.turns.get(input)),
    conversationDeleted(services, input),
  ]);
  if (deleted) return DELETED;
  const at = now(services);
  // The hot store is down (the likely reason the turn failed): the turn still ends with its error, and its message
  // is kept long-term through message-completed, where the next turn's rebuilt working memory finds it.
  const hotStoreDown = memoryRead === UNREACHABLE || turnRead === UNREACHABLE;
  const memory: WorkingMemory =
    memoryRead === UNREACHABLE ? await unplacedMemory(services, input) : memoryRead;
  const turn = turnRead === UNREACHABLE ? undefined : turnRead;
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
    if (hotStoreDown) {
      // Numbered after what the header counts and continuing the path it shows (an edit or a regenerate cannot find
      // the turn it replaces now), so the rebuilt conversation has them in their place, on the branch the user saw.
      const placed = placeTurn(memory, messages, undefined, Number.POSITIVE_INFINITY);
      if (placed.kind === 'placed') stored = { ...memory, ...placed.state };
    } else {
      const placed = turn?.branch
        ? { branch: turn.branch, memory }
        : await failedTurnPlace(services, input, memory);
      stored = await commitMessages(services, input, messages, placed.memory, {
        ...(turn?.systemPrompt ? { systemPrompt: turn.systemPrompt } : {}),
        ...(placed.branch ? { branch: placed.branch } : {}),
      });
    }
  }
  // Before the stream ends, as for an answer: the failed turn is in the list once the client sees its error.
  await Promise.all([touchHeader(services, input, stored), freeQuotaSlot(services, input)]);
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
