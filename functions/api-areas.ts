// The areas of the HTTP API, by the first segment of their routes, each with a note on what its endpoints share:
// docs/api.md's sections and the OpenAPI document's tags.
import type { ApiTag } from '../shared/http/openapi.js';

export const API_AREAS: readonly ApiTag[] = [
  {
    title: 'Health',
    routePrefixes: ['health'],
    note: 'Each dependency check is kept for `HEALTH_CACHE_SECONDS` (30), so polling costs little.',
  },
  {
    title: 'Chat',
    routePrefixes: ['session', 'chat'],
    note: `A message's text is \`text\` (or \`question\`), up to \`CHAT_MAX_TEXT_CHARS\` (8,000) characters. A \`chatMessageId\` is a UUID (or an AI SDK id of 16 letters and digits) the client makes, unique within its session; every idempotency key names the
session, so two users or two sessions using the same id never meet. \`question\` is accepted for \`text\` and
\`useMemory\` for \`use_memory\` (both, disagreeing → 400). \`editOf\` replaces an earlier message of the session:
the conversation branches there (see the README's "Stop, regenerate, edit: branches").`,
  },
  {
    title: 'Models',
    routePrefixes: ['models'],
    note: `The chat models of the catalogue (\`LLM_MODELS\`; unset: the one chat model of the LLM connection), each with who
may use it. A conversation's model is chosen at \`POST /api/session/start\` (\`model\`) and kept with it; \`POST /api/chat\`,
\`POST /api/ui/chat\` and regenerate may name another for one answer, which records the model that answered. A model
the caller may not use, or one the catalogue does not list, is a 403 naming it.`,
  },
  {
    title: 'Assistants',
    routePrefixes: ['assistants'],
    note: `An assistant bundles instructions, a model, built-in tools, knowledge, a memory choice (\`user\`: the user's shared
memory; \`assistant\`: its own; \`none\`) and conversation starters. It is private to its owner, or public when
\`ASSISTANTS_PUBLISHERS\` names the owner. Every edit is a new version; a conversation started with an assistant
(\`POST /api/session/start {assistantId}\`) records its id and version, so an edit never changes what an earlier
conversation was told. Another user's private assistant is the same 404 as an unknown one.`,
  },
  {
    title: 'Projects',
    routePrefixes: ['projects'],
    note: `A project holds a name, instructions and knowledge for the conversations filed in it
(\`POST /api/session/start {projectId}\`). Projects are their owner's only: another user's is the same 404 as an unknown one.`,
  },
  {
    title: 'Streaming',
    routePrefixes: ['realtime', 'stream'],
    note: 'The events themselves, and how to resume, are in [streaming.md](streaming.md).',
  },
  {
    title: 'useChat (the AI SDK)',
    routePrefixes: ['ui'],
    note: `The AI SDK's UI message stream protocol, for \`useChat\` apps: the chat \`id\` is the session (an AI SDK id of 16
letters and digits starts one on its first message), the last message is the turn (its \`id\` is the chatMessageId),
and \`use_memory\` and \`editOf\` go in the body or the last message's \`metadata\`. Chunks, finish reasons and resume are
in [streaming.md](streaming.md#the-ai-sdks-ui-message-stream).`,
  },
  {
    title: 'OpenAI-compatible API',
    routePrefixes: ['v1'],
    note: `For the \`openai\` SDKs and every tool built on them (\`baseURL: '<host>/api/v1'\`); see [openai-api.md](openai-api.md).
Every error, the body reader's and the identity's included, answers in OpenAI's shape \`{error: {message, type, code, param}}\`.
A model id is a catalogue model's, or \`assistant:<assistantId>\` for an assistant the caller can see.`,
  },
  {
    title: 'History',
    routePrefixes: ['history'],
    note: `Lists and conversations are paged: pass the answer's \`continuationToken\` back for the next page. A conversation
is read along its active branch (\`path\`): each message has its \`ordinal\`, \`branch\`, tool calls and results, a failed
turn's \`failure\`, and at a branch point \`alternatives\`; a turn shows as soon as its \`message-end\` is out. A title
is 1–200 characters without control characters, unpaired surrogates or bidi controls. A deleted conversation is
removed everywhere (history, hot store, turn events, stream tickets, turns, its memory), also while a turn of it
streams, and never comes back: a session id is never given out again.`,
  },
  {
    title: 'Sharing',
    routePrefixes: ['shares'],
    note: `A share is a snapshot of a conversation's shown branch, taken when the link is made (POST
/api/history/conversations/{sessionId}/shares, listed at GET /api/history/users/{userId}/shares): the messages'
text, times and the titles of the sources answers cite; never the system prompt, memory, the profile, other branches
or, unless the owner includes them, tool calls. A \`shareId\` is 128 random bits (22 base64url characters). Anyone
with the link reads it (\`X-Robots-Tag: noindex\`); an unknown, revoked or expired share, or one of a deleted
conversation, is the same 404. \`SHARING=off\` turns every sharing route off (403, code \`sharing_off\`).`,
  },
  {
    title: 'Memory',
    routePrefixes: ['memory'],
    note: `What the memory worker keeps about the caller. Facts come in every status (active, superseded, retracted) with
\`provenance\`, \`validFrom\`/\`validUntil\`, \`supersededBy\` and \`changeReason\`; summaries come without vectors. Forgetting a
conversation takes its summary and the facts that came only from it (facts also said elsewhere lose its sources),
and is at once: a forgotten memory is gone from search and from the next prompt. A search result has the
conversation's summary, themes, persons, places, \`user_sentiment\`, \`score\`, \`similarity\`, \`sessionId\`, \`title\`
and \`date\`. The export is NDJSON, one line per fact (\`type: "fact"\`) and per summary (\`type: "summary"\`), each with
its \`scope\`; the import takes that file's active facts (its summaries and past facts are counted in \`skipped\`) or
\`{statements}\`, and merges them as a turn's would be: a fact already held is \`unchanged\`, never duplicated.
Every fact and summary has a \`scope\`: \`user\` (the shared memory every conversation reads),
\`assistant:<assistantId>\` (an assistant that keeps its own memory) or \`project:<projectId>\`; \`?scope=\` reads
one, and \`PATCH .../memories/{factId}\` \`{scope}\` moves a fact, only into the caller's own scopes (another
user's project or private assistant is the same 404 as an unknown one). See
[assistants-projects.md](assistants-projects.md#where-memory-lives).`,
  },
  {
    title: 'Attachments',
    routePrefixes: ['attachments', 'attachment-rules'],
    note: `Files for a message: upload one (\`POST /api/attachments\`), then name its \`attachmentId\` in \`attachments\` of
\`POST /api/chat\`; a \`useChat\` file part (a \`data:\` URL) is stored the same way. The type is read from the bytes
(\`ATTACHMENTS_TYPES\`: PNG, JPEG, WebP, GIF, PDF and text by default); an image is refused past \`ATTACHMENTS_MAX_PIXELS\`
(read from its header, before decoding), then re-encoded without its metadata (EXIF, GPS) and scaled to
\`ATTACHMENTS_MAX_IMAGE_EDGE\`. A message carries at most \`ATTACHMENTS_MAX_PER_MESSAGE\` (10) files. An attachment is
its owner's only: anyone else gets 404. Each refusal's \`code\` names its rule. Details: [attachments.md](attachments.md).`,
  },
  {
    title: 'Knowledge base',
    routePrefixes: ['knowledge'],
    note: `Documents are private to their uploader, or in the shared library for the users and groups
\`KNOWLEDGE_SHARED_LIBRARY\` names. Formats: Markdown, plain text, HTML and PDF, up to
\`KNOWLEDGE_MAX_DOCUMENT_BYTES\` (10 MiB; the body limit below leaves room for base64). The same content again is the
same \`documentId\`. A document's \`status\` is \`queued\`, \`processing\`, \`ready\` or \`failed\` with \`failure: {code, reason}\`,
beside \`format\`, \`bytes\`, \`pageCount\`, \`chunkCount\`, \`library\` and \`ownedByYou\`. A search result has the chunk's
\`text\`, its document's \`title\` and \`documentId\`, \`pages\` (PDF), \`headings\`/\`heading\`, \`library\`, \`score\`,
\`similarity\` and \`citation\` (\`"Security Guide, p. 2"\`).`,
  },
  {
    title: 'Usage',
    routePrefixes: ['usage'],
    note: `Every model call is recorded once with its tokens and its cost at the \`LLM_PRICES\` table (US dollars per million
tokens), attributed to the caller, the conversation and the turn: the chat's rounds (\`turns\`), and the work users
never see (\`background\`: titles, the exchange index, summaries, profile extraction, embeddings, knowledge ingestion).
A model the table has no price for counts its tokens at 0 dollars. A turn's \`message-end\` carries its \`cost\`.`,
  },
  {
    title: 'MCP',
    routePrefixes: ['mcp', 'oauth-protected-resource'],
    note: `The memory tools over the Model Context Protocol (protocol revision \`2026-07-28\` and the 2025 ones), with the
same per-user authorisation as REST. The README shows how to point an MCP client at it.`,
  },
  {
    title: 'MCP servers',
    routePrefixes: ['mcp-servers'],
    note: `MCP servers whose tools the model may call in the caller's turns (Streamable HTTP, or HTTP+SSE for a server
that has only that; stdio cannot run on Functions): the caller's own, and the operator's (\`MCP_SERVERS\`, read-only).
A server's \`name\` (1–32 of a–z, 0–9, \`_\`, \`-\`) is unique per user and names its tools for the model
(\`mcp__{name}__{tool}\`); an \`id\` is \`mcp-\` and 16 hex digits (the operator's: \`mcp-op-{name}\`). Header values
(API keys) are sealed with AES-256-GCM and never returned, logged or traced: answers show \`headerNames\` only.
A server that requires OAuth shows \`authorization: required\` until the caller connects through \`oauth/start\` and
the callback, then \`connected\`; their tokens are sealed the same way, per user and server, and refreshed.
Another user's server is the same 404 as none. See [mcp-servers.md](mcp-servers.md).`,
  },
  {
    title: 'API keys',
    routePrefixes: ['api-keys'],
    note: `Personal API keys let a program act as their owner on the OpenAI-compatible API (\`/api/v1/...\`) and MCP
(\`/api/mcp\`), sent as \`Authorization: Bearer cmk_...\`; every other route refuses a key (401). A key is \`cmk_\`, a
12-character id, a 32-character secret and a CRC32 checksum (54 characters in all), shown once, at its creation; it is
stored only as a SHA-256 hash. A revoked key stops working within \`API_KEYS_CACHE_SECONDS\` (5) on every instance.
\`API_KEYS\` turns keys on (on locally, off in Azure unless the operator sets it); \`API_KEYS_MAX_PER_USER\` (10)
bounds how many a user holds. See [api-keys.md](api-keys.md).`,
  },
  {
    title: 'Your data',
    routePrefixes: ['account'],
    note: `Erasing all of a user's data runs each conversation's own delete first (its tombstone stops a running turn's
workers from writing anything back), then memory, knowledge documents and chunks, attachments, and a sweep of every
container for items that name the user (MCP servers, API keys, assistants, projects, usage records, quota counters). Only the
conversations' tombstones (a session id, the user id, when it was deleted) stay, until they expire. See
[your-data.md](your-data.md).`,
  },
  {
    title: 'Web client',
    routePrefixes: ['client-config'],
    note: "What the browser client reads before it signs its user in (the README's `Signing in to the web client` says how each mode does).",
  },
  {
    title: 'API description',
    routePrefixes: ['openapi.json', 'docs'],
    note: 'This API described: the OpenAPI 3.1 document for tools (generated from the endpoint declarations, like this reference) and the same as an HTML page to read in a browser.',
  },
];
