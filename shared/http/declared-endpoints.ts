// How a client-facing description reads the endpoint declarations: which endpoints there are, their body and
// its limits under an app's settings, their fields as JSON Schema, and every status they answer.
import { z } from 'zod';
import type { EndpointDeclaration, EndpointReplies, MediaReply } from './endpoint.js';
import { queryIntegers } from '../validation.js';

/** A declared HTTP endpoint, with the name, route and methods of its function table entry. */
export interface DeclaredEndpoint<TApp> {
  name: string;
  /** Route under /api, in the host's template syntax: `stream/{sessionId}/{chatMessageId}`. */
  route: string;
  methods: readonly string[];
  declaration: EndpointDeclaration<TApp>;
}

/** What a function table entry offers this module: HTTP entries carry a declaration. */
export interface TableEntry<TApp> {
  kind: string;
  name: string;
  route?: string;
  methods?: readonly string[];
  declaration?: EndpointDeclaration<TApp>;
}

/**
 * The HTTP endpoints of a function table. Each must be described to clients: one without a declaration, or
 * without responses, is a mistake the generators stop at with its name.
 */
export function declaredEndpoints<TApp>(table: readonly TableEntry<TApp>[]): DeclaredEndpoint<TApp>[] {
  return table
    .filter((entry) => entry.kind === 'http')
    .map((entry) => {
      const { declaration } = entry;
      if (declaration === undefined)
        throw new Error(
          `HTTP function '${entry.name}' has no declaration: declare it with endpoint(), or give it a declaration with its summary, auth and responses.`,
        );
      if (declaration.responses === undefined)
        throw new Error(`Endpoint '${entry.name}' declares no responses: its success status at least.`);
      return { name: entry.name, route: entry.route ?? '', methods: entry.methods ?? [], declaration };
    });
}

/** A JSON Schema node, as z.toJSONSchema writes it (only what the generators read). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxItems?: number;
  $schema?: string;
}

/**
 * A request part's schema as a client sends it (the input side: defaults are optional). A check JSON Schema cannot
 * say (a refinement, a transform) is left open rather than failing the whole description.
 */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override({ zodSchema, jsonSchema }) {
      const integer = queryIntegers.get(zodSchema as unknown as z.ZodType);
      if (integer === undefined) return;
      const { description } = jsonSchema;
      for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
      Object.assign(
        jsonSchema,
        { type: 'integer', ...integer },
        description === undefined ? {} : { description },
      );
    },
  }) as JsonSchema;
}

/** A reply's schema as the server writes it. */
export function outputJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
}

/** An endpoint's body under an app's settings: its schema and byte limit may follow them. */
export interface ResolvedBody {
  schema: z.ZodType;
  maxBytes: number;
  optional: boolean;
  multipart: boolean;
}

export function resolvedBody<TApp>(
  declaration: EndpointDeclaration<TApp>,
  app: TApp,
): ResolvedBody | undefined {
  const body = declaration.body;
  if (body === undefined) return undefined;
  return {
    schema: typeof body.schema === 'function' ? body.schema(app) : body.schema,
    maxBytes: typeof body.maxBytes === 'number' ? body.maxBytes : body.maxBytes(app),
    optional: body.optional === true,
    multipart: body.multipart !== undefined,
  };
}

/** A byte count as a reader says it: `4 KiB`, `1 MiB`. */
export function bytes(count: number): string {
  if (count % (1024 * 1024) === 0) return `${count / (1024 * 1024)} MiB`;
  if (count % 1024 === 0) return `${count / 1024} KiB`;
  return `${count.toLocaleString('en-US')} bytes`;
}

/**
 * Every status an endpoint answers, in order: those its declaration implies (400, 401, 403, 413 and 415 follow from
 * its parts and its auth), then its own, which win on a clash.
 */
export function endpointStatuses<TApp>(endpoint: DeclaredEndpoint<TApp>, app: TApp): [number, string][] {
  const { declaration } = endpoint;
  const implied: Record<number, string> = {};
  if (declaration.params !== undefined || declaration.query !== undefined || declaration.body !== undefined)
    implied[400] = 'a path, query or body that does not parse (the problem lists each field)';
  if (declaration.auth !== 'anonymous') {
    implied[401] = 'no identity';
    implied[403] = "a userId that is not the caller's";
  }
  const body = resolvedBody(declaration, app);
  if (body !== undefined) {
    implied[413] = `a body over ${bytes(body.maxBytes)}`;
    implied[415] = body.multipart
      ? 'a body that is neither JSON nor multipart/form-data'
      : 'a body that is not JSON';
  }
  const all: Record<number, string> = { ...implied, ...declaration.responses };
  return Object.entries(all)
    .map(([status, meaning]): [number, string] => [Number(status), meaning])
    .sort(([a], [b]) => a - b);
}

export const isSuccessStatus = (status: number) => status < 400;

/** Statuses that answer with no body, so they need no reply schema. */
const BODILESS_STATUSES = new Set([204, 304]);

/** A declared reply's body by media type: a bare schema is JSON. */
export function replyContent(reply: EndpointReplies[number]): MediaReply['content'] {
  return '_zod' in reply ? { 'application/json': reply } : reply.content;
}

/** The success statuses of an endpoint that answer with a body but declare no reply schema for it. */
export function undeclaredReplies<TApp>(endpoint: DeclaredEndpoint<TApp>, app: TApp): number[] {
  return endpointStatuses(endpoint, app)
    .map(([status]) => status)
    .filter(
      (status) =>
        isSuccessStatus(status) &&
        !BODILESS_STATUSES.has(status) &&
        endpoint.declaration.replies?.[status] === undefined,
    );
}
