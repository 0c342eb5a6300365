// Where quotas are enforced: a turn is admitted at the front door (spend so far, messages this minute, turns
// running) or refused with a QuotaExceededError naming the limit; its slot is released when it ends. Uploads to
// the knowledge base are checked against the bytes the user keeps there.
import { QuotaExceededError } from '../errors.js';
import { QUOTA_LIMITS, type QuotaLimit } from './contracts.js';
import { turnKey, type QuotaState } from './quota-state.js';
import type { QuotaConfig } from './settings.js';
import type { UsageReader } from './usage-reader.js';

/** Who is asking: their user id and the groups their identity names (QUOTA_EXEMPT may name either). */
export interface QuotaCaller {
  userId: string;
  groups?: readonly string[] | undefined;
}

export interface QuotaServices {
  config: QuotaConfig;
  state: QuotaState;
  usage: UsageReader;
  now?: () => Date;
}

/** What admitting a turn took: undone when the request then fails, so a refused or failed post changes nothing. */
export interface TurnAdmission {
  /** The turn holds a QUOTA_CONCURRENT_TURNS slot: whatever ends it gives the slot back, whatever the limit is then. */
  holdsSlot: boolean;
  undo(): Promise<void>;
}

const NOTHING_TAKEN: TurnAdmission = { holdsSlot: false, undo: () => Promise.resolve() };

/** A refused turn asks again after this long: slots free as turns end, which the caller cannot see coming. */
export const TURN_SLOT_RETRY_SECONDS = 2;
/** A full knowledge base frees room only when the user deletes documents: a retry soon would fail the same way. */
export const KNOWLEDGE_RETRY_SECONDS = 3_600;
const MINUTE_SECONDS = 60;

export function isExempt(config: QuotaConfig, caller: QuotaCaller): boolean {
  if (config.exempt.users.includes(caller.userId)) return true;
  return (caller.groups ?? []).some((group) => config.exempt.groups.includes(group));
}

/** Whether admitting a turn reads or writes anything (so the front door need not look for a re-post otherwise). */
export function limitsTurns(config: QuotaConfig, caller: QuotaCaller): boolean {
  const { concurrentTurns, messagesPerMinute, tokensPerDay, costPerMonthUsd } = config;
  return (
    (concurrentTurns > 0 || messagesPerMinute > 0 || tokensPerDay > 0 || costPerMonthUsd > 0) &&
    !isExempt(config, caller)
  );
}

/**
 * Admits a new turn or throws QuotaExceededError. Spend is read first (it changes nothing); then the message is
 * counted and the slot taken, and whichever of those a refusal of the other left behind is taken back.
 */
export async function admitTurn(
  services: QuotaServices,
  caller: QuotaCaller,
  turn: { sessionId: string; chatMessageId: string },
): Promise<TurnAdmission> {
  const { config, state } = services;
  if (!limitsTurns(config, caller)) return NOTHING_TAKEN;
  const now = services.now?.() ?? new Date();
  await checkSpend(services, caller.userId, now);

  const window = { start: minuteStart(now), seconds: MINUTE_SECONDS };
  if (config.messagesPerMinute > 0) {
    const counted = await state.countMessage(caller.userId, window, config.messagesPerMinute);
    if (!counted.counted)
      throw refusal(
        'messages-per-minute',
        `Too many messages this minute (${config.messagesPerMinute} allowed per minute): send this one in a moment.`,
        config.messagesPerMinute,
        counted.count,
        secondsUntil(now, new Date(window.start.getTime() + MINUTE_SECONDS * 1000)),
      );
  }
  const uncount = () =>
    config.messagesPerMinute > 0 ? state.uncountMessage(caller.userId, window.start) : Promise.resolve();

  const key = turnKey(turn);
  // A slot this admission did not take (the same message posted twice at once) is not its to give back.
  let tookSlot = false;
  if (config.concurrentTurns > 0) {
    let slot;
    try {
      slot = await state.takeTurnSlot({
        userId: caller.userId,
        turn: key,
        max: config.concurrentTurns,
        leaseSeconds: config.leaseSeconds,
        now,
      });
    } catch (error) {
      await uncount();
      throw error;
    }
    if (!slot.taken) {
      await uncount();
      throw refusal(
        'concurrent-turns',
        `Too many answers running at once (${config.concurrentTurns} allowed): send this message once one has ended.`,
        config.concurrentTurns,
        slot.running,
        Math.min(TURN_SLOT_RETRY_SECONDS, secondsUntil(now, slot.nextExpiry)),
      );
    }
    tookSlot = slot.alreadyHeld !== true;
  }
  return {
    holdsSlot: config.concurrentTurns > 0,
    undo: async () => {
      await Promise.all([tookSlot ? state.releaseTurnSlot(caller.userId, key) : undefined, uncount()]);
    },
  };
}

