// The port of personal API keys: each key's credential under its id, and each owner's list. Adapter:
// adapters/cosmos-api-key-store.ts. Every keyId has been checked against its closed format (ids.ts).
import type { ApiKeyCredential, UserApiKey } from './contracts.js';

export interface ApiKeyStore {
  /**
   * Stores a new key: the owner's list entry first (so a key that works is always one its owner can see and revoke),
   * then the credential, which makes the key work. Items of a key with an expiry expire some time after it.
   */
  create(entry: UserApiKey, credential: ApiKeyCredential): Promise<void>;
  /** The credential a key is checked against: one point read; undefined when there is none. */
  credential(keyId: string): Promise<ApiKeyCredential | undefined>;
  /** The owner's keys, newest first: one single-partition query. */
  list(userId: string): Promise<UserApiKey[]>;
  /** The owner's entry of a key; undefined for another user's key, as for none. */
  entry(userId: string, keyId: string): Promise<UserApiKey | undefined>;
  /** Revokes: the credential goes first (the key stops working), then the owner's entry. Harmless when gone. */
  revoke(userId: string, keyId: string): Promise<void>;
  /** Records when the key was last used, on the owner's entry (called at most every few minutes per key). */
  touch(userId: string, keyId: string, at: string): Promise<void>;
}
