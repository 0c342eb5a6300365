// Uploads a document with XMLHttpRequest, whose upload events report progress (fetch has none for a request
// body); a failure becomes the same ApiError the API client throws, Retry-After included.
import { ApiError, apiErrorOf } from '../api/client';
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
  return apiErrorOf({
    status: request.status,
    statusText: request.statusText,
    text: request.responseText,
    retryAfter: request.getResponseHeader('retry-after'),
  });
}
