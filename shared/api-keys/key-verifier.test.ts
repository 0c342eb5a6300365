// The verifier over an in-memory store and a clock the test moves: a key works as its owner, a revoked one stops
// within the cache time, an expired one is refused, and guesses cost bounded reads while known keys keep working.
import { describe, expect, it } from 'vitest';
import { MemoryApiKeyStore } from '../../test/support/in-memory-api-keys.js';
import { QuotaExceededError, UnauthenticatedError } from '../errors.js';
import { createApiKey, revokeApiKey, type ApiKeyServices } from './api-keys.js';
import { mintApiKey } from './key-format.js';
import { ApiKeyVerifier } from './key-verifier.js';

const alice = { userId: 'user_001', identityProvider: 'dev' };

function setup(options: { lookups?: { burst: number; perSecond: number } } = {}) {
  let now = Date.parse('2026-12-01T10:00:00Z');
  const clock = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  const store = new MemoryApiKeyStore();
  const verifier = new ApiKeyVerifier(store, { cacheMs: 5_000, now: clock.now, ...options });
  const services: ApiKeyServices = {
    store,
    config: { enabled: true, maxPerUser: 3, cacheMs: 5_000 },
    forget: (keyId) => verifier.forget(keyId),
    now: clock.now,
  };
  return { clock, store, verifier, services };
}

/** A well-formed key (its checksum holds) that was never created. */
const guess = () => mintApiKey().key;

describe('ApiKeyVerifier', () => {
  it("gives the key's owner and nobody else, with the api-key provider and no groups", async () => {
    const { verifier, services } = setup();
    const created = await createApiKey(services, alice, { name: 'laptop' });
    const caller = await verifier.authenticate(created.key);
    expect(caller).toEqual({ userId: 'user_001', identityProvider: 'api-key' });
  });

  it('reads a checked key once per cache time, and refuses it within that time of its revocation elsewhere', async () => {
    const { verifier, services, store, clock } = setup();
    const { key, id } = await createApiKey(services, alice, { name: 'laptop' });
    for (let n = 0; n < 20; n += 1) await verifier.authenticate(key);
    expect(store.credentialReads).toBe(1);
    // Revoked through another instance's services: this verifier is not told.
    const other = { ...services, forget: () => undefined };
    await revokeApiKey(other, alice, id);
    clock.advance(5_001);
    await expect(verifier.authenticate(key)).rejects.toThrow(/revoked, or never existed/);
  });

  it('forgets a key at once on the instance that revokes it', async () => {
    const { verifier, services } = setup();
    const { key, id } = await createApiKey(services, alice, { name: 'laptop' });
    await verifier.authenticate(key);
    await revokeApiKey(services, alice, id);
    await expect(verifier.authenticate(key)).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('refuses an expired key, also one it had cached', async () => {
    const { verifier, services, clock } = setup();
    const expiresAt = new Date(clock.now() + 60_000).toISOString();
    const { key } = await createApiKey(services, alice, { name: 'short', expiresAt });
    await expect(verifier.authenticate(key)).resolves.toMatchObject({ userId: 'user_001' });
    clock.advance(60_000);
    await expect(verifier.authenticate(key)).rejects.toThrow(/expired/);
  });

  it('refuses a wrong secret with a right id without another read', async () => {
    const { verifier, services, store } = setup();
    const { key } = await createApiKey(services, alice, { name: 'laptop' });
    await verifier.authenticate(key);
    const forged = mintApiKey().key.replace(/^cmk_.{12}/, key.slice(0, 16));
    await expect(verifier.authenticate(forged)).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(store.credentialReads).toBe(1);
  });

  it('reads nothing for a malformed key', async () => {
    const { verifier, store } = setup();
    const key = guess();
    await expect(
      verifier.authenticate(`${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`),
    ).rejects.toThrow(/malformed/);
    expect(store.credentialReads).toBe(0);
  });

  it('bounds the reads a burst of guesses causes, and a key that worked here keeps working', async () => {
    const { verifier, services, store, clock } = setup({ lookups: { burst: 10, perSecond: 5 } });
    const { key } = await createApiKey(services, alice, { name: 'laptop' });
    await verifier.authenticate(key);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 1_000 }, () => verifier.authenticate(guess())),
    );
    const rateLimited = outcomes.filter(
      (outcome) => outcome.status === 'rejected' && outcome.reason instanceof QuotaExceededError,
    );
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    // One read for the real key, nine guesses within the burst that remained: the rest were refused unread.
    expect(store.credentialReads).toBeLessThanOrEqual(11);
    expect(rateLimited.length).toBeGreaterThanOrEqual(989);
    // Past its cache time the known key is read again, outside the exhausted budget.
    clock.advance(5_001);
    await expect(verifier.authenticate(key)).resolves.toMatchObject({ userId: 'user_001' });
    // A second later the budget has refilled by its rate.
    clock.advance(1_000);
    await expect(verifier.authenticate(guess())).rejects.toThrow(/revoked, or never existed/);
  });

  it('remembers a guess it read as unknown for the cache time', async () => {
    const { verifier, store } = setup();
    const key = guess();
    for (let n = 0; n < 5; n += 1) await expect(verifier.authenticate(key)).rejects.toThrow(/never existed/);
    expect(store.credentialReads).toBe(1);
  });

  it('writes the last use at most every few minutes', async () => {
    const { verifier, services, store, clock } = setup();
    const { key, id } = await createApiKey(services, alice, { name: 'laptop' });
    for (let n = 0; n <= 30; n += 1) {
      await verifier.authenticate(key);
      clock.advance(10_000);
    }
    // A use every 10 s for five minutes: written at the first use, then once five minutes later.
    expect(store.touches.map((touch) => touch.keyId)).toEqual([id, id]);
    expect((await store.entry('user_001', id))?.lastUsedAt).toBe(store.touches[1]?.at);
  });
});
