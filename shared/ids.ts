// The closed formats of the ids a client can name that become Cosmos DB item ids, partition keys or URL segments,
// and their zod schemas for the edges (HTTP, MCP). Each format lists the forms it admits: admitting another form
// (the AI SDK's 16-character message ids as session ids, say) is one more line in its list.
import { z } from 'zod';

/** One admitted form of an id: a pattern (a regular expression's source, unanchored) and its canonical spelling. */
interface IdForm {
  pattern: string;
  canonical?: (value: string) => string;
}

/** A UUID in either case, stored and compared in lower case. */
const UUID: IdForm = {
  pattern: '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
  canonical: (value) => value.toLowerCase(),
};

/** The AI SDK's own ids (`generateId`, what `useChat` gives a chat and its messages): 16 letters and digits. */
const AI_SDK_ID: IdForm = { pattern: '[A-Za-z0-9]{16}' };

interface IdFormat {
  forms: readonly IdForm[];
  /** What a refused value is told, after the field's name ("sessionId must be ..."). */
  message: string;
}

export const ID_FORMATS = {
  /**
   * The caller's id, a partition key and a Web PubSub user id: a dev user (`user_001`), an Entra ID object id
   * (a GUID), an App Service principal id (a GUID, or another provider's own id: digits, or dotted as Apple's).
   * It starts with a letter or a digit, so it is never `.` or `..`.
   */
  userId: {
    forms: [{ pattern: '[A-Za-z0-9][A-Za-z0-9._@-]{0,127}' }],
    message: "must be 1 to 128 letters, digits, '.', '_', '@' or '-', starting with a letter or a digit",
  },
  /** Made by the server (POST /api/session/start), or chosen by a useChat app as its chat id (POST /api/ui/chat). */
  sessionId: {
    forms: [UUID, AI_SDK_ID],
    message:
      'must be a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e, or 16 letters and digits (an AI SDK id)',
  },
  /** Made by the client, unique within its session (a useChat app's user message ids are AI SDK ids). */
  chatMessageId: {
    forms: [UUID, AI_SDK_ID],
    message:
      'must be a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e, or 16 letters and digits (an AI SDK id)',
  },
  /** A profile fact: `fact-` and 16 hex digits of a hash of the turn that stated it. */
  factId: {
    forms: [{ pattern: 'fact-[0-9a-f]{16}' }],
    message: 'must be a factId that GET /api/memory/users/{userId}/memories shows',
  },
  /** A knowledge-base document: the first half of a SHA-256 over its library and content. */
  documentId: {
    forms: [{ pattern: '[0-9a-f]{32}' }],
    message: 'must be 32 lowercase hex characters',
  },
  /**
   * A share link: 128 random bits in base64url, 22 characters (the last one carries 2 bits, so it is one of
   * A, Q, g, w). Made by the server only; a guess is as likely as guessing a 128-bit key.
   */
  shareId: {
    forms: [{ pattern: '[A-Za-z0-9_-]{21}[AQgw]' }],
    message: 'must be a shareId as POST .../shares gives it: 22 base64url characters',
  },
  /**
   * An MCP server: a user's is `mcp-` and 16 random hex digits (made by the server); an operator's (MCP_SERVERS) is
   * `mcp-op-` and its name.
   */
  mcpServerId: {
    forms: [{ pattern: 'mcp-[0-9a-f]{16}' }, { pattern: 'mcp-op-[a-z0-9][a-z0-9_-]{0,31}' }],
    message:
      'must be an MCP server id as GET /api/mcp-servers lists it (mcp- and 16 hex digits, or mcp-op-{name})',
  },
  /** A file attached to a message: `att-` and 128 random bits in hex. Made by the server only. */
  attachmentId: {
    forms: [{ pattern: 'att-[0-9a-f]{32}' }],
    message: 'must be an attachmentId as POST /api/attachments gives it: att- and 32 hex characters',
  },
  /** A chat model of the catalogue: an Azure OpenAI deployment's name, or a model's (Ollama's `llama3:8b`). */
  modelId: {
    forms: [{ pattern: '[A-Za-z0-9][A-Za-z0-9._:-]{0,99}' }],
    message: "must be a model id that GET /api/models lists (letters, digits, '.', '_', ':', '-')",
  },
  /** An assistant: `asst-` and 32 hex digits, made by the server (POST /api/assistants). */
  assistantId: {
    forms: [{ pattern: 'asst-[0-9a-f]{32}' }],
    message: 'must be an assistantId as POST /api/assistants gives it: asst- and 32 lowercase hex digits',
  },
  /** A project: `proj-` and 32 hex digits, made by the server (POST /api/projects). */
  projectId: {
    forms: [{ pattern: 'proj-[0-9a-f]{32}' }],
    message: 'must be a projectId as POST /api/projects gives it: proj- and 32 lowercase hex digits',
  },
  /** A personal API key's id: the 12 letters and digits after `cmk_` in the key, not secret (the key's list shows it). */
  apiKeyId: {
    forms: [{ pattern: '[0-9A-Za-z]{12}' }],
    message: 'must be an API key id as GET /api/api-keys lists it: 12 letters and digits',
  },
} as const satisfies Record<string, IdFormat>;