/**
 * Frees the slot of a turn that ended (whichever way), or whose message will start no turn: the slot its admission
 * took (`quotaSlot`), whatever the limit is now, or any it may hold while the limit is on. With the limit off, a turn
 * admitted without a slot reads nothing.
 */
export async function releaseTurn(
  services: Pick<QuotaServices, 'config' | 'state'>,
  turn: { userId: string; sessionId: string; chatMessageId: string; quotaSlot?: boolean | undefined },
): Promise<void> {
  if (turn.quotaSlot !== true && services.config.concurrentTurns === 0) return;
  await services.state.releaseTurnSlot(turn.userId, turnKey(turn));
}

/**
 * Refuses an upload of `addedBytes` that would take the bytes the user keeps in the knowledge base past the limit.
 * `storedBytes` is read only when a limit applies.
 */
export async function admitKnowledgeBytes(
  services: Pick<QuotaServices, 'config'>,
  caller: QuotaCaller,
  addedBytes: number,
  storedBytes: () => Promise<number>,
): Promise<void> {
  const { knowledgeBytes } = services.config;
  if (knowledgeBytes === 0 || isExempt(services.config, caller)) return;
  const stored = await storedBytes();
  if (stored + addedBytes <= knowledgeBytes) return;
  throw refusal(
    'knowledge-bytes',
    `Your knowledge base holds ${stored} bytes of documents; this one (${addedBytes} bytes) would take it past ` +
      `${knowledgeBytes}: delete documents you no longer need, then upload it again.`,
    knowledgeBytes,
    stored,
    KNOWLEDGE_RETRY_SECONDS,
  );
}

/** Tokens today and spend this month, read at once; a limit reached refuses until its period ends. */
async function checkSpend(services: QuotaServices, userId: string, now: Date): Promise<void> {
  const { tokensPerDay, costPerMonthUsd } = services.config;
  const [tokens, cost] = await Promise.all([
    tokensPerDay > 0 ? services.usage.tokensOnDay(userId, now) : 0,
    costPerMonthUsd > 0 ? services.usage.costInMonth(userId, now) : 0,
  ]);
  if (tokensPerDay > 0 && tokens >= tokensPerDay)
    throw refusal(
      'tokens-per-day',
      `You used ${tokens} tokens today (UTC), the most allowed per day: chat again after midnight UTC.`,
      tokensPerDay,
      tokens,
      secondsUntil(now, nextUtcDay(now)),
    );
  if (costPerMonthUsd > 0 && cost >= costPerMonthUsd)
    throw refusal(
      'cost-per-month',
      `You spent $${cost.toFixed(2)} this month (UTC), the most allowed ($${costPerMonthUsd.toFixed(2)}): ` +
        'chat again next month.',
      costPerMonthUsd,
      cost,
      secondsUntil(now, nextUtcMonth(now)),
    );
}

function refusal(
  limit: QuotaLimit,
  message: string,
  allowed: number,
  current: number,
  retryAfterSeconds: number,
): QuotaExceededError {
  return new QuotaExceededError(
    `${message} (${QUOTA_LIMITS[limit]})`,
    limit,
    allowed,
    current,
    retryAfterSeconds,
  );
}

export function minuteStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 60_000) * 60_000);
}

function nextUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

function nextUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** Whole seconds from `now` to `later`, at least 1 (a retry-after of 0 invites a hot loop). */
function secondsUntil(now: Date, later: Date): number {
  return Math.max(1, Math.ceil((later.getTime() - now.getTime()) / 1000));
}
