// The api-keys area's contracts: a key's credential (partition /keyId: what a request's key is checked against, one
// point read) and its owner's list entry (partition /userId: names, dates, last use), and what the API answers.
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const API_KEYS_CONTAINER = 'api-keys';
export const USER_API_KEYS_CONTAINER = 'user-api-keys';

export const apiKeysContainers: readonly ContainerSpec[] = [
  {
    id: API_KEYS_CONTAINER,
    partitionKeyPaths: ['/keyId'],
    defaultTtlSeconds: -1,
    purpose:
      "Personal API keys' credentials, one item per key keyed by the key's id (the part of the key that is not secret): its owner, the SHA-256 of the key (never the key) and its expiry, so checking a key is one point read; an expiring key carries a TTL.",
  },
  {
    id: USER_API_KEYS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    defaultTtlSeconds: -1,
    purpose:
      "Each owner's personal API keys as their list shows them (name, prefix, dates, last use), listed and revoked by their owner only.",
  },
];

/** A key's name: what its owner calls it ("laptop", "Claude Desktop"). */
export const API_KEY_NAME_MAX_CHARS = 100;
/** The furthest a key's expiry may be set. */
export const API_KEY_MAX_LIFETIME_DAYS = 3_660;

/** What a request's key is checked against. */
export const apiKeyCredentialSchema = z.object({
  id: z.string(),
  keyId: z.string(),
  userId: z.string(),
  /** SHA-256 of the whole key, hex. */
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** null: until revoked. */
  expiresAt: z.iso.datetime().nullable(),
});
export type ApiKeyCredential = z.infer<typeof apiKeyCredentialSchema>;

/** A key as its owner's list shows it; never the key itself. */
export const apiKeyInfoSchema = z.object({
  id: z.string().describe("the key's id: what DELETE /api/api-keys/{id} takes"),
  name: z.string(),
  prefix: z.string().describe('the start of the key (cmk_ and its id), to recognise it by; not the secret'),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable().describe('written at most every few minutes per instance'),
  expiresAt: z.iso.datetime().nullable(),
});
export type ApiKeyInfo = z.infer<typeof apiKeyInfoSchema>;

/** The stored list entry. */
export const userApiKeySchema = apiKeyInfoSchema.extend({ userId: z.string(), keyId: z.string() });
export type UserApiKey = z.infer<typeof userApiKeySchema>;

export const createApiKeyBodySchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(API_KEY_NAME_MAX_CHARS),
  expiresAt: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z' })
    .nullable()
    .optional(),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBodySchema>;

/** The answer to POST /api/api-keys: the one time the key is shown. */
export const createdApiKeySchema = apiKeyInfoSchema.extend({
  key: z.string().describe('the key itself: shown this once, never again; keep it like a password'),
});

export const apiKeyListSchema = z.object({
  keys: z.array(apiKeyInfoSchema),
  /** Whether the operator lets users create keys (API_KEYS); keys are listed, and can be revoked, either way. */
  enabled: z.boolean(),
  /** How many keys one user may hold. */
  maxKeys: z.number().int(),
});
