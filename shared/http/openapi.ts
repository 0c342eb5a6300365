// The OpenAPI 3.1 document of the declared endpoints: paths, parameters, bodies and statuses read from their zod
// schemas (z.toJSONSchema writes the dialect OpenAPI 3.1 uses), security per auth mode, problem+json errors.
import { openAiErrorSchema } from './openai-error.js';
import type { AuthConfig } from '../identity/settings.js';
import {
  endpointStatuses,
  inputJsonSchema,
  isSuccessStatus,
  outputJsonSchema,
  replyContent,
  resolvedBody,
  bytes,
  type DeclaredEndpoint,
  type JsonSchema,
} from './declared-endpoints.js';
import { PROBLEM_CONTENT_TYPE, problemDetailsSchema } from './problem.js';

export const OPENAPI_VERSION = '3.1.1';

/** A group of endpoints, by the first segment of their routes: the document's tags. */
export interface ApiTag {
  title: string;
  routePrefixes: readonly string[];
  note: string;
}

export interface OpenApiOptions<TApp> {
  endpoints: readonly DeclaredEndpoint<TApp>[];
  /** The app whose settings fix the limits and schemas that follow them. */
  app: TApp;
  /** How this deployment identifies callers: the security schemes follow it. */
  auth: AuthConfig;
  title: string;
  version: string;
  description: string;
  tags: readonly ApiTag[];
}

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

type Json = Record<string, unknown>;

const PROBLEM_REF = { $ref: '#/components/schemas/ProblemDetails' };

export function buildOpenApiDocument<TApp>(options: OpenApiOptions<TApp>): OpenApiDocument {
  const schemas: Record<string, unknown> = {
    ProblemDetails: componentSchema(outputJsonSchema(problemDetailsSchema)),
  };
  const security = securitySchemes(options.auth, options.endpoints);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of options.endpoints) {
    const tag = apiAreaOf(endpoint, options.tags).title;
    const path = `/api/${openApiRoute(endpoint.route)}`;
    const item = (paths[path] ??= {});
    for (const method of endpoint.methods) {
      const operationId =
        endpoint.methods.length === 1
          ? endpoint.name
          : `${endpoint.name}${capitalised(method.toLowerCase())}`;
      const hoist = (schema: JsonSchema, place: string) =>
        hoistDefinitions(schema, `${operationId}.${place}`, schemas);
      item[method.toLowerCase()] = operation(endpoint, options.app, { operationId, tag, hoist, security });
    }
  }
  return {
    openapi: OPENAPI_VERSION,
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: '/' }],
    tags: options.tags.map((tag) => ({ name: tag.title, description: tag.note })),
    paths,
    components: { schemas, securitySchemes: security.schemes },
  };
}

interface OperationContext {
  operationId: string;
  tag: string;
  hoist: (schema: JsonSchema, place: string) => JsonSchema;
  security: SecurityOf;
}

/** An error's body: problem details, or OpenAI's error object on the routes that answer as OpenAI does. */
function errorContent<TApp>(
  declaration: DeclaredEndpoint<TApp>['declaration'],
  context: OperationContext,
): Json {
  return declaration.errors === 'openai'
    ? { 'application/json': { schema: context.hoist(outputJsonSchema(openAiErrorSchema), 'error') } }
    : { [PROBLEM_CONTENT_TYPE]: { schema: PROBLEM_REF } };
}

