// Converters between the Functions HTTP types and the web-standard Request and Response, for handlers written
// against fetch-shaped libraries (the MCP SDK's Streamable HTTP handler). A streamed response body (SSE) is handed
// on as the stream, so the host sends each event as it is produced.
import type { HttpRequest, HttpResponseInit } from '@azure/functions';

/**
 * The request as a web Request. Its body is handed on as the stream, unread: the handler reads it within its own
 * size limit, so an oversized body is refused without being held in memory first.
 */
export function toWebRequest(request: HttpRequest): Request {
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null;
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    // `duplex: 'half'` is what fetch's Request requires of a streamed body.
    ...(hasBody ? { body: request.body, duplex: 'half' } : {}),
  });
}

export function fromWebResponse(response: Response): HttpResponseInit {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return response.body === null
    ? { status: response.status, headers }
    : { status: response.status, headers, body: response.body };
}
