// Where quotas are enforced: a turn is admitted at the front door (messages this minute, turns running, spend used
// and reserved) or refused with a QuotaExceededError naming the limit; its lease is released when it ends. Uploads
// reserve their bytes and their ingestion's tokens the same way.
import { QuotaExceededError } from '../errors.js';
import { QUOTA_LIMITS, type QuotaLimit } from './contracts.js';
import { turnKey, type QuotaState, type Reservation } from './quota-state.js';
import { DEFAULT_TURN_TOKEN_ESTIMATE, type QuotaConfig } from './settings.js';
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
  /** US dollars of so many tokens at the chat model's price (what a reservation holds of QUOTA_COST_PER_MONTH). */
  priceTokens?: (tokens: number) => number;
  now?: () => Date;
}

/** What admitting a turn took: undone when the request then fails, so a refused or failed post changes nothing. */
export interface TurnAdmission {
  /**
   * The turn holds a lease (a QUOTA_CONCURRENT_TURNS slot, a reservation of tokens and cost): whatever ends it gives
   * the lease back, whatever the limits are then.
   */
  holdsSlot: boolean;
  undo(): Promise<void>;
}

const NOTHING_TAKEN: TurnAdmission = { holdsSlot: false, undo: () => Promise.resolve() };

/** A refused turn asks again after this long: slots free as turns end, which the caller cannot see coming. */
export const TURN_SLOT_RETRY_SECONDS = 2;
/** A full knowledge base frees room only when the user deletes documents: a retry soon would fail the same way. */
export const KNOWLEDGE_RETRY_SECONDS = 3_600;
const MINUTE_SECONDS = 60;
/**
 * How long a turn's reservation outlives its end when its usage is not seen recorded (the chat worker's release after
 * the turn drops it): long enough for the record's write, short enough not to hold the user back.
 */
export const SETTLE_SECONDS = 120;
/** An ingestion's tokens are estimated from its bytes (embeddings read about four bytes of text per token). */
const BYTES_PER_TOKEN = 4;

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

/** Whether a turn holds a lease: for its slot, or for what it reserves of the day's tokens and the month's spend. */
export function leasesTurns(config: QuotaConfig): boolean {
  return config.concurrentTurns > 0 || spendLimited(config);
}

/** Whether turns reserve tokens or spend while they run (QUOTA_TOKENS_PER_DAY or QUOTA_COST_PER_MONTH is on). */
export function spendLimited(config: QuotaConfig): boolean {
  return config.tokensPerDay > 0 || config.costPerMonthUsd > 0;
}

/**
 * Admits a new turn or throws QuotaExceededError. The message is counted, then one write of the user's lease
 * document takes the slot and reserves the turn's estimate against what is used and reserved; a refusal of the
 * lease takes the count back.
 */
