import { describe, expect, it } from 'vitest';
import { UnauthenticatedError } from '../errors.js';
import { createIdentityResolver } from './identity-resolver.js';

const OID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const OID_CLAIM = 'http://schemas.microsoft.com/identity/claims/objectidentifier';
const NAME_CLAIM = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name';

const resolver = createIdentityResolver({ mode: 'app-service' });
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
const principal = (claims: { typ: string; val: string }[]) =>
  encode({
    auth_typ: 'aad',
    name_typ: NAME_CLAIM,
    role_typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
    claims,
  });

async function expectUnauthenticated(headers: Record<string, string>, message: RegExp) {
  const rejection = resolver.resolve(new Headers(headers));
  await expect(rejection).rejects.toThrow(UnauthenticatedError);
  await expect(rejection).rejects.toThrow(message);
}

describe('app-service mode', () => {
  it('takes the caller from the principal id, name and idp headers beside the blob', async () => {
    const headers = new Headers({
      'x-ms-client-principal': principal([{ typ: OID_CLAIM, val: OID }]),
      'X-MS-CLIENT-PRINCIPAL-ID': OID,
      'x-ms-client-principal-name': 'alice@contoso.com',
      'x-ms-client-principal-idp': 'aad',
    });
    await expect(resolver.resolve(headers)).resolves.toEqual({
      userId: OID,
      name: 'alice@contoso.com',
      identityProvider: 'aad',
    });
  });

  it('takes the object id, name and provider from the principal blob when it comes alone', async () => {
    const headers = new Headers({
      'x-ms-client-principal': principal([
        { typ: NAME_CLAIM, val: 'Alice' },
        { typ: OID_CLAIM, val: OID },
      ]),
    });
    await expect(resolver.resolve(headers)).resolves.toEqual({
      userId: OID,
      name: 'Alice',
      identityProvider: 'aad',
    });
  });

  it("takes the caller's groups from the blob's group claims (one claim per group, either claim type)", async () => {
    const headers = new Headers({
      'x-ms-client-principal': principal([
        { typ: OID_CLAIM, val: OID },
        { typ: 'groups', val: 'librarians' },
        { typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups', val: 'editors' },
        { typ: 'groups', val: 'librarians' },
      ]),
    });
    await expect(resolver.resolve(headers)).resolves.toMatchObject({
      userId: OID,
      groups: ['librarians', 'editors'],
    });
    const without = await resolver.resolve(
      new Headers({ 'x-ms-client-principal': principal([{ typ: OID_CLAIM, val: OID }]) }),
    );
    expect(without).not.toHaveProperty('groups');
  });

  it('accepts the short oid claim type in the blob', async () => {
    const headers = new Headers({ 'x-ms-client-principal': principal([{ typ: 'oid', val: OID }]) });
    await expect(resolver.resolve(headers)).resolves.toMatchObject({ userId: OID, name: undefined });
  });

  it('accepts a blob and id header that agree, preferring the header name', async () => {
    const headers = new Headers({
      'x-ms-client-principal-id': OID,
      'x-ms-client-principal-name': 'alice@contoso.com',
      'x-ms-client-principal': principal([
        { typ: OID_CLAIM, val: OID },
        { typ: NAME_CLAIM, val: 'Alice' },
      ]),
    });
    await expect(resolver.resolve(headers)).resolves.toEqual({
      userId: OID,
      name: 'alice@contoso.com',
      identityProvider: 'aad',
    });
  });

  it('accepts a blob without an object id when the id header is present (non-Entra providers)', async () => {
    const headers = new Headers({
      'x-ms-client-principal-id': 'github-12345',
      'x-ms-client-principal-idp': 'github',
      'x-ms-client-principal': encode({ auth_typ: 'github', claims: [{ typ: 'login', val: 'alice' }] }),
    });
    await expect(resolver.resolve(headers)).resolves.toEqual({
      userId: 'github-12345',
      name: undefined,
      identityProvider: 'github',
    });
  });

  it('refuses a blob and id header that disagree', async () => {
    await expectUnauthenticated(
      {
        'x-ms-client-principal-id': OID,
        'x-ms-client-principal': principal([{ typ: OID_CLAIM, val: '11111111-2222-3333-4444-555555555555' }]),
      },
      /disagree/,
    );
  });

  it('refuses a request without principal headers, saying how to sign in', async () => {
    await expectUnauthenticated({}, /App Service authentication.*\/\.auth\/login/);
  });

  it('refuses a blob without an object id when the id header is missing', async () => {
    await expectUnauthenticated(
      { 'x-ms-client-principal': principal([{ typ: NAME_CLAIM, val: 'Alice' }]) },
      /no object id claim/,
    );
  });

  it.each([
    ['characters outside base64', '%%%not-base64%%%'],
    ['base64 that is not JSON', Buffer.from('not json').toString('base64')],
    ['JSON without claims', encode({ auth_typ: 'aad' })],
    ['claims of the wrong shape', encode({ claims: [{ typ: OID_CLAIM, val: 42 }] })],
    ['a JSON string', encode('principal')],
  ])('refuses a malformed blob: %s', async (_case, blob) => {
    await expectUnauthenticated(
      { 'x-ms-client-principal-id': OID, 'x-ms-client-principal': blob },
      /x-ms-client-principal header is malformed/,
    );
  });

  it('refuses the id header without the principal blob (a forged header is all an attacker can send)', async () => {
    await expectUnauthenticated(
      { 'x-ms-client-principal-id': OID, 'x-ms-client-principal-idp': 'aad' },
      /without the x-ms-client-principal header.*not trusted/,
    );
  });

  it('does not require a dev user', async () => {
    await expect(
      resolver.resolve(
        new Headers({
          'x-ms-client-principal-id': 'user_999',
          'x-ms-client-principal': encode({ claims: [{ typ: 'login', val: 'user_999' }] }),
        }),
      ),
    ).resolves.toMatchObject({ userId: 'user_999', identityProvider: 'unknown' });
  });
});
