// The local host's own refusals (no route, wrong method, too large, not ready, a rebinding page) as RFC 9457
// problem details, in the fields and codes the API's own errors use, so a client reads one format from the port.
import type { HttpResponseInit } from '@azure/functions';

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problemResponse(
  status: number,
  code: string,
  detail: string,
  extra: { instance?: string } = {},
  headers: Record<string, string> = {},
): HttpResponseInit {
  const body = {
    type: `https://httpstatuses.io/${status}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  };
  return {
    status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
