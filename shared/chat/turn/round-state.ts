// Where a model round starts from, read once at the start of the step: working memory (with the stop and delete marks),
// the digest unless working memory shows there is none yet, the turn's record and what an earlier attempt stored.
import type { ChatEvent, ChatEventBody } from '../../streaming/contracts.js';
import { assistantMessageId, userMessageId } from '../../conversation/turn-ids.js';
import { MAIN_BRANCH } from '../../conversation/branches.js';
import type { TurnRef } from '../../conversation/messages.js';
import { messageTokens } from '../../conversation/tokens.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import { foldIsDue } from '../../history/digest.js';
import type { LlmStepInput } from '../contracts/activities.js';
import type { PromptDigest } from '../prompt.js';
import { conversationDeleted, stopRequested, type GuardServices } from './step-guards.js';
import type { RoundStep } from './turn-decision.js';
import type { StepStart } from './turn-runner.js';
import { now, type StreamPorts, type TurnServices } from './turn-services.js';

/** What a round reads its start from: working memory, the digest, the turn's record and events, and the guards. */
export type RoundReadPorts = GuardServices &
  StreamPorts &
  Pick<TurnServices, 'workingMemory' | 'sessionMemory' | 'turns' | 'now'>;

/** The round's starting state, with the stop mark and the tombstone read beside it. */
export async function readRound(
  services: RoundReadPorts,
  input: LlmStepInput,
): Promise<StepStart<RoundStep>> {
  // When the stop and the tombstone were read: the watch of the model stream reads them again an interval later.
  const checkedAt = Date.now();
  const state = await readRoundState(services, input);
  const { sent, ...read } = state;
  // Working memory as stored carries the stops and the delete marked beside their records; without it, they are read.
  const marks = read.memory.marks;
  const [stopped, deleted] = marks
    ? [marks.stopped.includes(input.chatMessageId), marks.deletingAt !== undefined]
    : await Promise.all([stopRequested(services, input), conversationDeleted(services, input)]);
  return {
    state: { ...read, input, stopped, deleted, checkedAt, at: now(services) },
    firstSeq: read.nextSeq,
    sent,
  };
}

type RoundRead = Pick<
  RoundStep,
  'memory' | 'digest' | 'turn' | 'stored' | 'unsent' | 'toolResults' | 'nextSeq'
> & {
  /** The live send of what the step stored before streaming; later sends go after it, keeping seq order. */
  sent?: Promise<void>;
};

/**
 * The step's starting state, read in parallel: working memory, the digest, the turn record and what is already
 * stored. What an earlier attempt stored may never have been sent (it died between the two): it is sent again.
 */
async function readRoundState(services: RoundReadPorts, input: LlmStepInput): Promise<RoundRead> {
  const memoryRead = services.workingMemory.load(input.userId, input.sessionId);
  // Read unless working memory shows there is none (marked 0, or too little text for one); a digest this process
  // holds of the revision marked there costs no read either. A load that fails fails the step through memoryRead.
  const digestRead = memoryRead.then(
    (memory) =>
      memory.digestRevision === 0 || noDigestYet(memory, services.settings.promptTokenBudget)
        ? undefined
        : readDigest(services, input, memory.digestRevision),
    () => undefined,
  );
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
        unsent: [],
        toolResults: [],
        nextSeq: 2,
        ...(sent ? { sent } : {}),
      };
    const [turn, stored] = await Promise.all([
      services.turns.get(input),
      services.events.read(input.sessionId, input.chatMessageId, 0),
    ]);
    return {
      memory,
      digest,
      turn,
      stored,
      unsent: stored,
      toolResults: [],
      nextSeq: (stored.at(-1)?.seq ?? 1) + 1,
    };
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
    unsent: stored,
    toolResults,
    nextSeq: Math.max(input.firstSeq, (stored.at(-1)?.seq ?? 0) + 1),
  };
}

/**
 * Whether working memory shows that the conversation can have no digest yet: it holds every message the conversation
 * had, on a path that never moved, and they come to well under half the prompt budget, where the history worker
 * first folds turns into a digest (with a margin of two over the estimate, which the worker counts its own way).
 */
export function noDigestYet(memory: WorkingMemory, promptTokenBudget: number): boolean {
  const branch = memory.path?.branch;
  if (branch !== undefined && (branch.branchId !== MAIN_BRANCH || branch.gaps.length > 0)) return false;
  if ((memory.offPath?.length ?? 0) > 0) return false;
  if (memory.messages.length !== memory.messageCount) return false;
  const tokens = memory.messages.reduce((sum, message) => sum + messageTokens(message), 0);
  return !foldIsDue(2 * tokens, promptTokenBudget);
}

/**
 * The digest for the prompt, read beside the round's other reads. A digest that cannot be read leaves the prompt
 * without it (the recent history alone, as before any summary), rather than failing the turn.
 */
function readDigest(
  services: RoundReadPorts,
  ref: TurnRef,
  revision: number | undefined,
): Promise<PromptDigest | undefined> {
  return services.sessionMemory.getDigest(ref.userId, ref.sessionId, { revision }).then(
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
function sendLive(services: RoundReadPorts, ref: TurnRef, events: ChatEvent[]): Promise<void> {
  return services.sink
    .send({ userId: ref.userId, sessionId: ref.sessionId }, events)
    .catch((error: unknown) =>
      services.log?.warn(`Live delivery of turn ${ref.chatMessageId} failed:`, error),
    );
}
