// A fetch that serves requests with a Functions HTTP handler in process, as the host would: each web Request
// becomes a real HttpRequest and InvocationContext from @azure/functions, and the handler's answer comes back
// as a web Response read through a real HttpResponse (streamed bodies stay streams).
import { randomUUID } from 'node:crypto';
import azureFunctions, { type HttpHandler } from '@azure/functions';

// Under Node's ESM loader the package's classes are reachable only through its default export.
const { HttpRequest, HttpResponse, InvocationContext } = azureFunctions;

export function inProcessFetch(
  handler: HttpHandler,
  options: { params?: Record<string, string>; functionName?: string } = {},
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const context = new InvocationContext({
      invocationId: randomUUID(),
      functionName: options.functionName ?? 'inProcess',
      logHandler: () => undefined,
    });
    const answer = await handler(
      new HttpRequest({
        method: request.method,
        url: request.url,
        headers,
        params: options.params ?? {},
        ...(body === '' ? {} : { body: { string: body } }),
      }),
      context,
    );
    const response = answer instanceof HttpResponse ? answer : new HttpResponse(answer ?? undefined);
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}