export async function admitTurn(
  services: QuotaServices,
  caller: QuotaCaller,
  turn: { sessionId: string; chatMessageId: string },
): Promise<TurnAdmission> {
  const { config, state } = services;
  if (!limitsTurns(config, caller)) return NOTHING_TAKEN;
  const now = services.now?.() ?? new Date();

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
  // A lease this admission did not take (the same message posted twice at once) is not its to give back.
  let tookLease = false;
  if (leasesTurns(config)) {
    let slot;
    try {
      slot = await state.takeTurnSlot({
        userId: caller.userId,
        turn: key,
        max: config.concurrentTurns,
        leaseSeconds: config.leaseSeconds,
        now,
        ...spendReservation(
          services,
          caller.userId,
          now,
          config.turnTokenEstimate ?? DEFAULT_TURN_TOKEN_ESTIMATE,
          0,
        ),
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
    tookLease = slot.alreadyHeld !== true;
  }
  return {
    holdsSlot: leasesTurns(config),
    undo: async () => {
      await Promise.all([tookLease ? state.releaseTurnSlot(caller.userId, key) : undefined, uncount()]);
    },
  };
}

/**
 * Frees the slot of a turn that ended (whichever way), or whose message will start no turn: the lease its admission
 * took (`quotaSlot`), whatever the limits are now, or any it may hold while a limit is on. Its reservation settles:
 * kept while the turn's usage is being recorded, dropped by the next release (the chat worker's, once the turn is
 * over and recorded) or SETTLE_SECONDS later. With the limits off, a turn admitted without a lease reads nothing.
 */
export async function releaseTurn(
  services: Pick<QuotaServices, 'config' | 'state'>,
  turn: { userId: string; sessionId: string; chatMessageId: string; quotaSlot?: boolean | undefined },
): Promise<void> {
  if (turn.quotaSlot !== true && !leasesTurns(services.config)) return;
  await services.state.releaseTurnSlot(turn.userId, turnKey(turn), SETTLE_SECONDS);
}

/**
 * Takes the slot of a turn that gave it back while it waited for its user's yes: undefined once held, else how many
 * seconds to wait before asking again (slots free as other turns end). A turn admitted without a lease takes none.
 */
export async function retakeTurnSlot(
  services: Pick<QuotaServices, 'config' | 'state' | 'now'>,
  turn: { userId: string; sessionId: string; chatMessageId: string; quotaSlot?: boolean | undefined },
): Promise<number | undefined> {
  const { config, state } = services;
  if (turn.quotaSlot !== true || !leasesTurns(config)) return undefined;
  const now = services.now?.() ?? new Date();
  const slot = await state.takeTurnSlot({
    userId: turn.userId,
    turn: turnKey(turn),
    max: config.concurrentTurns,
    leaseSeconds: config.leaseSeconds,
    now,
  });
  if (slot.taken) return undefined;
  return Math.max(1, Math.min(TURN_SLOT_RETRY_SECONDS, secondsUntil(now, slot.nextExpiry)));
}

/** What an admitted upload holds until its document is stored (or its upload fails). */
export interface UploadAdmission {
  /** `stored`: its bytes are counted in the documents now; its ingestion's tokens stay reserved a while. */
  release(stored: boolean): Promise<void>;
}

/**
 * Admits an upload of new content, or throws QuotaExceededError: one write of the user's lease document reserves its
 * bytes against QUOTA_KNOWLEDGE_BYTES (the bytes kept, read after the leases, and the other uploads' reservations)
 * and its ingestion's estimated tokens against the spend limits, before anything of it is stored.
 */
export async function admitUpload(
  services: QuotaServices,
  caller: QuotaCaller,
  upload: { documentId: string; bytes: number },
  storedBytes: () => Promise<ReadonlyMap<string, number>>,
): Promise<UploadAdmission> {
  const { config, state } = services;
  const nothing: UploadAdmission = { release: () => Promise.resolve() };
  if ((config.knowledgeBytes === 0 && !spendLimited(config)) || isExempt(config, caller)) return nothing;
  const now = services.now?.() ?? new Date();
  const key = uploadKey(upload.documentId);
  const tokens = Math.ceil(upload.bytes / BYTES_PER_TOKEN);
  const spend = spendReservation(services, caller.userId, now, tokens, upload.bytes);
  const taken = await state.takeTurnSlot({
    userId: caller.userId,
    turn: key,
    max: 0,
    leaseSeconds: config.leaseSeconds,
    now,
    reserve: spend.reserve,
    check: async (open, leases) => {
      if (config.knowledgeBytes > 0) await checkBytes(config, upload.bytes, leases, storedBytes);
      await spend.check(open);
    },
  });
  // The same content uploaded twice at once: the other upload holds the reservation and stores the document.
  if (taken.taken && taken.alreadyHeld === true) return nothing;
  return {
    release: (stored) => state.releaseTurnSlot(caller.userId, key, stored ? config.leaseSeconds : undefined),
  };
}

function uploadKey(documentId: string): string {
  return `upload:${documentId}`;
}

async function checkBytes(
  config: QuotaConfig,
  addedBytes: number,
  leases: readonly { turn: string; bytes: number }[],
  storedBytes: () => Promise<ReadonlyMap<string, number>>,
): Promise<void> {
  const stored = await storedBytes();
  // An upload whose document is stored and listed already is counted there, not twice; an attachment's upload
  // reserves against its own limit.
  const reserved = leases
    .filter((lease) => lease.turn.startsWith('upload:') && !stored.has(lease.turn.replace(/^upload:/, '')))
    .reduce((sum, lease) => sum + lease.bytes, 0);
  const held = [...stored.values()].reduce((sum, bytes) => sum + bytes, reserved);
  if (held + addedBytes <= config.knowledgeBytes) return;
  throw refusal(
    'knowledge-bytes',
    `Your knowledge base holds ${held} bytes of documents (uploads under way included); this one (${addedBytes} ` +
      `bytes) would take it past ${config.knowledgeBytes}: delete documents you no longer need, then upload it again.`,
    config.knowledgeBytes,
    held,
    KNOWLEDGE_RETRY_SECONDS,
  );
}

/**
 * The reservation a lease holds against the day's tokens and the month's spend, and the check it must pass: admitted
 * while what is used and reserved stays below each limit, reserving the estimate or what is left of the limit, if
 * less (so a limit below the estimate still admits one turn at a time).
 */
function spendReservation(
  services: QuotaServices,
  userId: string,
  now: Date,
  estimateTokens: number,
  bytes: number,
): { reserve: Reservation; check: (open: Reservation) => Promise<void> } {
  const { tokensPerDay, costPerMonthUsd } = services.config;
  const reserve: Reservation = { tokens: 0, costUsd: 0, bytes };
  if (!spendLimited(services.config)) return { reserve, check: () => Promise.resolve() };
  const estimateUsd = services.priceTokens?.(estimateTokens) ?? 0;
  return {
    reserve,
    check: async (open) => {
      const { tokens, cost } = await usedSpend(services, userId, now);
      checkSpend(services.config, now, { tokens, cost }, open, 'chat');
      // The lease written after the check holds what it reserved.
      reserve.tokens = tokensPerDay > 0 ? Math.min(estimateTokens, tokensPerDay - tokens - open.tokens) : 0;
      reserve.costUsd =
        costPerMonthUsd > 0 ? Math.min(estimateUsd, costPerMonthUsd - cost - open.costUsd) : 0;
    },
  };
}

/**
 * Admits work that reserves nothing of its own (a search embeds a query of a few hundred tokens, recorded as it
 * ends), or throws QuotaExceededError: refused by the same rule as a turn, while what is used and what turns and
 * uploads under way reserve reach the day's tokens or the month's spend. One read of the leases, none written. A
 * background job's model call (`background`) is checked by the same rule.
 */
export async function refuseWhenSpent(
  services: QuotaServices,
  userId: string,
  now: Date,
  refused: 'search' | 'background' = 'search',
): Promise<void> {
  if (!spendLimited(services.config)) return;
  const [used, open] = await Promise.all([
    usedSpend(services, userId, now),
    services.state.openReservations(userId, now),
  ]);
  checkSpend(services.config, now, used, open, refused);
}

async function usedSpend(
  services: QuotaServices,
  userId: string,
  now: Date,
): Promise<{ tokens: number; cost: number }> {
  const { tokensPerDay, costPerMonthUsd } = services.config;
  const [tokens, cost] = await Promise.all([
    tokensPerDay > 0 ? services.usage.tokensOnDay(userId, now) : 0,
    costPerMonthUsd > 0 ? services.usage.costInMonth(userId, now) : 0,
  ]);
  return { tokens, cost };
}

/** What a refusal asks the user to do, by what was refused: `[after the period, once a reservation settles]`. */
const ASK_AGAIN = {
  chat: ['chat again', 'send this'],
  search: ['search again', 'search again'],
  background: ['background work (titles, summaries, memory) resumes', 'background work resumes'],
} as const;

/** Refuses while tokens today or spend this month, with what turns under way reserve, reach their limit. */
function checkSpend(
  config: QuotaConfig,
  now: Date,
  used: { tokens: number; cost: number },
  open: Reservation,
  refused: keyof typeof ASK_AGAIN,
): void {
  const [later, soon] = ASK_AGAIN[refused];
  const { tokensPerDay, costPerMonthUsd } = config;
  // Reservations settle as their turns end: a limit reached only with them is worth a retry soon.
  const retry = (usedUp: boolean, periodEnd: Date) =>
    usedUp ? secondsUntil(now, periodEnd) : Math.min(TURN_SLOT_RETRY_SECONDS, secondsUntil(now, periodEnd));
  const tokens = used.tokens + open.tokens;
  if (tokensPerDay > 0 && tokens >= tokensPerDay) {
    const usedUp = used.tokens >= tokensPerDay;
    throw refusal(
      'tokens-per-day',
      usedUp
        ? `You used ${used.tokens} tokens today (UTC), the most allowed per day: ${later} after midnight UTC.`
        : `You used ${used.tokens} tokens today (UTC) and your answers under way hold the rest of the ` +
            `${tokensPerDay} allowed: ${soon} once one has ended.`,
      tokensPerDay,
      usedUp ? used.tokens : tokens,
      retry(usedUp, nextUtcDay(now)),
    );
  }
  if (costPerMonthUsd > 0 && used.cost + open.costUsd >= costPerMonthUsd) {
    const usedUp = used.cost >= costPerMonthUsd;
    throw refusal(
      'cost-per-month',
      usedUp
        ? `You spent $${used.cost.toFixed(2)} this month (UTC), the most allowed ($${costPerMonthUsd.toFixed(2)}): ` +
            `${later} next month.`
        : `You spent $${used.cost.toFixed(2)} this month (UTC) and your answers under way hold the rest of the ` +
            `$${costPerMonthUsd.toFixed(2)} allowed: ${soon} once one has ended.`,
      costPerMonthUsd,
      usedUp ? used.cost : Math.round((used.cost + open.costUsd) * 1e6) / 1e6,
      retry(usedUp, nextUtcMonth(now)),
    );
  }
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
