// An in-memory ApiKeyStore for unit tests of the verifier and the key endpoints: the same two records as the Cosmos
// DB adapter keeps (a credential per key id, an entry per owner), and a count of credential reads.
import type { ApiKeyStore } from '../../shared/api-keys/api-key-store.js';
import type { ApiKeyCredential, UserApiKey } from '../../shared/api-keys/contracts.js';

export class MemoryApiKeyStore implements ApiKeyStore {
  readonly credentials = new Map<string, ApiKeyCredential>();
  readonly entries = new Map<string, UserApiKey>();
  credentialReads = 0;
  touches: { keyId: string; at: string }[] = [];

  create(entry: UserApiKey, credential: ApiKeyCredential): Promise<void> {
    this.entries.set(`${entry.userId}/${entry.keyId}`, structuredClone(entry));
    this.credentials.set(credential.keyId, structuredClone(credential));
    return Promise.resolve();
  }

  credential(keyId: string): Promise<ApiKeyCredential | undefined> {
    this.credentialReads += 1;
    const found = this.credentials.get(keyId);
    return Promise.resolve(found === undefined ? undefined : structuredClone(found));
  }

  list(userId: string): Promise<UserApiKey[]> {
    const own = [...this.entries.values()].filter((entry) => entry.userId === userId);
    return Promise.resolve(
      own.sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((e) => structuredClone(e)),
    );
  }

  entry(userId: string, keyId: string): Promise<UserApiKey | undefined> {
    const found = this.entries.get(`${userId}/${keyId}`);
    return Promise.resolve(found === undefined ? undefined : structuredClone(found));
  }

  revoke(userId: string, keyId: string): Promise<void> {
    this.credentials.delete(keyId);
    this.entries.delete(`${userId}/${keyId}`);
    return Promise.resolve();
  }

  touch(userId: string, keyId: string, at: string): Promise<void> {
    const entry = this.entries.get(`${userId}/${keyId}`);
    if (entry !== undefined) entry.lastUsedAt = at;
    this.touches.push({ keyId, at });
    return Promise.resolve();
  }
}