function operation<TApp>(endpoint: DeclaredEndpoint<TApp>, app: TApp, context: OperationContext): Json {
  const { declaration } = endpoint;
  const parameters = [
    ...parametersOf('path', declaration.params, endpoint.route, context.hoist),
    ...parametersOf('query', declaration.query, endpoint.route, context.hoist),
  ];
  const body = resolvedBody(declaration, app);
  const responses: Json = {};
  for (const [status, meaning] of endpointStatuses(endpoint, app)) {
    // A declared reply wins (the health probe's 503 is its report); other errors are problem details.
    const reply = declaration.replies?.[status];
    const media =
      reply === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(replyContent(reply)).map(([mediaType, schema], i) => [
              mediaType,
              { schema: context.hoist(outputJsonSchema(schema), `reply${status}${i === 0 ? '' : `.${i}`}`) },
            ]),
          );
    responses[String(status)] =
      media !== undefined
        ? { description: meaning, content: media }
        : isSuccessStatus(status)
          ? { description: meaning }
          : { description: meaning, content: errorContent(declaration, context) };
  }
  const content: Json = {};
  if (body !== undefined) {
    content['application/json'] = { schema: context.hoist(inputJsonSchema(body.schema), 'body') };
    const parts = declaration.body?.formParts;
    if (body.multipart)
      content['multipart/form-data'] = {
        schema: parts === undefined ? { type: 'object' } : context.hoist(inputJsonSchema(parts), 'form'),
      };
  }
  return {
    operationId: context.operationId,
    tags: [context.tag],
    summary: declaration.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body === undefined
      ? {}
      : {
          requestBody: {
            required: !body.optional,
            description: `At most ${bytes(body.maxBytes)}.`,
            content,
          },
        }),
    responses,
    security: context.security.requirement(declaration),
  };
}

/** The host's route template (`{name:int}`, `{*rest}`, `{name?}`) as an OpenAPI path template. */
export function openApiRoute(route: string): string {
  return route.replace(/\{\*?([A-Za-z_][A-Za-z0-9_]*)(?::[^}?]*)?\??\}/g, '{$1}');
}

function routeParameterNames(route: string): string[] {
  return [...openApiRoute(route).matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
}

function parametersOf(
  where: 'path' | 'query',
  schema: Parameters<typeof inputJsonSchema>[0] | undefined,
  route: string,
  hoist: (schema: JsonSchema, place: string) => JsonSchema,
): Json[] {
  const json = schema === undefined ? {} : inputJsonSchema(schema);
  const required = new Set(json.required ?? []);
  const properties = Object.entries(json.properties ?? {});
  // A path parameter is always there: one the schema does not read is still part of the route.
  if (where === 'path')
    for (const name of routeParameterNames(route))
      if (!properties.some(([declared]) => declared === name)) properties.push([name, { type: 'string' }]);
  return properties.map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: hoist(rest, `${where}.${name}`),
    };
  });
}

/** The area an endpoint belongs to, by its route's first segment; an endpoint of none is a mistake named here. */
export function apiAreaOf<TApp>(endpoint: DeclaredEndpoint<TApp>, areas: readonly ApiTag[]): ApiTag {
  const first = endpoint.route.split('/')[0] ?? '';
  const area = areas.find((candidate) => candidate.routePrefixes.includes(first));
  if (area === undefined)
    throw new Error(
      `Endpoint '${endpoint.name}' (route ${endpoint.route}) belongs to no area of functions/api-areas.ts: add its first route segment to one.`,
    );
  return area;
}

interface SecurityOf {
  schemes: Json;
  requirement(
    declaration: Pick<DeclaredEndpoint<unknown>['declaration'], 'auth' | 'ticketParameter' | 'apiKeys'>,
  ): Json[];
}

const CALLER_SCHEME = 'caller';
const TICKET_SCHEME = 'streamTicket';
const API_KEY_SCHEME = 'apiKey';

/** The caller's scheme follows AUTH_MODE; a stream ticket is a scheme of its own, accepted where declared. */
function securitySchemes<TApp>(auth: AuthConfig, endpoints: readonly DeclaredEndpoint<TApp>[]): SecurityOf {
  const schemes: Json = { [CALLER_SCHEME]: callerScheme(auth) };
  const ticket = endpoints.find((endpoint) => endpoint.declaration.ticketParameter !== undefined);
  if (ticket?.declaration.ticketParameter !== undefined)
    schemes[TICKET_SCHEME] = {
      type: 'apiKey',
      in: 'query',
      name: ticket.declaration.ticketParameter,
      description:
        "The short-lived ticket in the `stream` URL POST /api/chat answers: it opens that turn's stream only, with no header (a browser's EventSource cannot send one).",
    };
  if (endpoints.some((endpoint) => endpoint.declaration.apiKeys === true))
    schemes[API_KEY_SCHEME] = {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'cmk_ + 50 letters and digits',
      description:
        'A personal API key (POST /api/api-keys), sent as `Authorization: Bearer cmk_...`: it acts as its owner, on these routes only, while the operator has API_KEYS on.',
    };
  const scopes = auth.mode === 'entra' ? [delegatedScope(auth)] : [];
  return {
    schemes,
    requirement({ auth: mode, ticketParameter, apiKeys }) {
      if (mode === 'anonymous') return [];
      const caller = { [CALLER_SCHEME]: scopes };
      if (apiKeys === true) return [caller, { [API_KEY_SCHEME]: [] }];
      return mode === 'caller-or-ticket' && ticketParameter !== undefined
        ? [caller, { [TICKET_SCHEME]: [] }]
        : [caller];
    },
  };
}

