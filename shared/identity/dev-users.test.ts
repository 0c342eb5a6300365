import { describe, expect, it } from 'vitest';
import { UnauthenticatedError } from '../errors.js';
import { createIdentityResolver } from './identity-resolver.js';
import { DEV_USERS } from './dev-users.js';

const resolver = createIdentityResolver({ mode: 'dev' });
const principalBlob = (claims: { typ: string; val: string }[]) =>
  Buffer.from(JSON.stringify({ auth_typ: 'aad', claims })).toString('base64');

describe('DEV_USERS', () => {
  it('holds the three users of the seed', () => {
    expect(DEV_USERS.map((user) => [user.userId, user.name, user.email])).toEqual([
      ['user_001', 'Alice Johnson', 'alice@example.com'],
      ['user_002', 'Bob Smith', 'bob@example.com'],
      ['user_003', 'Carol White', 'carol@example.com'],
    ]);
  });
});

describe('dev mode', () => {
  it.each(DEV_USERS.map((user) => [user.userId, user.name]))('identifies %s as %s', async (userId, name) => {
    await expect(resolver.resolve(new Headers({ 'x-ms-client-principal-id': userId }))).resolves.toEqual({
      userId,
      name,
      identityProvider: 'dev',
    });
  });

  it('says which header to send when there is none', async () => {
    const rejection = resolver.resolve(new Headers());
    await expect(rejection).rejects.toThrow(UnauthenticatedError);
    await expect(rejection).rejects.toThrow('x-ms-client-principal-id: user_001');
    await expect(rejection).rejects.toThrow(/user_002, user_003/);
  });

  it('treats an empty header as missing', async () => {
    await expect(resolver.resolve(new Headers({ 'x-ms-client-principal-id': '  ' }))).rejects.toThrow(
      'x-ms-client-principal-id: user_001',
    );
  });

  it('lists the dev users when the id is unknown', async () => {
    const rejection = resolver.resolve(new Headers({ 'x-ms-client-principal-id': 'user_004' }));
    await expect(rejection).rejects.toThrow(UnauthenticatedError);
    await expect(rejection).rejects.toThrow(
      /user_001 \(Alice Johnson\), user_002 \(Bob Smith\), user_003 \(Carol White\)/,
    );
  });

  it('accepts a principal blob that names a dev user', async () => {
    const headers = new Headers({
      'x-ms-client-principal': principalBlob([{ typ: 'oid', val: 'user_002' }]),
    });
    await expect(resolver.resolve(headers)).resolves.toEqual({
      userId: 'user_002',
      name: 'Bob Smith',
      identityProvider: 'dev',
    });
  });

  it("takes a dev user's groups from a principal blob, to try locally what a group grants", async () => {
    const headers = new Headers({
      'x-ms-client-principal': principalBlob([
        { typ: 'oid', val: 'user_002' },
        { typ: 'groups', val: 'librarians' },
      ]),
    });
    await expect(resolver.resolve(headers)).resolves.toEqual({
      userId: 'user_002',
      name: 'Bob Smith',
      identityProvider: 'dev',
      groups: ['librarians'],
    });
  });

  it('refuses a principal blob that contradicts the id header', async () => {
    const headers = new Headers({
      'x-ms-client-principal-id': 'user_001',
      'x-ms-client-principal': principalBlob([{ typ: 'oid', val: 'user_002' }]),
    });
    await expect(resolver.resolve(headers)).rejects.toThrow(/disagree/);
  });
});
