// Declared HTTP endpoints. A definition names its route, its methods, the zod schemas of its path parameters,
// query and body, and the use-case it calls; httpHandler() turns it into the handler the Functions host and the
// local runtime mount. That one handler resolves the caller, refuses a userId that is not the caller's, enforces
// the body limit, parses, calls, maps any error to problem+json and sets the cache headers, so an endpoint's own
// code only translates between HTTP and its use-case.
import type {
  HttpHandler,
  HttpMethod,
  HttpRequest,
  HttpResponseInit,
  InvocationContext,
} from '@azure/functions';
import type { z } from 'zod';
import { assertOwnUser, type Caller, type IdentityResolver } from '../identity/caller.js';
import { parseInput } from '../validation.js';
import { readJsonBody } from './json-body.js';
import { toProblemResponse } from './problem.js';

/** What a JSON endpoint answers; `body` goes out as JSON (none for 204). */
export interface JsonResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A streamed answer (SSE): the endpoint sets every header itself. */
export interface StreamResult {
  status: number;
  stream: ReadableStream<Uint8Array>;
  headers: Record<string, string>;
}

export type EndpointResult = JsonResult | StreamResult;

/** Who may call: a resolved caller (the default), or anyone (the health probe). */
export type EndpointAuth = 'caller' | 'anonymous';

/** The parsed request an endpoint's `handle` receives. */
export interface EndpointRequest<TApp, P, Q, B, A extends EndpointAuth> {
  app: TApp;
  caller: A extends 'caller' ? Caller : undefined;
  params: P;
  query: Q;
  body: B;
  headers: Headers;
  context: InvocationContext;
}

export interface BodySpec<TApp, B> {
  /** The schema, or a function of the app when a limit comes from settings. */
  schema: z.ZodType<B> | ((app: TApp) => z.ZodType<B>);
  /** Larger bodies get 413 before they are read whole. */
  maxBytes: number | ((app: TApp) => number);
  /** An empty body is undefined instead of a 400. */
  optional?: boolean;
  /** Names the body in error messages ("Invalid chat message: ..."). */
  what: string;
}

export interface EndpointDefinition<
  TApp,
  P = undefined,
  Q = undefined,
  B = undefined,
  A extends EndpointAuth = 'caller',
> {
  /** The function's name in the Functions host. */
  name: string;
  /** Route under /api, in the host's template syntax: `stream/{sessionId}/{chatMessageId}`. */
  route: string;
  methods: HttpMethod[];
  /** One line on what it does, for docs/api.http and the portal. */
  summary: string;
  auth: A;
  /** The handler uses `app.orchestrations(context)`: the host must bind a durable client input. */
  usesDurableClient?: boolean;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: BodySpec<TApp, B>;
  handle(request: EndpointRequest<TApp, P, Q, B, A>): Promise<EndpointResult>;
}

/** What httpHandler needs of the app: how to identify callers. */
export interface EndpointApp {
  identity: IdentityResolver;
}

/** Infers an endpoint's types from its definition (the definition itself is returned unchanged). */
export function defineEndpoint<TApp extends EndpointApp>() {
  return <P = undefined, Q = undefined, B = undefined, A extends EndpointAuth = 'caller'>(
    definition: EndpointDefinition<TApp, P, Q, B, A>,
  ): EndpointDefinition<TApp, P, Q, B, A> => definition;
}

/** The Functions HTTP handler of a declared endpoint; `getApp` supplies the app (fakes, in a test). */
export function httpHandler<TApp extends EndpointApp, P, Q, B, A extends EndpointAuth>(
  definition: EndpointDefinition<TApp, P, Q, B, A>,
  getApp: () => Promise<TApp>,
): HttpHandler {
  return async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => {
    try {
      const app = await getApp();
      const caller = definition.auth === 'caller' ? await app.identity.resolve(request.headers) : undefined;
      // A user id named anywhere in the request (path, query or body) must be the caller's (DESIGN §6).
      if (caller !== undefined) {
        assertOwnUser(caller, request.params['userId']);
        assertOwnUser(caller, request.query.get('userId'));
      }
      const params = parsePart(definition.params, request.params, 'path');
      const query = parsePart(definition.query, Object.fromEntries(request.query), 'query');
      const body = await readBody(definition.body, app, request);
      if (caller !== undefined) assertOwnUser(caller, userIdOf(body));
      const result = await definition.handle({
        app,
        caller: caller as EndpointRequest<TApp, P, Q, B, A>['caller'],
        params,
        query,
        body,
        headers: request.headers,
        context,
      });
      return toResponse(result);
    } catch (error) {
      return toProblemResponse(error, context, request.url);
    }
  };
}

async function readBody<TApp, B>(
  spec: BodySpec<TApp, B> | undefined,
  app: TApp,
  request: HttpRequest,
): Promise<B> {
  if (spec === undefined) return undefined as B;
  const maxBytes = typeof spec.maxBytes === 'number' ? spec.maxBytes : spec.maxBytes(app);
  const json = await readJsonBody(request, maxBytes, { optional: spec.optional });
  const schema = typeof spec.schema === 'function' ? spec.schema(app) : spec.schema;
  return parseInput(schema, json, spec.what);
}

/** A part the endpoint declares no schema for is undefined to it, whatever the request holds. */
function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, what: string): T {
  return schema === undefined ? (undefined as T) : parseInput(schema, value, what);
}

function userIdOf(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null || !('userId' in part)) return undefined;
  return typeof part.userId === 'string' ? part.userId : undefined;
}

function toResponse(result: EndpointResult): HttpResponseInit {
  if ('stream' in result) return { status: result.status, headers: result.headers, body: result.stream };
  const headers = { 'cache-control': 'no-store', ...result.headers };
  return result.body === undefined
    ? { status: result.status, headers }
    : { status: result.status, headers, jsonBody: result.body };
}