export type IdKind = keyof typeof ID_FORMATS;

const anchored = (pattern: string) => new RegExp(`^(?:${pattern})$`);
const formsOf = (kind: IdKind): readonly IdForm[] => ID_FORMATS[kind].forms;
const PATTERNS = Object.fromEntries(
  (Object.keys(ID_FORMATS) as IdKind[]).map((kind) => [
    kind,
    anchored(
      formsOf(kind)
        .map((form) => form.pattern)
        .join('|'),
    ),
  ]),
) as Record<IdKind, RegExp>;
const CANONICAL_FORMS = Object.fromEntries(
  (Object.keys(ID_FORMATS) as IdKind[]).map((kind) => [
    kind,
    formsOf(kind).flatMap(({ pattern, canonical }) =>
      canonical === undefined ? [] : [{ pattern: anchored(pattern), canonical }],
    ),
  ]),
) as Record<IdKind, { pattern: RegExp; canonical: (value: string) => string }[]>;

/** Whether `value` is an AI SDK id (a form the server never makes for its own sessions). */
export function isAiSdkId(value: string): boolean {
  return anchored(AI_SDK_ID.pattern).test(value);
}

/** Whether `value` is an id of this kind, as a client may spell it. */
export function isId(kind: IdKind, value: string): boolean {
  return PATTERNS[kind].test(value);
}

/** The id as it is stored: its form's canonical spelling (a UUID in lower case). */
export function canonicalId(kind: IdKind, value: string): string {
  const form = CANONICAL_FORMS[kind].find(({ pattern }) => pattern.test(value));
  return form === undefined ? value : form.canonical(value);
}

/**
 * The edge's schema of an id: a string of one of the kind's forms, in its canonical spelling. The one pattern
 * also goes into the JSON Schema that MCP clients are shown.
 */
export function idSchema(kind: IdKind): z.ZodType<string> {
  const schema = idPatternSchema(kind);
  return CANONICAL_FORMS[kind].length === 0 ? schema : schema.transform((value) => canonicalId(kind, value));
}

/** The same check without the canonical spelling, for a schema shown as JSON Schema (a model's tool arguments). */
export function idPatternSchema(kind: IdKind): z.ZodString {
  return z.string({ error: 'must be a string' }).regex(PATTERNS[kind], ID_FORMATS[kind].message);
}

export const userIdSchema = idSchema('userId');
export const sessionIdSchema = idSchema('sessionId');
export const chatMessageIdSchema = idSchema('chatMessageId');
export const factIdSchema = idSchema('factId');
export const documentIdSchema = idSchema('documentId');
export const shareIdSchema = idSchema('shareId');
export const mcpServerIdSchema = idSchema('mcpServerId');
export const modelIdSchema = idSchema('modelId');
export const assistantIdSchema = idSchema('assistantId');
export const projectIdSchema = idSchema('projectId');
export const apiKeyIdSchema = idSchema('apiKeyId');