function callerScheme(auth: AuthConfig): Json {
  switch (auth.mode) {
    case 'dev':
      return {
        type: 'apiKey',
        in: 'header',
        name: 'x-ms-client-principal-id',
        description: 'Local development only: a dev user (user_001..user_003), from loopback callers.',
      };
    case 'app-service':
      return {
        type: 'apiKey',
        in: 'header',
        name: 'x-ms-client-principal',
        description:
          'Set by App Service authentication for a signed-in user (sign in at /.auth/login/aad); a client never sends it itself.',
      };
    case 'entra': {
      const authority = `https://login.microsoftonline.com/${auth.tenantId}/oauth2/v2.0`;
      const flows: Json = {
        authorizationCode: {
          authorizationUrl: `${authority}/authorize`,
          tokenUrl: `${authority}/token`,
          scopes: { [delegatedScope(auth)]: 'Act for the signed-in user.' },
        },
      };
      if (auth.serviceAppRole !== undefined)
        flows['clientCredentials'] = {
          tokenUrl: `${authority}/token`,
          scopes: {
            [`${applicationIdUri(auth.audiences[0] ?? '')}/.default`]: `A service granted the app role ${auth.serviceAppRole}.`,
          },
        };
      return {
        type: 'oauth2',
        description: 'An Entra ID access token for this API, sent as `Authorization: Bearer <token>`.',
        flows,
      };
    }
  }
}

function delegatedScope(auth: Extract<AuthConfig, { mode: 'entra' }>): string {
  return `${applicationIdUri(auth.audiences[0] ?? '')}/${auth.scope}`;
}

/** A bare client id audience stands for its default application ID URI, api://<client id>. */
function applicationIdUri(audience: string): string {
  const uri = /^[a-z][a-z0-9+.-]*:\/\//i.test(audience) ? audience : `api://${audience}`;
  return uri.replace(/\/+$/, '');
}

/** A top-level schema as a component: the dialect is the document's, so `$schema` goes. */
function componentSchema(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/**
 * A schema placed inside the document. zod writes `$defs` for shared or recursive parts and `#` for the schema itself
 * (a tree of itself); inside the document both would resolve against its root, so they move to components, named
 * after the operation and the schema's place in it.
 */
function hoistDefinitions(schema: JsonSchema, name: string, components: Record<string, unknown>): JsonSchema {
  const { $defs, ...root } = componentSchema(schema) as JsonSchema & { $defs?: Record<string, unknown> };
  const component = (ref: string) => `#/components/schemas/${ref}`;
  let selfReferenced = false;
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => {
        if (key !== '$ref' || typeof inner !== 'string') return [key, rewrite(inner)];
        if (inner === '#') {
          selfReferenced = true;
          return [key, component(name)];
        }
        return inner.startsWith('#/$defs/')
          ? [key, component(`${name}.${inner.slice('#/$defs/'.length)}`)]
          : [key, inner];
      }),
    );
  };
  for (const [definition, body] of Object.entries($defs ?? {}))
    components[`${name}.${definition}`] = rewrite(body);
  const rewritten = rewrite(root) as JsonSchema;
  if (!selfReferenced) return rewritten;
  components[name] = rewritten;
  return { $ref: component(name) } as JsonSchema;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
