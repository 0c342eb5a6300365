// Reads a body that may be a file upload (multipart/form-data) under the same byte limit as a JSON body: read up to
// the limit (413 past it), its parts and header lines counted as they arrive (400 past those limits), then parsed as
// the form it declares; a form that cannot be parsed is the client's mistake (400), not a crash.
import type { HttpRequest } from '@azure/functions';
import { ValidationError } from '../errors.js';
import { readBodyBytes, type BodyGuard } from './json-body.js';

export interface MultipartLimits {
  maxParts: number;
  maxHeaderLines: number;
  /** Per part, its header lines' bytes with their line ends. */
  maxHeaderBytes: number;
}

/** A form this API takes has a file and a few fields; a part names itself in two or three header lines. */
export const MULTIPART_LIMITS: Readonly<MultipartLimits> = {
  maxParts: 16,
  maxHeaderLines: 8,
  maxHeaderBytes: 4_096,
};

/** Whether a content-type names a multipart form (parameters such as the boundary aside). */
export function isMultipartForm(contentType: string | null): boolean {
  return contentType !== null && /^multipart\/form-data\s*(;|$)/i.test(contentType.trim());
}

/** The request's multipart form, read with the limit. */
export async function readMultipartForm(request: HttpRequest, maxBytes: number): Promise<FormData> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/;\s*boundary=/i.test(contentType))
    throw new ValidationError('The multipart/form-data content-type has no boundary parameter.');
  const boundary = boundaryOf(contentType);
  const bytes = await readBodyBytes(request, maxBytes, multipartGuard(boundary));
  try {
    return await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new ValidationError(
      'The multipart/form-data body could not be read: check its boundary and the parts it separates.',
    );
  }
}

/** The boundary parameter, unquoted; 400 when it is not one RFC 2046 allows (1 to 70 characters of its set). */
function boundaryOf(contentType: string): string {
  const match = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2] ?? '';
  if (!/^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary))
    throw new ValidationError('The multipart/form-data boundary parameter is malformed.');
  return boundary;
}

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

/**
 * Follows a multipart body's structure as it arrives, byte by byte across chunks: it finds each delimiter line
 * (`--boundary` at the start of the body or after a CRLF), counts the parts and each part's header lines and bytes,
 * and refuses (400) a form past MULTIPART_LIMITS before it is parsed: thousands of header lines or parts would
 * otherwise all be parsed and held.
 */
export function multipartGuard(
  boundary: string,
  limits: Readonly<MultipartLimits> = MULTIPART_LIMITS,
): BodyGuard {
  const delimiter = new TextEncoder().encode(`\r\n--${boundary}`);
  // The body's first delimiter has no CRLF before it: start as if one had just been seen.
  let matched = 2;
  let state: 'body' | 'delimiter-line' | 'headers' | 'epilogue' = 'body';
  let parts = 0;
  let lineBytes = 0;
  let headerLines = 0;
  let headerBytes = 0;
  let closing = false;
  const refuse = (what: string) => {
    throw new ValidationError(`The multipart/form-data body ${what}.`);
  };
  return (chunk) => {
    for (const byte of chunk) {
      if (state === 'epilogue') return;
      if (state === 'body') {
        // The delimiter holds no CR but its first byte, so a mismatch restarts at a CR or at nothing.
        if (byte === delimiter[matched]) matched += 1;
        else matched = byte === CR ? 1 : 0;
        if (matched === delimiter.length) {
          matched = 0;
          state = 'delimiter-line';
          lineBytes = 0;
        }
      } else if (state === 'delimiter-line') {
        // What follows the boundary on its line: "--" closes the form, else padding and CRLF open a part.
        lineBytes += 1;
        closing = lineBytes === 1 ? byte === DASH : closing && lineBytes === 2 && byte === DASH;
        if (closing && lineBytes === 2) state = 'epilogue';
        else if (byte === LF) {
          parts += 1;
          if (parts > limits.maxParts) refuse(`has more than ${limits.maxParts} parts`);
          state = 'headers';
          lineBytes = 0;
          headerLines = 0;
          headerBytes = 0;
        } else if (lineBytes > 256) refuse('has a malformed boundary line');
      } else {
        headerBytes += 1;
        if (headerBytes > limits.maxHeaderBytes)
          refuse(`has a part whose headers are larger than ${limits.maxHeaderBytes} bytes`);
        if (byte !== LF) {
          if (byte !== CR) lineBytes += 1;
          continue;
        }
        if (lineBytes === 0) {
          state = 'body';
          matched = 0;
          continue;
        }
        headerLines += 1;
        if (headerLines > limits.maxHeaderLines)
          refuse(`has a part with more than ${limits.maxHeaderLines} header lines`);
        lineBytes = 0;
      }
    }
  };
}

/** A form field that is text, trimmed; undefined when absent or blank. */
export function formText(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** An uploaded file of a form: its bytes, its name (without any client path) and its declared type. */
export interface FormFile {
  content: Uint8Array;
  fileName?: string;
  contentType?: string;
}

/**
 * The form's file part `name`, or undefined when it has none. A plain text field of that name (a client that
 * sent the text inline) counts as a file without a name or type.
 */
export async function formFile(form: FormData, name: string): Promise<FormFile | undefined> {
  const value = form.get(name);
  if (value === null) return undefined;
  if (typeof value === 'string') return { content: new TextEncoder().encode(value) };
  const fileName = value.name.split(/[\\/]/).pop()?.trim();
  return {
    content: new Uint8Array(await value.arrayBuffer()),
    ...(fileName ? { fileName } : {}),
    ...(value.type.trim() !== '' ? { contentType: value.type.trim() } : {}),
  };
}
