// The personal API key endpoints as the settings view calls them, and how a key's dates read in a list.
import type { ApiKeyInfo } from '../../../shared/api-keys/contracts.js';
import type { ApiClient } from '../api/client';

export type { ApiKeyInfo };

export interface ApiKeyList {
  keys: ApiKeyInfo[];
  enabled: boolean;
  maxKeys: number;
}

export const apiKeysApi = {
  list: (api: ApiClient) => api.json<ApiKeyList>('GET', '/api/api-keys'),
  create: (api: ApiClient, key: { name: string; expiresAt?: string }) =>
    api.json<ApiKeyInfo & { key: string }>('POST', '/api/api-keys', key),
  revoke: (api: ApiClient, id: string) =>
    api.json<undefined>('DELETE', `/api/api-keys/${encodeURIComponent(id)}`),
};

/** The expiry a form's choice of days gives, from now; undefined for "never". */
export function expiryIn(days: number | undefined, now: number = Date.now()): string | undefined {
  return days === undefined ? undefined : new Date(now + days * 86_400_000).toISOString();
}

/** A key's state for its row: expired keys stay listed a while, marked. */
export function keyState(key: Pick<ApiKeyInfo, 'expiresAt'>, now: number = Date.now()): 'active' | 'expired' {
  return key.expiresAt !== null && Date.parse(key.expiresAt) <= now ? 'expired' : 'active';
}

export function shortDate(iso: string | null, fallback: string): string {
  return iso === null ? fallback : new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });
}
