// Converters between the Functions HTTP types and the web-standard Request and Response, for handlers written
// against fetch-shaped libraries (the MCP SDK's Streamable HTTP handler). A streamed response body (SSE) is handed
// on as the stream, so the host sends each event as it is produced.
import type { HttpRequest, HttpResponseInit } from '@azure/functions';

/** The request as a web Request; its body is read whole (the host has already bounded its size). */
export async function toWebRequest(request: HttpRequest): Promise<Request> {
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    ...(hasBody ? { body: await request.arrayBuffer() } : {}),
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
