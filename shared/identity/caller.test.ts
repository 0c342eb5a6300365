import { describe, expect, it } from 'vitest';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import { assertOwnUser } from './caller.js';
import { createIdentityResolver } from './identity-resolver.js';
import type { Caller } from './caller.js';

const alice: Caller = { userId: 'user_001', name: 'Alice Johnson', identityProvider: 'dev' };

describe('assertOwnUser', () => {
  it.each([undefined, null, ''])('accepts a request that names no user (%j)', (userId) => {
    expect(() => assertOwnUser(alice, userId)).not.toThrow();
  });

  it("accepts the caller's own user id", () => {
    expect(() => assertOwnUser(alice, 'user_001')).not.toThrow();
  });

  it("refuses another user's id with 403", () => {
    const refuse = () => assertOwnUser(alice, 'user_002');
    expect(refuse).toThrow(ForbiddenError);
    expect(refuse).toThrow(/belongs to another user/);
  });

  it('compares ids exactly', () => {
    expect(() => assertOwnUser(alice, 'USER_001')).toThrow(ForbiddenError);
  });
});

describe('createIdentityResolver: user id safety', () => {
  const resolver = createIdentityResolver({ mode: 'app-service' });
  // A blob without an object id (another provider's), so the id comes from the header being checked.
  const blob = Buffer.from(JSON.stringify({ claims: [{ typ: 'login', val: 'someone' }] })).toString('base64');
  const resolveId = (id: string) =>
    resolver.resolve(new Headers({ 'x-ms-client-principal-id': id, 'x-ms-client-principal': blob }));

  it.each([
    'user/001',
    '../user_001',
    '.hidden',
    '-dash',
    'user 001',
    "user'001",
    'a'.repeat(129),
    'user\t001',
  ])('refuses the unsafe user id %j with 401', async (id) => {
    const rejection = resolveId(id);
    await expect(rejection).rejects.toThrow(UnauthenticatedError);
    await expect(rejection).rejects.toThrow(/letters, digits/);
  });

  it.each(['user_001', 'a', 'a'.repeat(128), 'alice@example.com', '0f8fad5b-d9cb-469f-a165-70867728950e'])(
    'accepts the safe user id %j',
    async (id) => {
      await expect(resolveId(id)).resolves.toMatchObject({ userId: id });
    },
  );

  it('refuses an unsafe object id carried in the principal blob', async () => {
    const blob = Buffer.from(JSON.stringify({ claims: [{ typ: 'oid', val: 'ユーザー' }] })).toString(
      'base64',
    );
    await expect(resolver.resolve(new Headers({ 'x-ms-client-principal': blob }))).rejects.toThrow(
      UnauthenticatedError,
    );
  });
});
