// Calls a declared endpoint in process, as the Functions host would: a real HttpRequest and InvocationContext
// from @azure/functions, the handler httpHandler() makes of the definition, and the app a test gives it. What
// comes back is read through a real HttpResponse, so headers, JSON and streamed bodies are what a client gets.
import { randomUUID } from 'node:crypto';
import azureFunctions, { type HttpMethod } from '@azure/functions';
import { z } from 'zod';
import { replyContent } from '../../shared/http/declared-endpoints.js';
import {
  httpHandler,
  type EndpointApp,
  type EndpointAuth,
  type EndpointDefinition,
} from '../../shared/http/endpoint.js';

// Under Node's ESM loader the package's classes are reachable only through its default export.
const { HttpRequest, HttpResponse, InvocationContext } = azureFunctions;

export interface CallOptions {
  method?: HttpMethod;
  /** Path and query after the host, e.g. `/api/chat?userId=x`. */
  path?: string;
  headers?: Record<string, string>;
  /** Route parameters, as the host extracts them from the path. */
  params?: Record<string, string>;
  /** A JSON body (sent with content-type application/json unless headers say otherwise). */
  json?: unknown;
  /** A raw body. */
  body?: string;
  /** A form, sent as multipart/form-data (its boundary in the content-type), as a browser or curl -F sends it. */
  form?: FormData;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: () => Promise<string>;
  json: <T = Record<string, unknown>>() => Promise<T>;
  /** The body as a stream (SSE), for reading it as it is produced. */
  body: ReadableStream<Uint8Array> | null;
  /** What the invocation logged at warning level or above. */
  logged: unknown[][];
}

export async function callEndpoint<TApp extends EndpointApp, P, Q, B, A extends EndpointAuth>(
  definition: EndpointDefinition<TApp, P, Q, B, A>,
  app: TApp,
  options: CallOptions = {},
): Promise<Reply> {
  const form = options.form === undefined ? undefined : await encodeForm(options.form);
  const body = options.json === undefined ? options.body : JSON.stringify(options.json);
  const headers: Record<string, string> = {
    ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
    ...(form === undefined
      ? {}
      : { 'content-type': form.contentType, 'content-length': String(form.bytes.byteLength) }),
    ...options.headers,
  };
  const request = new HttpRequest({
    method: options.method ?? definition.methods[0] ?? 'GET',
    url: `http://localhost:7071${options.path ?? `/api/${definition.route}`}`,
    headers,
    params: options.params ?? {},
    ...(form !== undefined
      ? { body: { bytes: form.bytes } }
      : body === undefined
        ? {}
        : { body: { string: body } }),
  });
  const logged: unknown[][] = [];
  const context = new InvocationContext({
    invocationId: randomUUID(),
    functionName: definition.name,
    logHandler: (level, ...args) => {
      if (level === 'warning' || level === 'error' || level === 'critical') logged.push(args);
    },
  });
  const init = await httpHandler(definition, () => Promise.resolve(app))(request, context);
  const response = init instanceof HttpResponse ? init : new HttpResponse(init ?? undefined);
  const checked = await checkedJsonReply(definition, response);
  if (checked !== undefined)
    return {
      status: response.status,
      headers: response.headers,
      text: () => Promise.resolve(checked),
      json: <T>() => Promise.resolve(JSON.parse(checked) as T),
      body: new Response(checked).body,
      logged,
    };
  return {
    status: response.status,
    headers: response.headers,
    text: () => response.text(),
    json: <T>() => response.json() as Promise<T>,
    body: response.body,
    logged,
  };
}

/**
 * A JSON answer's text, held to the reply schema its endpoint declares for that status, so every test that calls an
 * endpoint also checks that the OpenAPI document tells the truth about it. Undefined for other answers.
 */
async function checkedJsonReply<TApp, P, Q, B, A extends EndpointAuth>(
  definition: EndpointDefinition<TApp, P, Q, B, A>,
  response: InstanceType<typeof HttpResponse>,
): Promise<string | undefined> {
  const reply = definition.replies?.[response.status];
  const schema = reply === undefined ? undefined : replyContent(reply)['application/json'];
  if (schema === undefined || !/^application\/json\b/.test(response.headers.get('content-type') ?? ''))
    return undefined;
  const text = await response.text();
  const parsed = schema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new Error(
      `${definition.name} answered ${response.status} with JSON its declared reply schema refuses: ${z.prettifyError(parsed.error)}`,
    );
  return text;
}

/** A form's multipart/form-data bytes and content-type, encoded as fetch encodes it. */
export async function encodeForm(form: FormData): Promise<{ bytes: Uint8Array; contentType: string }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    bytes: new Uint8Array(await request.arrayBuffer()),
    contentType: request.headers.get('content-type') ?? '',
  };
}

/** The dev identity header the local runtime's callers send. */
export function asUser(userId: string, headers: Record<string, string> = {}): Record<string, string> {
  return { 'x-ms-client-principal-id': userId, ...headers };
}
