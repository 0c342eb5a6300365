// The Cosmos DB adapter of ApiKeyStore: `api-keys` (partition /keyId: the credential) and `user-api-keys`
// (partition /userId: the owner's list). Every keyId is checked against its closed format before it reaches an
// item's URL or a partition key; items of a key with an expiry carry a TTL that removes them a while after it.
import type { Container } from '@azure/cosmos';
import {
  createItem,
  deleteItem,
  expiryTtl,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { UnsafeItemIdError } from '../../cosmos/adapters/guarded-item.js';
import { isId } from '../../ids.js';
import type { ApiKeyStore } from '../api-key-store.js';
import {
  apiKeyCredentialSchema,
  userApiKeySchema,
  type ApiKeyCredential,
  type UserApiKey,
} from '../contracts.js';

/** An expired key stays listed (as expired) this long, then Cosmos DB removes it. */
const EXPIRED_GRACE_SECONDS = 30 * 24 * 3_600;

export interface ApiKeyContainers {
  credentials: Container;
  owners: Container;
}

function checkedKeyId(keyId: string): string {
  if (!isId('apiKeyId', keyId))
    throw new UnsafeItemIdError('item id', keyId, 'not an API key id (12 letters and digits)');
  return keyId;
}

export function createCosmosApiKeyStore(containers: ApiKeyContainers): ApiKeyStore {
  return {
    async create(entry: UserApiKey, credential: ApiKeyCredential) {
      checkedKeyId(entry.keyId);
      const ttl = expiryTtl(entry.expiresAt, EXPIRED_GRACE_SECONDS, Date.now());
      await createItem(containers.owners, { ...entry, ...ttl }, 'an API key');
      await createItem(containers.credentials, { ...credential, ...ttl }, "an API key's credential");
    },

    async credential(keyId) {
      const id = checkedKeyId(keyId);
      const read = await readItem(
        containers.credentials,
        id,
        id,
        "an API key's credential",
        apiKeyCredentialSchema,
      );
      return read?.resource;
    },

    list(userId) {
      return queryItems(
        containers.owners,
        { query: 'SELECT * FROM c ORDER BY c.createdAt DESC' },
        userId,
        'API keys',
        userApiKeySchema,
      );
    },

    async entry(userId, keyId) {
      const read = await readItem(
        containers.owners,
        checkedKeyId(keyId),
        userId,
        'an API key',
        userApiKeySchema,
      );
      return read?.resource;
    },

    async revoke(userId, keyId) {
      const id = checkedKeyId(keyId);
      await deleteItem(containers.credentials, id, id, "an API key's credential");
      await deleteItem(containers.owners, id, userId, 'an API key');
    },

    async touch(userId, keyId, at) {
      await patchItem(
        containers.owners,
        checkedKeyId(keyId),
        userId,
        [{ op: 'set', path: '/lastUsedAt', value: at }],
        undefined,
        "an API key's last use",
      );
    },
  };
}
