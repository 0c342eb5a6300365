// The caller as App Service authentication (Easy Auth) presents it: the x-ms-client-principal-id, -name
// and -idp headers and the x-ms-client-principal blob (base64 JSON with the claims). The blob, set by the platform on
// every authenticated request, is required; it is unsigned, so the platform's stripping of client headers is the trust.
import { z } from 'zod';
import { UnauthenticatedError } from '../errors.js';
import type { Caller } from './caller.js';

export interface AppServicePrincipal {
  userId?: string | undefined;
  name?: string | undefined;
  identityProvider?: string | undefined;
  /** The blob's group claims (one claim per group), in order; empty when it has none. */
  groups: string[];
}

const OBJECT_ID_CLAIMS = ['http://schemas.microsoft.com/identity/claims/objectidentifier', 'oid'];
const GROUP_CLAIMS = ['groups', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'];
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

const principalBlob = z.object({
  auth_typ: z.string().optional(),
  name_typ: z.string().optional(),
  role_typ: z.string().optional(),
  claims: z.array(z.object({ typ: z.string(), val: z.string() })),
});
type PrincipalBlob = z.infer<typeof principalBlob>;

export function resolveAppServiceCaller(headers: Headers): Caller {
  // App Service documents that it strips client-sent principal headers; for Flex Consumption, where authentication
  // runs inside the Functions host, nothing says so. So the id header is trusted only beside the blob it must
  // agree with (readAppServicePrincipal), never on its own.
  if (headerValue(headers, 'x-ms-client-principal') === undefined)
    throw new UnauthenticatedError(
      headerValue(headers, 'x-ms-client-principal-id') === undefined
        ? 'No App Service authentication principal: sign in through /.auth/login, or check that authentication ' +
            'is on and requires sign-in for this app.'
        : 'x-ms-client-principal-id came without the x-ms-client-principal header that App Service ' +
            'authentication sets beside it: the id alone is not trusted.',
    );
  const principal = readAppServicePrincipal(headers);
  if (principal.userId === undefined)
    throw new UnauthenticatedError(
      'No App Service authentication principal: sign in through /.auth/login, or check that authentication ' +
        'is on and requires sign-in for this app.',
    );
  return {
    userId: principal.userId,
    name: principal.name,
    identityProvider: principal.identityProvider ?? 'unknown',
    ...(principal.groups.length > 0 ? { groups: principal.groups } : {}),
  };
}

/** Reads the principal headers; throws UnauthenticatedError when they are malformed or contradict each other. */
export function readAppServicePrincipal(headers: Headers): AppServicePrincipal {
  const headerId = headerValue(headers, 'x-ms-client-principal-id');
  const encoded = headerValue(headers, 'x-ms-client-principal');
  const blob = encoded === undefined ? undefined : decodePrincipal(encoded);
  const blobId = blob && claimValue(blob, OBJECT_ID_CLAIMS);
  if (blob !== undefined && headerId === undefined && blobId === undefined)
    throw new UnauthenticatedError(
      'The x-ms-client-principal header has no object id claim (oid) and x-ms-client-principal-id is missing.',
    );
  if (headerId !== undefined && blobId !== undefined && headerId !== blobId)
    throw new UnauthenticatedError(
      'The principal headers disagree: x-ms-client-principal-id is not the object id in x-ms-client-principal.',
    );
  return {
    userId: headerId ?? blobId,
    name:
      headerValue(headers, 'x-ms-client-principal-name') ??
      (blob?.name_typ === undefined ? undefined : claimValue(blob, [blob.name_typ])),
    identityProvider: headerValue(headers, 'x-ms-client-principal-idp') ?? blob?.auth_typ,
    groups: blob === undefined ? [] : claimValues(blob, GROUP_CLAIMS),
  };
}

function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers.get(name)?.trim();
  return value === '' ? undefined : value;
}

function decodePrincipal(encoded: string): PrincipalBlob {
  const malformed = () =>
    new UnauthenticatedError('The x-ms-client-principal header is malformed: expected base64-encoded JSON.');
  if (!BASE64.test(encoded)) throw malformed();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw malformed();
  }
  const parsed = principalBlob.safeParse(json);
  if (!parsed.success) throw malformed();
  return parsed.data;
}

function claimValues(blob: PrincipalBlob, types: readonly string[]): string[] {
  const values = blob.claims.filter((claim) => types.includes(claim.typ)).map((claim) => claim.val.trim());
  return [...new Set(values.filter((value) => value !== ''))];
}

function claimValue(blob: PrincipalBlob, types: readonly string[]): string | undefined {
  const value = blob.claims.find((claim) => types.includes(claim.typ))?.val.trim();
  return value === '' ? undefined : value;
}
