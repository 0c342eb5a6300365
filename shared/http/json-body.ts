// Reads a JSON request body with a size limit and a nesting limit, both enforced as the bytes arrive: a body over
// either is refused (413, 400) before JSON.parse ever sees it, a body of another media type gets 415, and malformed
// JSON gets 400 naming the problem. The bounded byte reading is shared with upload bodies (upload-body.ts).
import type { HttpRequest } from '@azure/functions';
import { AppError, ValidationError } from '../errors.js';

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super('payload_too_large', `The request body is larger than ${limitBytes} bytes.`, 413);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message = 'The request body must be JSON (content-type: application/json).') {
    super('unsupported_media_type', message, 415);
  }
}

/** Whether a content-type names JSON (application/json, or a +json type such as application/problem+json). */
export function isJsonContentType(contentType: string): boolean {
  return /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType.trim());
}

/** The parsed body; with `optional`, an empty body gives undefined instead of a 400. */
export async function readJsonBody(
  request: HttpRequest,
  maxBytes: number,
  options: { optional?: boolean } = {},
): Promise<unknown> {
  const contentType = request.headers.get('content-type');
  if (contentType !== null && !isJsonContentType(contentType)) throw new UnsupportedMediaTypeError();
  const text = new TextDecoder('utf-8', { fatal: false }).decode(
    await readBodyBytes(request, maxBytes, jsonDepthGuard()),
  );
  if (text.trim() === '') {
    if (options.optional) return undefined;
    throw new ValidationError('The request body is empty: send a JSON object.');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ValidationError(`The request body is not valid JSON: ${(error as Error).message}.`);
  }
}

/** The most levels of arrays and objects a JSON body may nest; no request this API takes comes near it. */
export const MAX_JSON_DEPTH = 64;

/**
 * Looks at each chunk of a body as it arrives and throws (a 4xx AppError) as soon as the bytes so far break a
 * limit of their format, so a hostile body is refused before it is parsed whole.
 */
export type BodyGuard = (chunk: Uint8Array) => void;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Counts the nesting of arrays and objects outside strings, byte by byte across chunks (a UTF-8 sequence never
 * holds these ASCII bytes), and refuses a body nested deeper than MAX_JSON_DEPTH: parsing `[` a few million times
 * over would hold the serving thread for seconds before failing.
 */
export function jsonDepthGuard(maxDepth = MAX_JSON_DEPTH): BodyGuard {
  let depth = 0;
  let inString = false;
  let escaped = false;
  return (chunk) => {
    for (const byte of chunk) {
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
        depth += 1;
        if (depth > maxDepth)
          throw new ValidationError(
            `The request body is nested deeper than ${maxDepth} levels of arrays and objects.`,
          );
      } else if ((byte === CLOSE_BRACKET || byte === CLOSE_BRACE) && depth > 0) depth -= 1;
    }
  };
}

/**
 * The body's bytes, refused (413) as soon as it declares or turns out to be larger than maxBytes, and by `guard`
 * as soon as a chunk breaks its format's limits.
 */
export async function readBodyBytes(
  request: HttpRequest,
  maxBytes: number,
  guard?: BodyGuard,
): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new PayloadTooLargeError(maxBytes);
  if (request.body === null) return new Uint8Array(0);
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new PayloadTooLargeError(maxBytes);
    }
    try {
      guard?.(value);
    } catch (error) {
      await reader.cancel();
      throw error;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
