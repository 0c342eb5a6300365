// The quota area's declarations: the limits a refusal names, and the container and documents that hold each user's
// quota state in Cosmos DB (so every instance of the app enforces the same limits).
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';

/** What a 429's `limit` names: each maps to its QUOTA_* setting. */
export const QUOTA_LIMITS = {
  'concurrent-turns': 'QUOTA_CONCURRENT_TURNS',
  'messages-per-minute': 'QUOTA_MESSAGES_PER_MINUTE',
  'tokens-per-day': 'QUOTA_TOKENS_PER_DAY',
  'cost-per-month': 'QUOTA_COST_PER_MONTH',
  'knowledge-bytes': 'QUOTA_KNOWLEDGE_BYTES',
} as const;

export type QuotaLimit = keyof typeof QUOTA_LIMITS;

export const QUOTAS_CONTAINER = 'quotas';

export const quotaContainers: readonly ContainerSpec[] = [
  {
    id: QUOTAS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    // Items carry their own `ttl`: a lease document outlives its longest lease, a minute's counter its minute.
    defaultTtlSeconds: -1,
    purpose:
      "Each user's quota state: the leases of their running turns (one document) and their message counter per " +
      'minute; every item expires on its own.',
  },
];

/** The id of a user's one document of turn leases. */
export const TURN_LEASES_ID = 'turn-leases';

/**
 * A turn's slot and what it reserved of the spend limits: held from its acceptance until it ends, or until
 * `expiresAt` if its end is never seen. An upload's lease holds no slot, only its bytes and its ingestion's tokens.
 */
export const turnLeaseSchema = z.object({
  /** `{sessionId}/{chatMessageId}`, or `upload:{documentId}`. */
  turn: z.string().min(1),
  expiresAt: z.iso.datetime(),
  /** False: the lease holds no QUOTA_CONCURRENT_TURNS slot (an upload, or a turn that ended). Absent: it does. */
  slot: z.boolean().optional(),
  /** Reserved against QUOTA_TOKENS_PER_DAY, QUOTA_COST_PER_MONTH and QUOTA_KNOWLEDGE_BYTES until settled. */
  tokens: z.number().int().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
  bytes: z.number().int().nonnegative().optional(),
  /** Its work ended: the reservation stays until the real usage is recorded, or `expiresAt` (soon) passes. */
  settling: z.literal(true).optional(),
});

export type TurnLease = z.infer<typeof turnLeaseSchema>;

export const turnLeasesDocumentSchema = z.object({
  id: z.literal(TURN_LEASES_ID),
  kind: z.literal('quota-turn-leases'),
  userId: z.string().min(1),
  leases: z.array(turnLeaseSchema),
  ttl: z.number().int().positive(),
});

export type TurnLeasesDocument = z.infer<typeof turnLeasesDocumentSchema>;

/** One user's messages counted in one UTC minute (id `messages-{epoch seconds of its start}`). */
export const messageWindowDocumentSchema = z.object({
  id: z.string().regex(/^messages-\d+$/),
  kind: z.literal('quota-message-window'),
  userId: z.string().min(1),
  windowStart: z.iso.datetime(),
  count: z.number().int().nonnegative(),
  ttl: z.number().int().positive(),
});

export type MessageWindowDocument = z.infer<typeof messageWindowDocumentSchema>;

export function messageWindowId(windowStart: Date): string {
  return `messages-${Math.floor(windowStart.getTime() / 1000)}`;
}
