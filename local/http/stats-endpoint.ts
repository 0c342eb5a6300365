// Local runtime only: GET /local/stats answers what the local services have served since start (local-stats.ts),
// so a turn's cost can be measured with curl before and after it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpMount } from './http-host.js';

export const LOCAL_STATS_PATH = '/local/stats';

export function createStatsEndpoint(read: () => unknown): HttpMount {
  return {
    handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (path !== LOCAL_STATS_PATH) return Promise.resolve(false);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return Promise.resolve(true);
      }
      const body = JSON.stringify(read(), null, 2);
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return Promise.resolve(true);
    },
  };
}
