// Reads a request body that may be a file upload (multipart/form-data) under the same byte limit as a JSON body:
// the bytes are read up to the limit (413 past it, never held whole), then parsed as the form they declare; a form
// that cannot be parsed is the client's mistake (400), not a crash.
import type { HttpRequest } from '@azure/functions';
import { ValidationError } from '../errors.js';
import { readBodyBytes } from './json-body.js';

/** Whether a content-type names a multipart form (parameters such as the boundary aside). */
export function isMultipartForm(contentType: string | null): boolean {
  return contentType !== null && /^multipart\/form-data\s*(;|$)/i.test(contentType.trim());
}

/** The request's multipart form, read with the limit. */
export async function readMultipartForm(request: HttpRequest, maxBytes: number): Promise<FormData> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/;\s*boundary=/i.test(contentType))
    throw new ValidationError('The multipart/form-data content-type has no boundary parameter.');
  const bytes = await readBodyBytes(request, maxBytes);
  try {
    return await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new ValidationError(
      'The multipart/form-data body could not be read: check its boundary and the parts it separates.',
    );
  }
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
