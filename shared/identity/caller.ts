// Who is calling: the Caller every HTTP handler works for, the resolver interface that derives it from the
// request headers, and the ownership check for user ids named in a request.
import { ForbiddenError } from '../errors.js';

export interface Caller {
  userId: string;
  name?: string | undefined;
  /** 'aad', 'dev', ... */
  identityProvider: string;
  /**
   * The groups the identity names (Entra ID group object ids, from the token's or the principal's `groups`
   * claims); absent when it names none. Only what the identity carries: a user in more groups than a token holds
   * (Entra ID's group overage) shows none here.
   */
  groups?: string[];
}

/** Which credentials a route takes beyond the deployment's sign-in. */
export interface ResolveOptions {
  /** The route also takes a personal API key (`Authorization: Bearer <key>`), which acts as its owner. */
  apiKeys?: boolean;
}

export interface IdentityResolver {
  /** Throws UnauthenticatedError (401) saying what is missing or wrong. */
  resolve(headers: Headers, options?: ResolveOptions): Promise<Caller>;
}

export interface IdentityResolverOptions {
  /** Fetches the Entra ID signing keys (default: the global fetch). */
  fetch?: typeof fetch;
  /** Clock against which token lifetimes are checked (default: the system clock). */
  now?: () => Date;
}

/** Throws ForbiddenError when a userId named in a path, query or body is given and is not the caller's. */
export function assertOwnUser(caller: Caller, userId: string | undefined | null): void {
  if (userId === undefined || userId === null || userId === '' || userId === caller.userId) return;
  throw new ForbiddenError('This userId belongs to another user: a caller can reach only their own data.');
}
