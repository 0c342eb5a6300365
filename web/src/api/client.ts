// The page's HTTP client: every call carries the identity's headers, and a problem+json answer becomes an
// ApiError with the fields the views show (the detail, the stable code, when to retry).
import type { Identity } from '../auth/identity';

export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly code: string | undefined;
  /** Seconds to wait before retrying, from Retry-After (or the problem's retryAfterSeconds), when the server said. */
  readonly retryAfter: number | undefined;
  readonly problem: Readonly<Record<string, unknown>>;

  constructor(init: {
    status: number;
    detail: string;
    code?: string | undefined;
    retryAfter?: number | undefined;
    problem?: Record<string, unknown>;
  }) {
    super(init.detail);
    this.name = 'ApiError';
    this.status = init.status;
    this.detail = init.detail;
    this.code = init.code;
    this.retryAfter = init.retryAfter;
    this.problem = init.problem ?? {};
  }
}

function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The ApiError of a failed answer, from its status, body text and Retry-After header (fetch and XMLHttpRequest
 * alike). The body's retryAfterSeconds stands in when the header is absent or unreadable (a page on another origin
 * sees only the headers CORS exposes).
 */
export function apiErrorOf(answer: {
  status: number;
  statusText: string;
  text: string;
  retryAfter: string | null;
}): ApiError {
  let problem: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(answer.text);
    if (typeof parsed === 'object' && parsed !== null) problem = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page, say): the status text stands in for the detail.
  }
  const detail =
    typeof problem['detail'] === 'string'
      ? problem['detail']
      : typeof problem['title'] === 'string'
        ? problem['title']
        : `${answer.status} ${answer.statusText || 'request failed'}`;
  const fromBody = problem['retryAfterSeconds'];
  return new ApiError({
    status: answer.status,
    detail,
    code: typeof problem['code'] === 'string' ? problem['code'] : undefined,
    retryAfter:
      parseRetryAfter(answer.retryAfter, Date.now()) ??
      (typeof fromBody === 'number' && Number.isFinite(fromBody)
        ? Math.max(0, Math.ceil(fromBody))
        : undefined),
    problem,
  });
}

/** Turns a failed response into an ApiError, reading problem+json when the server sent it. */
export async function toApiError(response: Response): Promise<ApiError> {
  return apiErrorOf({
    status: response.status,
    statusText: response.statusText,
    text: await response.text().catch(() => ''),
    retryAfter: response.headers.get('retry-after'),
  });
}

export interface ApiClient {
  readonly userId: string;
  /** A raw call: the identity's headers added, a non-2xx answer thrown as ApiError. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** A JSON call: the body is serialised when given, the answer parsed (undefined for 204). */
  json<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** `base` is where /api lives: '' (same origin) unless the page is hosted apart from the API. */
export function createApiClient(identity: Identity, base = '', fetchImpl: typeof fetch = fetch): ApiClient {
  const call = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(await identity.headers())) headers.set(name, value);
    const response = await fetchImpl(`${base}${path}`, { ...init, headers });
    if (!response.ok) throw await toApiError(response);
    return response;
  };
  return {
    userId: identity.userId,
    fetch: call,
    async json<T>(method: string, path: string, body?: unknown): Promise<T> {
      const init: RequestInit = { method, headers: { accept: 'application/json' } };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        init.headers = { accept: 'application/json', 'content-type': 'application/json' };
      }
      const response = await call(path, init);
      if (response.status === 204) return undefined as T;
      return (await response.json()) as T;
    },
  };
}

/** A one-line message for an error, saying which limit a 429 hit and when to try again. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429) {
      const when = error.retryAfter === undefined ? 'later' : `in ${error.retryAfter} s`;
      return `${error.detail} Try again ${when}.`;
    }
    return error.detail;
  }
  return error instanceof Error ? error.message : String(error);
}
