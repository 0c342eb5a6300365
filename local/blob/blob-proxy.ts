// Local runtime only: /local/blob/{account}/... forwards signed requests to the local Blob Storage, which speaks HTTPS
// with a certificate no browser trusts, so a page PUTs its direct uploads (and reads signed links) on the runtime's
// own origin. A SAS binds the account, container, blob and query, not the host, so the emulator accepts it as is.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request, type Agent } from 'node:https';
import type { HttpMount } from '../http/http-host.js';
import { problemResponse } from '../http/problem.js';

export const LOCAL_BLOB_PATH = '/local/blob';

const METHODS = ['GET', 'HEAD', 'PUT', 'OPTIONS'];
/** Headers of one hop, or of the caller, that the emulator is not given (it is called with the SAS alone). */
const DROPPED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'authorization',
  'cookie',
]);

export interface BlobProxyTarget {
  /** The emulator's origin, e.g. https://127.0.0.1:53123. */
  origin: string;
  /** Trusts the emulator's certificate. */
  agent: Agent;
}

/** The mount; `pathPrefix` + the blob's path on the emulator is where a page reaches a blob. */
export function createBlobProxy(target: BlobProxyTarget): HttpMount {
  return {
    handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
      const raw = req.url ?? '/';
      if (!raw.startsWith(`${LOCAL_BLOB_PATH}/`)) return Promise.resolve(false);
      const method = req.method ?? 'GET';
      if (!METHODS.includes(method)) {
        refuse(res, 405, 'method_not_allowed', `Use ${METHODS.join(', ')} on ${LOCAL_BLOB_PATH}/.`, {
          allow: METHODS.join(', '),
        });
        return Promise.resolve(true);
      }
      // Only a signed URL is forwarded (a preflight carries no query): nothing here lends the runtime's own access.
      const query = new URL(raw, 'http://localhost').searchParams;
      if (method !== 'OPTIONS' && !query.has('sig')) {
        refuse(res, 403, 'forbidden', `${LOCAL_BLOB_PATH}/ forwards signed (SAS) URLs only.`);
        return Promise.resolve(true);
      }
      return forward(target, req, res, raw.slice(LOCAL_BLOB_PATH.length)).then(() => true);
    },
  };
}

function forward(
  target: BlobProxyTarget,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  return new Promise((resolve) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([name]) => !DROPPED.has(name) && !name.startsWith('x-ms-client-principal'),
      ),
    );
    const upstream = request(
      `${target.origin}${path}`,
      { method: req.method, headers, agent: target.agent },
      (answer) => {
        const kept = Object.entries(answer.headers).filter(([name]) => !DROPPED.has(name));
        res.writeHead(answer.statusCode ?? 502, Object.fromEntries(kept));
        answer.pipe(res);
        answer.once('end', resolve);
        answer.once('error', () => {
          res.destroy();
          resolve();
        });
      },
    );
    upstream.once('error', (error) => {
      if (!res.headersSent)
        refuse(res, 502, 'bad_gateway', `The local Blob Storage did not answer: ${error.message}`);
      else res.destroy();
      resolve();
    });
    // The caller went away mid-upload: the emulator's request goes too.
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  });
}

function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const problem = problemResponse(status, code, detail, {}, headers);
  res.writeHead(status, problem.headers as Record<string, string>).end(problem.body as string);
}
