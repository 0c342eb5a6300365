// Access tokens as the service checks them: HS256 JWTs signed with the access key (what the SDK's key
// credential and getClientAccessToken produce), audience bound to the URL they were made for, exp/nbf enforced.
import { errors, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import { UnauthorizedError } from './rest-errors.js';

/** What a client token says about the connection it opens: who it is, what it may do, which groups it joins. */
export interface ClientClaims {
  userId: string | undefined;
  /** The `role` claim: e.g. `webpubsub.joinLeaveGroup` or `webpubsub.joinLeaveGroup.<group>`. */
  roles: string[];
  /** The `webpubsub.group` claim: groups the connection joins as it opens. */
  groups: string[];
}

// The SDK writes these claims as arrays; a single string is read as a list of one, as the service does.
const listClaim = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((value) => (value === undefined ? [] : ([] as string[]).concat(value)));

/** Service tokens remembered once verified (the app reuses one per URL while it is valid): the oldest goes first. */
const MAX_VERIFIED_SERVICE_TOKENS = 10_000;

// Small allowance for clock skew between the app and this service (same host locally, but tokens cross processes).
const clockToleranceSeconds = 5;

export class AccessTokens {
  private readonly key: Uint8Array;
  /** A verified service token → the audience it was verified for and its expiry (epoch seconds). */
  private readonly verifiedServiceTokens = new Map<string, { audience: string; exp: number }>();

  constructor(accessKey: string) {
    // jsonwebtoken (used by the SDK) signs with the UTF-8 bytes of the key string.
    this.key = new TextEncoder().encode(accessKey);
  }

  /** Checks a REST bearer token; the SDK signs each request with its own URL as audience. */
  async verifyServiceToken(token: string, audiences: readonly string[]): Promise<void> {
    // A token seen before is not verified again while it is valid, for the URL it was verified for only.
    const known = this.verifiedServiceTokens.get(token);
    if (known && known.exp + clockToleranceSeconds > Date.now() / 1000 && audiences.includes(known.audience))
      return;
    const payload = await this.verify(token, audiences);
    const audience = [payload.aud ?? []].flat().find((candidate) => audiences.includes(candidate));
    if (audience === undefined || payload.exp === undefined) return;
    if (this.verifiedServiceTokens.size >= MAX_VERIFIED_SERVICE_TOKENS)
      this.verifiedServiceTokens.delete(this.verifiedServiceTokens.keys().next().value!);
    this.verifiedServiceTokens.set(token, { audience, exp: payload.exp });
  }

  async verifyClientToken(token: string, audiences: readonly string[]): Promise<ClientClaims> {
    const payload = await this.verify(token, audiences);
    const roles = listClaim.safeParse(payload['role']);
    const groups = listClaim.safeParse(payload['webpubsub.group']);
    if (!roles.success || !groups.success)
      throw new UnauthorizedError(
        "The access token's 'role' and 'webpubsub.group' claims must be string arrays.",
      );
    return {
      userId: typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : undefined,
      roles: roles.data,
      groups: groups.data.filter((group) => group !== ''),
    };
  }

  private async verify(token: string, audiences: readonly string[]): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        audience: [...audiences],
        clockTolerance: clockToleranceSeconds,
        requiredClaims: ['exp'],
      });
      return payload;
    } catch (error) {
      throw new UnauthorizedError(describeTokenFailure(error, audiences));
    }
  }
}

function describeTokenFailure(error: unknown, audiences: readonly string[]): string {
  if (error instanceof errors.JWTExpired) return 'The access token has expired.';
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'The access token signature is not valid for this access key.';
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return `The access token audience must be '${audiences[0] ?? ''}'.`;
    if (error.claim === 'nbf') return 'The access token is not valid yet (nbf).';
    return `The access token claim '${error.claim}' is not valid: ${error.message}`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The access token must be signed with HS256.';
  return 'The access token is malformed.';
}
