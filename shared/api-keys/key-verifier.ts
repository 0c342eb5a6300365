// Checks a presented key for the identity resolver, cheaply under load: the checksum first (a malformed key costs
// no read), then this instance's caches, then one point read. A key checked is trusted for `cacheMs` (the stated
// revocation time); lookups of keys this instance has not seen work are budgeted, so a burst of guesses costs bounded reads.
import { QuotaExceededError, UnauthenticatedError } from '../errors.js';
import { API_KEY_PROVIDER, type ApiKeyAuthenticator } from '../identity/api-key-auth.js';
import type { Caller } from '../identity/caller.js';
import type { ApiKeyStore } from './api-key-store.js';
import type { ApiKeyCredential } from './contracts.js';
import { keyMatchesHash, parseApiKey } from './key-format.js';

export interface KeyVerifierOptions {
  /** How long a checked key (or a key found missing) is trusted before it is read again. */
  cacheMs: number;
  /** Lookups of keys this instance has not seen work: at most `burst` at once, refilled at `perSecond`. */
  lookups?: { burst: number; perSecond: number };
  /** A key's last use is written at most this often per instance. */
  lastUsedEveryMs?: number;
  /** Entries each cache keeps at most (the oldest go first). */
  maxEntries?: number;
  now?: () => number;
}

export const DEFAULT_LOOKUPS = { burst: 50, perSecond: 20 } as const;
const DEFAULT_LAST_USED_EVERY_MS = 5 * 60_000;
/** A key that worked here in this time is looked up outside the budget: a burst of guesses does not lock it out. */
const KNOWN_KEY_MS = 24 * 3_600_000;

const INVALID =
  'The API key is not valid: it was revoked, or never existed. Create a new one in the settings.';

interface Cached {
  credential: ApiKeyCredential | undefined;
  until: number;
}

export class ApiKeyVerifier implements ApiKeyAuthenticator {
  private readonly checked = new Map<string, Cached>();
  private readonly known = new Map<string, number>();
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly reading = new Map<string, Promise<ApiKeyCredential | undefined>>();
  private readonly now: () => number;
  private readonly lookups: { burst: number; perSecond: number };
  private readonly maxEntries: number;
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly store: ApiKeyStore,
    private readonly options: KeyVerifierOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.lookups = options.lookups ?? DEFAULT_LOOKUPS;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.tokens = this.lookups.burst;
    this.refilledAt = this.now();
  }

  async authenticate(key: string): Promise<Caller> {
    const parsed = parseApiKey(key);
    if (parsed === undefined)
      throw new UnauthenticatedError(
        'The API key is malformed (a wrong character or a missing part): copy the whole key, starting with cmk_.',
      );
    const credential = await this.credentialOf(parsed.keyId);
    if (credential === undefined || !keyMatchesHash(key, credential.keyHash))
      throw new UnauthenticatedError(INVALID);
    const now = this.now();
    if (credential.expiresAt !== null && Date.parse(credential.expiresAt) <= now)
      throw new UnauthenticatedError(
        `The API key expired at ${credential.expiresAt}. Create a new one in the settings.`,
      );
    remember(this.known, credential.keyId, now, this.maxEntries);
    this.noteUse(credential, now);
    return { userId: credential.userId, identityProvider: API_KEY_PROVIDER };
  }

  /** Forgets a key at once on this instance (its owner revoked it here); others forget it within `cacheMs`. */
  forget(keyId: string): void {
    this.checked.delete(keyId);
    this.known.delete(keyId);
  }

  private async credentialOf(keyId: string): Promise<ApiKeyCredential | undefined> {
    const now = this.now();
    const cached = this.checked.get(keyId);
    if (cached !== undefined && cached.until > now) return cached.credential;
    // Concurrent requests with one key share one read.
    const pending = this.reading.get(keyId);
    if (pending !== undefined) return pending;
    const workedAt = this.known.get(keyId);
    if (workedAt === undefined || workedAt + KNOWN_KEY_MS <= now) this.takeLookup(now);
    const read = this.read(keyId).finally(() => this.reading.delete(keyId));
    this.reading.set(keyId, read);
    return read;
  }

  private async read(keyId: string): Promise<ApiKeyCredential | undefined> {
    const credential = await this.store.credential(keyId);
    remember(this.checked, keyId, { credential, until: this.now() + this.options.cacheMs }, this.maxEntries);
    return credential;
  }

  /** A token of the lookup budget, or 429: a burst of unknown keys is refused rather than read. */
  private takeLookup(now: number): void {
    const elapsed = Math.max(0, now - this.refilledAt) / 1000;
    this.tokens = Math.min(this.lookups.burst, this.tokens + elapsed * this.lookups.perSecond);
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return;
    }
    throw new QuotaExceededError(
      'Too many checks of unknown API keys on this instance just now; try again in a second.',
      'api_key_lookups',
      this.lookups.perSecond,
      this.lookups.perSecond,
      1,
    );
  }

  /** Writes the key's last use when this instance has not for a while; a failure only delays it. */
  private noteUse(credential: ApiKeyCredential, now: number): void {
    const last = this.lastUsedWrites.get(credential.keyId);
    if (last !== undefined && now - last < (this.options.lastUsedEveryMs ?? DEFAULT_LAST_USED_EVERY_MS))
      return;
    remember(this.lastUsedWrites, credential.keyId, now, this.maxEntries);
    this.store
      .touch(credential.userId, credential.keyId, new Date(now).toISOString())
      .catch(() => this.lastUsedWrites.delete(credential.keyId));
  }
}

/** Sets the entry as the newest, dropping the oldest when the map is full. */
function remember<T>(map: Map<string, T>, key: string, value: T, maxEntries: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > maxEntries) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}
