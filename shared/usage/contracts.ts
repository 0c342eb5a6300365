// The usage area's contracts: what each model call is attributed to, the record kept of it, the counters per user
// per day and month and per conversation, the cost a turn's message-end carries, and the usage API's shapes.
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const USAGE_CONTAINER = 'usage';

/** A usage record lives this long; the counters are kept. */
export const USAGE_RECORD_TTL_SECONDS = 400 * 24 * 60 * 60;

export const usageContainers: readonly ContainerSpec[] = [
  {
    id: USAGE_CONTAINER,
    partitionKeyPaths: ['/userId'],
    defaultTtlSeconds: -1,
    // What its queries filter on (a kind of item, a day, a conversation, a counter's key; an erased account's items):
    // the figures of a record's jobs and of the counters, which every job's batch writes, are never looked into.
    indexedPaths: ['/userId', '/ownerId', '/type', '/day', '/sessionId', '/key'],
    purpose:
      "What the model calls cost: one record per turn, its steps' and its background jobs' calls folded in, and per job of no turn (tokens and US dollars by kind and model; kept 400 days) and the user's counters per month (with each day's tokens) and per conversation, raised in the same batch as each job's record.",
  },
];

/** What a model call was for: the chat's rounds, or background work users never see. */
export const USAGE_KINDS = [
  'turn',
  'title',
  'exchange-index',
  'summary',
  'profile',
  'embedding',
  'ingestion',
] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

/** Tokens, calls and US dollars of some model calls. */
export const usageFiguresSchema = z.object({
  calls: z.number(),
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  outputTokens: z.number(),
  reasoningTokens: z.number(),
  costUsd: z.number(),
});
export type UsageFigures = z.infer<typeof usageFiguresSchema>;

export const NO_USAGE: UsageFigures = {
  calls: 0,
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  costUsd: 0,
};

/** One kind of call to one model within a job: how many calls, their tokens and US dollars. */
export const usagePartSchema = z.object({
  kind: z.enum(USAGE_KINDS),
  model: z.string(),
  calls: z.number(),
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  outputTokens: z.number(),
  reasoningTokens: z.number(),
  costUsd: z.number(),
  /** The price table had no price for the model: costUsd is 0. */
  priced: z.boolean(),
});
export type UsagePart = z.infer<typeof usagePartSchema>;

/**
 * The model calls of a turn (its rounds, tool calls and failure step), or of one background job, as recorded: its id
 * is derived from what it served, and each job is folded in once, under its name, so a job run again finds it.
 */
export const usageRecordSchema = z.object({
  id: z.string(),
  userId: z.string(),
  type: z.literal('usage'),
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  /** The knowledge library an ingestion worked for, when it is not the user's own (the shared library). */
  library: z.string().optional(),
  /** UTC day (YYYY-MM-DD) of its first job. */
  day: z.string(),
  at: z.string(),
  /** Each job's calls by kind and model. */
  jobs: z.record(z.string(), z.array(usagePartSchema)),
  ttl: z.number(),
});
export type UsageRecord = z.infer<typeof usageRecordSchema>;

/** A record of one model call, as stored before calls were folded by job: read as a record of one part. */
export const callRecordSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    type: z.literal('call'),
    sessionId: z.string().optional(),
    turnId: z.string().optional(),
    kind: z.enum(USAGE_KINDS),
    model: z.string(),
    day: z.string(),
    at: z.string(),
    inputTokens: z.number(),
    cachedInputTokens: z.number(),
    outputTokens: z.number(),
    reasoningTokens: z.number(),
    costUsd: z.number(),
    priced: z.boolean(),
    ttl: z.number(),
  })
  .transform(
    ({
      kind,
      model,
      inputTokens,
      cachedInputTokens,
      outputTokens,
      reasoningTokens,
      costUsd,
      priced,
      ...rest
    }): UsageRecord => ({
      ...rest,
      type: 'usage',
      jobs: {
        call: [
          {
            kind,
            model,
            calls: 1,
            inputTokens,
            cachedInputTokens,
            outputTokens,
            reasoningTokens,
            costUsd,
            priced,
          },
        ],
      },
    }),
  );

/** The counters: a month's (with its days' tokens) and a conversation's; a day's own counter was kept before. */
export const COUNTER_TYPES = ['day', 'month', 'conversation'] as const;
export type CounterType = (typeof COUNTER_TYPES)[number];

/** A user's running totals for one UTC month, or one conversation: the turns' and the background's. */
export const usageCounterSchema = z.object({
  id: z.string(),
  userId: z.string(),
  type: z.enum(COUNTER_TYPES),
  /** The month (YYYY-MM), the conversation's sessionId, or (kept before) the day (YYYY-MM-DD). */
  key: z.string(),
  turns: usageFiguresSchema,
  background: usageFiguresSchema,
  /** A month's tokens (input and output, of every kind) by day of the month ("01" to "31"), for the daily quota. */
  days: z.record(z.string(), z.number()).optional(),
  /** When a month counted before its days were (it kept a counter per day) began to count them. */
  daysSince: z.string().optional(),
  updatedAt: z.string(),
});
export type UsageCounter = z.infer<typeof usageCounterSchema>;

/** A turn's cost, beside its usage in `message-end`; `priced` is false when the table has no price for the model. */
export const llmCostSchema = z.object({ usd: z.number(), model: z.string(), priced: z.boolean() });

// --- The usage API ----------------------------------------------------------------------------------------------

export const USAGE_GROUPINGS = ['day', 'conversation', 'model'] as const;

/** The longest range one request may cover, in days (both ends counted). */
export const MAX_USAGE_RANGE_DAYS = 366;

const dayText = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a UTC date, YYYY-MM-DD')
  .refine((text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && isCalendarDay(text), {
    message: 'must be a real date',
  });

function isCalendarDay(text: string): boolean {
  return new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) === text;
}

/** GET /api/usage/users/{userId}: from and to are UTC days, both included (default: this month so far). */
export const usageQuerySchema = z
  .object({
    from: dayText.optional(),
    to: dayText.optional(),
    groupBy: z.enum(USAGE_GROUPINGS, { error: 'must be "day", "conversation" or "model"' }).default('day'),
  })
  .strict();
export type UsageQuery = z.infer<typeof usageQuerySchema>;

export const usageGroupSchema = z.object({
  /** The day, the conversation's sessionId (empty for work of no conversation: knowledge ingestion) or the model. */
  key: z.string(),
  /** The chat's model rounds. */
  turns: usageFiguresSchema,
  /** Titles, exchange index, summaries, profile extraction, embeddings and knowledge ingestion. */
  background: usageFiguresSchema,
  total: usageFiguresSchema,
});
export type UsageGroup = z.infer<typeof usageGroupSchema>;

export const usageReportSchema = z.object({
  userId: z.string(),
  from: z.string(),
  to: z.string(),
  groupBy: z.enum(USAGE_GROUPINGS),
  currency: z.literal('USD'),
  turns: usageFiguresSchema,
  background: usageFiguresSchema,
  total: usageFiguresSchema,
  /** Background spend by kind (title, summary, ...), over the whole range. */
  backgroundByKind: z.record(z.string(), usageFiguresSchema),
  groups: z.array(usageGroupSchema),
  /** What the caller keeps now (not over the range): attachments' bytes, and QUOTA_ATTACHMENT_BYTES (0: none). */
  storage: z.object({ attachmentBytes: z.number(), attachmentQuotaBytes: z.number() }).optional(),
});
export type UsageReport = z.infer<typeof usageReportSchema>;
