// The product's error hierarchy: one base type with a stable `code`, a few subclasses, and one
// normaliser. HTTP handlers map these to problem details (shared/http/problem.ts); queue triggers let
// them escape so the platform retries and dead-letters.

export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The input is malformed or breaks a limit. `issues` lists each problem by field path. */
export class ValidationError extends AppError {
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super('validation_failed', message, 400);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'No identity: sign in, or send the platform principal headers.') {
    super('unauthenticated', message, 401);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'This resource belongs to another user.') {
    super('forbidden', message, 403);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super('not_found', message, 404);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('conflict', message, 409);
  }
}

/**
 * The request cannot be served yet but will be soon (a turn still running, history catching up): 409 with a
 * `retry-after` header, so a client knows to ask again rather than give up.
 */
export class NotReadyError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super('not_ready', message, 409);
  }
}

/**
 * A per-user quota or rate limit refuses the request (429 with `retry-after`): `limit` names which, `allowed` is its
 * setting and `current` what the user has reached. The request changed nothing.
 */
export class QuotaExceededError extends AppError {
  constructor(
    message: string,
    readonly limit: string,
    readonly allowed: number,
    readonly current: number,
    readonly retryAfterSeconds: number,
  ) {
    super('quota_exceeded', message, 429);
  }
}

/** A dependency (database, broker, model) failed or is unreachable. */
export class DependencyError extends AppError {
  constructor(
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('dependency_failed', message, 503, options);
  }
}

/** Turns anything thrown into an Error, so callers can rely on `.message` and `.stack`. */
export function ensureError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === 'string') return new Error(value);
  try {
    return new Error(JSON.stringify(value));
  } catch {
    return new Error(String(value));
  }
}
