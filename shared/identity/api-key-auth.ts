// The port through which a personal API key identifies its owner: the identity resolver hands a bearer token with
// the key prefix to it, on routes that take keys; the api-keys area implements it and the composition root plugs it in.
import type { Caller } from './caller.js';

/** Every personal API key starts with this, so the resolver (and a secret scanner) can tell one at a glance. */
export const API_KEY_PREFIX = 'cmk_';

/** The identity provider of a caller a key stands for. */
export const API_KEY_PROVIDER = 'api-key';

export interface ApiKeyAuthenticator {
  /** The key's owner as a caller; throws UnauthenticatedError (401) or QuotaExceededError (429) saying why not. */
  authenticate(key: string): Promise<Caller>;
}

/** The bearer token of an Authorization header, when it is one with the key prefix. */
export function presentedApiKey(headers: Headers): string | undefined {
  const token = /^Bearer +(\S+)$/i.exec(headers.get('authorization')?.trim() ?? '')?.[1];
  return token?.startsWith(API_KEY_PREFIX) === true ? token : undefined;
}
