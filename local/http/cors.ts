// CORS as the Function App applies it in Azure (infra: corsAllowedOrigins → siteConfig.cors), for the local
// runtime's function routes: a preflight from an allowed origin is answered by the host itself, and every
// answer to an allowed origin, streams included, carries the headers that let the page read it.

/** What the app reads from a request besides the body: the identity headers of each auth mode, and SSE resume. */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  'authorization',
  'content-type',
  'last-event-id',
  'x-ms-client-principal',
  'x-ms-client-principal-id',
  'x-ms-client-principal-idp',
  'x-ms-client-principal-name',
];

/** Headers a page may read besides the CORS-safelisted ones: where a 202's stream is, and when to retry. */
export const CORS_EXPOSED_HEADERS: readonly string[] = ['location', 'retry-after'];

/** How long a browser may reuse a preflight's answer (seconds). */
export const CORS_MAX_AGE_SECONDS = 600;

export interface CorsPolicy {
  /** Whether the origin may call; false without an Origin header (not a cross-origin request). */
  allows(origin: string | undefined): boolean;
  /** Headers for an answer to `origin`: CORS headers when it is allowed, and `Vary: Origin` whenever CORS is on. */
  responseHeaders(origin: string | undefined): Record<string, string>;
  /** Headers of a preflight's 204 for an allowed origin, for a route that takes these methods. */
  preflightHeaders(origin: string, methods: readonly string[]): Record<string, string>;
}

/** `allowedOrigins`: exact origins (scheme://host[:port]) or '*' for any; empty turns CORS off. */
export function createCorsPolicy(allowedOrigins: readonly string[]): CorsPolicy {
  const anyOrigin = allowedOrigins.includes('*');
  const origins = new Set(allowedOrigins.map(normalizeOrigin));
  const enabled = anyOrigin || origins.size > 0;
  const allows = (origin: string | undefined) =>
    origin !== undefined && (anyOrigin || origins.has(normalizeOrigin(origin)));
  return {
    allows,
    responseHeaders(origin): Record<string, string> {
      if (!enabled) return {};
      if (!allows(origin)) return { vary: 'Origin' };
      return {
        'access-control-allow-origin': anyOrigin ? '*' : (origin as string),
        'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '),
        vary: 'Origin',
      };
    },
    preflightHeaders(origin, methods) {
      return {
        'access-control-allow-origin': anyOrigin ? '*' : origin,
        'access-control-allow-methods': [...new Set([...methods, 'OPTIONS'])].join(', '),
        'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
        'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
        vary: 'Origin',
      };
    },
  };
}

/** Origins compare by scheme, host and port, case-insensitively; a trailing slash is not part of one. */
function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

/** Parses CORS_ALLOWED_ORIGINS's text: comma-separated origins, or '*'; empty = none. */
export function parseCorsOrigins(text: string): string[] {
  return text
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}
