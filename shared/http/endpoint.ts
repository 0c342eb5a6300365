// Declared HTTP endpoints: route, methods, the zod schemas of path, query and body, and the use-case called.
// httpHandler() makes one the handler both hosts mount: it resolves the caller, refuses another user's userId,
// bounds the body, parses, calls, and maps errors to problem+json, so an endpoint only translates.
import type {
  HttpHandler,
  HttpMethod,
  HttpRequest,
  HttpResponseInit,
  InvocationContext,
} from '@azure/functions';
import type { z } from 'zod';
import { assertOwnUser, type Caller, type IdentityResolver } from '../identity/caller.js';
import { ForbiddenError, ValidationError } from '../errors.js';
import { parseInput } from '../validation.js';
import { isJsonContentType, readJsonBody, UnsupportedMediaTypeError } from './json-body.js';
import { toOpenAiErrorResponse } from './openai-error.js';
import { toProblemResponse } from './problem.js';
import { isMultipartForm, readMultipartForm } from './upload-body.js';

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

/**
 * A text answer that is not JSON (an export as Markdown, say): `text` goes out as it is, with the endpoint's
 * headers, which name its content-type.
 */
export interface TextResult {
  status: number;
  text: string;
  headers: Record<string, string>;
}

export type EndpointResult = JsonResult | StreamResult | TextResult;

/**
 * Who may call: a caller resolved from the identity headers (the default); anyone (the health probe); or a
 * caller from the identity headers or, when the query holds a ticket, the caller the endpoint's `ticket` redeems
 * it for (a browser's native EventSource cannot send headers).
 */
export type EndpointAuth = 'caller' | 'anonymous' | 'caller-or-ticket';

/** How an endpoint with auth 'caller-or-ticket' turns the ticket in its query into a caller. */
export interface TicketAuth<TApp, P> {
  /** The query parameter that carries the ticket. */
  queryParameter: string;
  /** The caller the ticket stands for on this path; throws UnauthenticatedError when it is not valid here. */
  redeem(request: { app: TApp; ticket: string; params: P }): Promise<Caller>;
}

/** The parsed request an endpoint's `handle` receives. */
export interface EndpointRequest<TApp, P, Q, B, A extends EndpointAuth> {
  app: TApp;
  caller: A extends 'anonymous' ? undefined : Caller;
  params: P;
  query: Q;
  body: B;
  headers: Headers;
  /** The request's URL as the host received it, for answers that name this API's own URLs. */
  url: string;
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
  /**
   * Also accept a multipart/form-data upload (under the same maxBytes): the form, mapped by this function to the
   * value the schema parses. Without it, an endpoint takes JSON only.
   */
  multipart?: (form: FormData) => Promise<unknown>;
  /** The parts of that form (a file part is `z.file()`), as the OpenAPI document shows them. */
  formParts?: z.ZodType;
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
  /** One line on what it does, for docs/api.md and the portal. */
  summary: string;
  auth: A;
  /**
   * What it answers beyond what the declaration implies (400, 401, 403, 413 and 415 follow from its parts): its
   * success status and the errors its use-case raises, each with what it means. docs/api.md is generated from it.
   */
  responses?: EndpointResponses;
  /**
   * The body each success status answers with (204 has none): the schema of its JSON, or of each media type it
   * comes as. The OpenAPI document shows them, and a test requires one for every success status.
   */
  replies?: EndpointReplies;
  /** Required with auth 'caller-or-ticket' (checked when the handler is made). */
  ticket?: TicketAuth<TApp, P>;
  /** The handler uses `app.orchestrations(context)`: the host must bind a durable client input. */
  usesDurableClient?: boolean;
  /** A personal API key also identifies the caller here (auth 'caller'). */
  apiKeys?: true;
  /**
   * The shape every error answers with: problem+json (the default), or OpenAI's `{error: {message, type, code,
   * param}}` for the OpenAI-compatible routes, whose clients read only that.
   */
  errors?: 'problem' | 'openai';
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: BodySpec<TApp, B>;
  handle(request: EndpointRequest<TApp, P, Q, B, A>): Promise<EndpointResult>;
}

/** Status → what it means to the client ("the session", "another user's or an unknown session"). */
export type EndpointResponses = Readonly<Record<number, string>>;

/** A body that is not (only) JSON, such as an SSE stream, a page or a file: its schema per media type. */
export interface MediaReply {
  readonly content: Readonly<Record<string, z.ZodType>>;
}

/** Status → the schema of the JSON body it answers with, or the media types of another body. */
export type EndpointReplies = Readonly<Record<number, z.ZodType | MediaReply>>;

/** The parts of a definition that describe it to a client (docs/api.md and the OpenAPI document), without its handler. */
export type EndpointDeclaration<TApp> = Pick<
  EndpointDefinition<TApp, unknown, unknown, unknown, EndpointAuth>,
  'summary' | 'auth' | 'params' | 'query' | 'body' | 'responses' | 'replies' | 'apiKeys' | 'errors'
