// Reads a request body up to a limit. An oversized body is drained, not cut off: destroying the request
// would close the socket before the caller can answer 413.
import type { IncomingMessage } from 'node:http';

export const TOO_LARGE = 'too-large';

export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer | typeof TOO_LARGE> {
  if (Number(req.headers['content-length'] ?? '0') > limit) {
    req.resume();
    return Promise.resolve(TOO_LARGE);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? TOO_LARGE : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
