// Reads a JSON request body with a size limit: a body over the limit is refused (413) without being held in
// memory, a body of another media type gets 415, and malformed JSON gets 400 naming the problem. The bounded
// byte reading is shared with upload bodies (upload-body.ts).
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
  const text = new TextDecoder('utf-8', { fatal: false }).decode(await readBodyBytes(request, maxBytes));
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

/** The body's bytes, refused (413) as soon as it declares or turns out to be larger than maxBytes. */
export async function readBodyBytes(request: HttpRequest, maxBytes: number): Promise<Uint8Array> {
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
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