> & {
  /** With auth 'caller-or-ticket': the query parameter that carries the ticket. */
  ticketParameter?: string;
};

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
  const ticketAuth = definition.auth === 'caller-or-ticket' ? definition.ticket : undefined;
  if (definition.auth === 'caller-or-ticket' && ticketAuth === undefined)
    throw new Error(
      `Endpoint ${definition.name}: auth 'caller-or-ticket' needs a \`ticket\` to redeem tickets.`,
    );
  return async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => {
    try {
      const app = await getApp();
      assertSingleQueryValues(request);
      const ticket = ticketAuth === undefined ? undefined : ticketIn(request, ticketAuth.queryParameter);
      let caller =
        definition.auth === 'anonymous' || ticket !== undefined
          ? undefined
          : await app.identity.resolve(request.headers, definition.apiKeys === true ? { apiKeys: true } : {});
      if (caller !== undefined) assertOwnUserInRequest(caller, request);
      const params = parsePart(definition.params, request.params, 'path');
      // A ticket is bound to what the path names, so it is redeemed once the path is parsed.
      if (ticketAuth !== undefined && ticket !== undefined) {
        caller = await ticketAuth.redeem({ app, ticket, params });
        assertOwnUserInRequest(caller, request);
      }
      const query = parsePart(definition.query, Object.fromEntries(request.query), 'query');
      const body = await readBody(definition.body, app, request, caller);
      const result = await definition.handle({
        app,
        caller: caller as EndpointRequest<TApp, P, Q, B, A>['caller'],
        params,
        query,
        body,
        headers: request.headers,
        url: request.url,
        context,
      });
      return toResponse(result);
    } catch (error) {
      return definition.errors === 'openai'
        ? toOpenAiErrorResponse(error, context)
        : toProblemResponse(error, context, request.url);
    }
  };
}

/**
 * The body, parsed. A userId it names is checked against the caller's as read, before the schema: most schemas
 * have no userId and would strip it, and a request naming another user is refused, not quietly served as the
 * caller's own. A form's userId field counts as a JSON body's does.
 */
async function readBody<TApp, B>(
  spec: BodySpec<TApp, B> | undefined,
  app: TApp,
  request: HttpRequest,
  caller: Caller | undefined,
): Promise<B> {
  if (spec === undefined) return undefined as B;
  const maxBytes = typeof spec.maxBytes === 'number' ? spec.maxBytes : spec.maxBytes(app);
  const schema = typeof spec.schema === 'function' ? spec.schema(app) : spec.schema;
  const assertOwn = (userId: unknown) => {
    if (caller !== undefined) assertOwnBodyUser(caller, userId);
  };
  return parseInput(schema, await readBodyValue(spec, request, maxBytes, assertOwn), spec.what);
}

async function readBodyValue<TApp, B>(
  spec: BodySpec<TApp, B>,
  request: HttpRequest,
  maxBytes: number,
  assertOwn: (userId: unknown) => void,
): Promise<unknown> {
  const contentType = request.headers.get('content-type');
  if (spec.multipart !== undefined && isMultipartForm(contentType)) {
    const form = await readMultipartForm(request, maxBytes);
    for (const userId of form.getAll('userId')) assertOwn(userId);
    return await spec.multipart(form);
  }
  if (spec.multipart !== undefined && contentType !== null && !isJsonContentType(contentType))
    throw new UnsupportedMediaTypeError(
      'The request body must be JSON (content-type: application/json) or a form upload (multipart/form-data).',
    );
  const value = await readJsonBody(
    request,
    maxBytes,
    spec.optional === undefined ? {} : { optional: spec.optional },
  );
  if (typeof value === 'object' && value !== null && 'userId' in value) assertOwn(value.userId);
  return value;
}

/** A part the endpoint declares no schema for is undefined to it, whatever the request holds. */
function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, what: string): T {
  return schema === undefined ? (undefined as T) : parseInput(schema, value, what);
}

/**
 * A query parameter given twice would be read one way by a check (the first value) and another by the parser (the
 * last), so a repeated one is refused rather than resolved.
 */
function assertSingleQueryValues(request: HttpRequest): void {
  const names = [...request.query.keys()];
  const repeated = [...new Set(names.filter((name, index) => names.indexOf(name) !== index))];
  if (repeated.length > 0)
    throw new ValidationError(
      `Invalid query: ${repeated.join(', ')} given more than once; give each parameter once.`,
      repeated.map((name) => ({ path: name, message: 'given more than once' })),
    );
}

/** A user id named in the path or the query must be the caller's; the body's is checked as it is read. */
function assertOwnUserInRequest(caller: Caller, request: HttpRequest): void {
  assertOwnUser(caller, request.params['userId']);
  assertOwnUser(caller, request.query.get('userId'));
}

function ticketIn(request: HttpRequest, parameter: string): string | undefined {
  const value = request.query.get(parameter);
  return value === null || value === '' ? undefined : value;
}

/** A body's userId must be the caller's; one that is not a string (a number, a form's file part) is not. */
function assertOwnBodyUser(caller: Caller, userId: unknown): void {
  if (typeof userId === 'string' || userId === undefined || userId === null) assertOwnUser(caller, userId);
  else
    throw new ForbiddenError(
      'The userId in the body is not a user id: a caller can reach only their own data.',
    );
}

function toResponse(result: EndpointResult): HttpResponseInit {
  if ('stream' in result) return { status: result.status, headers: result.headers, body: result.stream };
  const headers = { 'cache-control': 'no-store', ...result.headers };
  if ('text' in result) return { status: result.status, headers, body: result.text };
  return result.body === undefined
    ? { status: result.status, headers }
    : { status: result.status, headers, jsonBody: result.body };
}
