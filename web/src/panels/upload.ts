// Uploads a document with XMLHttpRequest, whose upload events report progress (fetch has none for a request
// body); a failure becomes the same ApiError the API client throws, Retry-After included.
import { ApiError } from '../api/client';
import type { KnowledgeDocument } from './api-types';

export interface UploadOptions {
  /** The identity's headers for this request. */
  headers: Record<string, string>;
  /** Called with the fraction sent, 0 to 1. */
  onProgress: (fraction: number) => void;
  /** Where /api lives: '' on the same origin. */
  base?: string;
  signal?: AbortSignal;
}

export function uploadDocument(file: File, options: UploadOptions): Promise<KnowledgeDocument> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `${options.base ?? ''}/api/knowledge/documents`);
    for (const [name, value] of Object.entries(options.headers)) request.setRequestHeader(name, value);
    request.setRequestHeader('accept', 'application/json');
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable && event.total > 0) options.onProgress(event.loaded / event.total);
    });
    request.addEventListener('load', () => {
      if (request.status >= 200 && request.status < 300) {
        options.onProgress(1);
        try {
          resolve((JSON.parse(request.responseText) as { document: KnowledgeDocument }).document);
        } catch {
          reject(
            new ApiError({
              status: request.status,
              detail: 'The upload answered with something unreadable.',
            }),
          );
        }
        return;
      }
      reject(problemOf(request));
    });
    request.addEventListener('error', () =>
      reject(new ApiError({ status: 0, detail: 'The upload could not reach the server.' })),
    );
    request.addEventListener('abort', () =>
      reject(new ApiError({ status: 0, detail: 'The upload was cancelled.' })),
    );
    options.signal?.addEventListener('abort', () => request.abort());
    const form = new FormData();
    form.append('file', file, file.name);
    request.send(form);
  });
}

function problemOf(request: XMLHttpRequest): ApiError {
  let problem: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(request.responseText);
    if (typeof parsed === 'object' && parsed !== null) problem = parsed as Record<string, unknown>;
  } catch {
    // Not problem+json (a proxy's page): the status stands in for the detail.
  }
  const detail =
    typeof problem['detail'] === 'string'
      ? problem['detail']
      : `${request.status} ${request.statusText || 'upload failed'}`;
  return new ApiError({
    status: request.status,
    detail,
    code: typeof problem['code'] === 'string' ? problem['code'] : undefined,
    retryAfter: retryAfterSeconds(request.getResponseHeader('retry-after'), problem['retryAfter']),
    problem,
  });
}

function retryAfterSeconds(header: string | null, fromBody: unknown): number | undefined {
  if (header !== null && header.trim() !== '') {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - Date.now()) / 1000));
  }
  return typeof fromBody === 'number' ? fromBody : undefined;
}
