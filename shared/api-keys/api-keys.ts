// The use-cases of personal API keys: create one (the key is answered this once), list them, revoke one. Only their
// owner reaches them; another user's key is the same 404 as an unknown one.
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { ApiKeyStore } from './api-key-store.js';
import {
  API_KEY_MAX_LIFETIME_DAYS,
  type ApiKeyInfo,
  type CreateApiKeyBody,
  type UserApiKey,
} from './contracts.js';
import { mintApiKey } from './key-format.js';
import type { ApiKeysConfig } from './settings.js';

export interface ApiKeyServices {
  store: ApiKeyStore;
  config: ApiKeysConfig;
  /** Forgets a revoked key on this instance at once. */
  forget(keyId: string): void;
  now?: () => number;
}

/** The operator has keys off: 403 with a problem that says so. */
export class ApiKeysOffError extends AppError {
  constructor() {
    super(
      'api_keys_off',
      'Personal API keys are turned off on this service (its operator sets API_KEYS=on to allow them).',
      403,
    );
  }
}

function requireKeys(config: ApiKeysConfig): void {
  if (!config.enabled) throw new ApiKeysOffError();
}

function infoOf(entry: UserApiKey): ApiKeyInfo {
  const { id, name, prefix, createdAt, lastUsedAt, expiresAt } = entry;
  return { id, name, prefix, createdAt, lastUsedAt, expiresAt };
}

export async function createApiKey(
  services: ApiKeyServices,
  caller: Caller,
  body: CreateApiKeyBody,
): Promise<ApiKeyInfo & { key: string }> {
  requireKeys(services.config);
  const now = (services.now ?? Date.now)();
  const expiresAt = body.expiresAt === undefined || body.expiresAt === null ? null : new Date(body.expiresAt);
  if (expiresAt !== null && expiresAt.getTime() <= now)
    throw new ValidationError('Invalid API key: expiresAt must be in the future.', [
      { path: 'expiresAt', message: 'must be in the future' },
    ]);
  if (expiresAt !== null && expiresAt.getTime() > now + API_KEY_MAX_LIFETIME_DAYS * 86_400_000)
    throw new ValidationError(
      `Invalid API key: expiresAt must be within ${API_KEY_MAX_LIFETIME_DAYS} days.`,
      [{ path: 'expiresAt', message: `must be within ${API_KEY_MAX_LIFETIME_DAYS} days` }],
    );
  const held = (await services.store.list(caller.userId)).filter(
    (entry) => entry.expiresAt === null || Date.parse(entry.expiresAt) > now,
  );
  const limit = services.config.maxPerUser;
  if (held.length >= limit)
    throw new ConflictError(
      `You hold ${held.length} API keys, the most one user may (API_KEYS_MAX_PER_USER=${limit}): revoke one first.`,
    );
  const minted = mintApiKey();
  const entry: UserApiKey = {
    id: minted.keyId,
    keyId: minted.keyId,
    userId: caller.userId,
    name: body.name,
    prefix: minted.displayPrefix,
    createdAt: new Date(now).toISOString(),
    lastUsedAt: null,
    expiresAt: expiresAt?.toISOString() ?? null,
  };
  await services.store.create(entry, {
    id: minted.keyId,
    keyId: minted.keyId,
    userId: caller.userId,
    keyHash: minted.keyHash,
    expiresAt: entry.expiresAt,
  });
  return { ...infoOf(entry), key: minted.key };
}

/** Listing and revoking stay open with keys off, so an owner can still see and clean up what they made. */
export async function listApiKeys(services: ApiKeyServices, caller: Caller): Promise<ApiKeyInfo[]> {
  return (await services.store.list(caller.userId)).map(infoOf);
}

export async function revokeApiKey(services: ApiKeyServices, caller: Caller, keyId: string): Promise<void> {
  const entry = await services.store.entry(caller.userId, keyId);
  if (entry === undefined) throw new NotFoundError(`No API key ${keyId} among yours.`);
  await services.store.revoke(caller.userId, keyId);
  services.forget(keyId);
}
