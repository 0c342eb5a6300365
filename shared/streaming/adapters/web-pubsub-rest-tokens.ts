// REST calls of a Web PubSub client that uses an access key, signed once per URL while the token is valid: the SDK
// signs a fresh JWT for every call (its audience is the request's URL, query included), and a turn makes several
// calls to its session group's one URL. A client with an Azure credential is left as it is.
import { SignJWT } from 'jose';
import type { WebPubSubServiceClient } from '@azure/web-pubsub';

/** The SDK's own key policy, which this one replaces. */
const SDK_KEY_POLICY = 'webPubSubKeyCredentialPolicy';
const TOKEN_SECONDS = 60 * 60;
/** A token is not handed out in its last minutes, so it cannot expire between the call and the service's check. */
const RENEW_BEFORE_EXPIRY_SECONDS = 5 * 60;
/** URLs remembered at most (one per session group in use): the oldest goes first. */
const MAX_AUDIENCES = 10_000;

interface PipelineRequest {
  url: string;
  headers: { set(name: string, value: string): void };
}

interface PipelinePolicy {
  name: string;
  sendRequest(
    request: PipelineRequest,
    next: (request: PipelineRequest) => Promise<unknown>,
  ): Promise<unknown>;
}

interface Pipeline {
  removePolicy(options: { name: string }): unknown[];
  addPolicy(policy: PipelinePolicy): void;
}

export interface RestTokenOptions {
  /** Epoch ms (tests move it forward). */
  now?: () => number;
  /** Counts each token signed (tests). */
  onSign?: (audience: string) => void;
}

/**
 * Replaces the client's per-call signing with tokens cached per URL. Returns false, changing nothing, when the
 * client's pipeline is not the one expected (another SDK version): the SDK then goes on signing each call.
 */
export function cacheWebPubSubRestTokens(
  client: WebPubSubServiceClient,
  accessKey: string,
  options: RestTokenOptions = {},
): boolean {
  // The SDK keeps its pipeline private; removePolicy and addPolicy are the pipeline's public API.
  const pipeline = (client as unknown as { client?: { pipeline?: Partial<Pipeline> } }).client?.pipeline;
  if (typeof pipeline?.removePolicy !== 'function' || typeof pipeline.addPolicy !== 'function') return false;
  if (pipeline.removePolicy({ name: SDK_KEY_POLICY }).length !== 1) return false;
  pipeline.addPolicy(cachedKeyPolicy(accessKey, options));
  return true;
}

/** The AccessKey of a Web PubSub connection string (`Endpoint=...;AccessKey=...;Version=1.0;`), if it has one. */
export function accessKeyOf(connectionString: string): string | undefined {
  for (const part of connectionString.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim().toLowerCase() === 'accesskey') return part.slice(at + 1);
  }
  return undefined;
}

export function cachedKeyPolicy(accessKey: string, options: RestTokenOptions = {}): PipelinePolicy {
  const now = options.now ?? Date.now;
  // As the SDK's jsonwebtoken does: the key string's UTF-8 bytes are the HMAC key.
  const key = new TextEncoder().encode(accessKey);
  const tokens = new Map<string, { token: Promise<string>; expiresAt: number }>();
  const tokenFor = (audience: string): Promise<string> => {
    const seconds = Math.floor(now() / 1000);
    const cached = tokens.get(audience);
    if (cached && cached.expiresAt - RENEW_BEFORE_EXPIRY_SECONDS > seconds) return cached.token;
    tokens.delete(audience);
    if (tokens.size >= MAX_AUDIENCES) tokens.delete(tokens.keys().next().value!);
    options.onSign?.(audience);
    const expiresAt = seconds + TOKEN_SECONDS;
    const token = new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setAudience(audience)
      .setIssuedAt(seconds)
      .setExpirationTime(expiresAt)
      .sign(key);
    // A failed signing is not kept: the next call tries again.
    token.catch(() => tokens.delete(audience));
    tokens.set(audience, { token, expiresAt });
    return token;
  };
  return {
    name: 'webPubSubCachedKeyPolicy',
    async sendRequest(request, next) {
      request.headers.set('Authorization', `Bearer ${await tokenFor(request.url)}`);
      return next(request);
    },
  };
}
