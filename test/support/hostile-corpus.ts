// The hostile-input corpus: documents and requests an attacker (user_002, or no one) sends, each with what it attacks
// and what the product must answer. Generated in code, the same on every run; requests that name another user's
// data take the ids of the control user's session, turn, document and fact once those exist.
import type { RawAnswer, RawRequest } from './hostile-client.js';
import {
  cyclicPagesPdf,
  encryptedPdf,
  entityBombHtml,
  flateBombPdf,
  malformedPdf,
  nestedXObjectPdf,
  truncatedPdf,
  zipBomb,
} from './hostile-documents.js';

/** The ids the corpus aims at: the control user's (whose data must survive) and the attacker's own. */
export interface CorpusTargets {
  control: { userId: string; sessionId: string; chatMessageId: string; documentId: string; factId: string };
  attacker: { userId: string; sessionId: string; chatMessageId: string };
}

/** A document uploaded by the attacker: accepted, then read by the ingestion worker. */
export interface HostileUpload {
  fileName: string;
  contentType: string;
  bytes: Uint8Array;
}

export type Expectation =
  /**
   * The answer's status is one of these; a 4xx is application/problem+json unless `problemJson` is false (the
   * HTTP parser's own refusals, MCP's JSON-RPC answers); `check` names anything else wrong with the answer.
   */
  | {
      answer: 'status';
      status: readonly number[];
      problemJson?: boolean;
      check?: (answer: RawAnswer) => string | undefined;
    }
  /**
   * The upload is accepted (202), and the document ends `failed` with a reason a user can read that matches
   * `reason` (or, with `mayBeReady`, ends ready: a document a lenient reader may legitimately recover), its message
   * delivered once; or the upload is refused with one of `refused`.
   */
  | {
      answer: 'document';
      reason: RegExp;
      mayBeReady?: (document: { chunkCount?: number | undefined }) => string | undefined;
      refused?: readonly number[];
    };

export interface HostileEntry {
  name: string;
  attacks: string;
  expect: Expectation;
  /** The request, or for a document the upload (sent as a multipart form). */
  build(targets: CorpusTargets): RawRequest | HostileUpload;
}

export const ATTACKER = 'user_002';
export const CONTROL = 'user_001';
const IDENTITY = 'x-ms-client-principal-id';
const asAttacker = (headers: Record<string, string> = {}) => ({ [IDENTITY]: ATTACKER, ...headers });
const json = (value: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(value) });

function jsonRequest(method: string, path: string, value: unknown, headers = {}): RawRequest {
  const { body, ...type } = json(value);
  return { method, path, headers: asAttacker({ ...type, ...headers }), body };
}

/** What a failed document's reason must be like: the product's words, not a stack or an engine's message. */
const READ_FAILURE =
  /could not be read|cannot be read|took longer|too (deeply )?nested|nested|expands|more than|too large|password|encrypted|not valid|no text/i;

// --- Documents --------------------------------------------------------------------------------------------------

const MIB = 1024 * 1024;
const text = (value: string) => new Uint8Array(Buffer.from(value, 'utf8'));

function documentEntry(
  name: string,
  attacks: string,
  upload: () => HostileUpload,
  options: Partial<Extract<Expectation, { answer: 'document' }>> = {},
): HostileEntry {
  return {
    name,
    attacks,
    expect: { answer: 'document', reason: READ_FAILURE, ...options },
    build: () => upload(),
  };
}

/**
 * Valid text whose only harm is the time a naive reader spends on it: a reader that gets through it within its
 * budget may index it (the attack was the stall, which the suite's deadline and health polls catch).
 */
const readInBudget = () => undefined;

const documentEntries: HostileEntry[] = [
  documentEntry(
    'markdown: "_a" × 40,000',
    "marked's emphasis scanning, quadratic in the run's length (seconds of CPU from 80 KB)",
    () => ({ fileName: 'underscores.md', contentType: 'text/markdown', bytes: text('_a'.repeat(40_000)) }),
    { mayBeReady: readInBudget },
  ),
  documentEntry(
    'markdown: "*a" × 40,000',
    'the same quadratic emphasis scan with asterisks',
    () => ({ fileName: 'asterisks.md', contentType: 'text/markdown', bytes: text('*a'.repeat(40_000)) }),
    { mayBeReady: readInBudget },
  ),
  documentEntry(
    'markdown: "> " × 50,000',
    'block quotes nested 50,000 deep: a recursive reader runs out of stack',
    () => ({
      fileName: 'quotes.md',
      contentType: 'text/markdown',
      bytes: text(`${'> '.repeat(50_000)}deep`),
    }),
  ),
  documentEntry(
    'markdown: "- " × 10,000',
    'lists nested 10,000 deep on one line: a recursive reader runs out of stack',
    () => ({ fileName: 'lists.md', contentType: 'text/markdown', bytes: text(`${'- '.repeat(10_000)}deep`) }),
  ),
  documentEntry(
    'html: "<td> </td>" × 40,000',
    'a table row of 40,000 empty cells: re-scanning the row for each cell is quadratic',
    () => ({
      fileName: 'cells.html',
      contentType: 'text/html',
      bytes: text(`<table><tr>${'<td> </td>'.repeat(40_000)}</tr></table>`),
    }),
    { mayBeReady: readInBudget },
  ),
  documentEntry('html: 100,000 nested <div>s', 'elements nested 100,000 deep', () => ({
    fileName: 'divs.html',
    contentType: 'text/html',
    bytes: text(`${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}`),
  })),
  documentEntry(
    'html: entity bomb ("billion laughs" in the DOCTYPE)',
    'entities that expand to 3 GB if a reader expands declared entities',
    () => ({ fileName: 'laughs.html', contentType: 'text/html', bytes: text(entityBombHtml()) }),
    {
      // HTML readers do not expand declared entities: the page may be indexed, as its few words.
      mayBeReady: (document) =>
        (document.chunkCount ?? 0) <= 3
          ? undefined
          : `it made ${document.chunkCount} chunks: entities expanded`,
    },
  ),
  documentEntry(
    'text: one line of 6 MB',
    'a single line with no space or break, past the characters a document may hold',
    () => ({ fileName: 'line.txt', contentType: 'text/plain', bytes: text('a'.repeat(6 * MIB)) }),
  ),
  documentEntry(
    'pdf: FlateDecode bomb (256 MiB from 260 KB)',
    "a page's content stream that inflates to 256 MiB",
    () => ({ fileName: 'bomb.pdf', contentType: 'application/pdf', bytes: flateBombPdf(256) }),
  ),
  documentEntry(
    'pdf: FlateDecode twice (256 MiB from 1 KB)',
    'a bomb inside a bomb: /Filter [/FlateDecode /FlateDecode]',
    () => ({ fileName: 'bomb2.pdf', contentType: 'application/pdf', bytes: flateBombPdf(256, 2) }),
  ),
  documentEntry(
    'pdf: form XObjects nested 16 deep, each drawn twice',
    '65,536 copies of one word from 3 KB: exponential text extraction',
    () => ({ fileName: 'xobjects.pdf', contentType: 'application/pdf', bytes: nestedXObjectPdf(16) }),
  ),
  documentEntry(
    'pdf: encrypted (standard security handler, unknown password)',
    'a password-protected PDF',
    () => ({ fileName: 'locked.pdf', contentType: 'application/pdf', bytes: encryptedPdf() }),
  ),
  documentEntry(
    'pdf: truncated inside its page, no cross-reference table',
    'a cut-off download',
    () => ({ fileName: 'truncated.pdf', contentType: 'application/pdf', bytes: truncatedPdf() }),
    // A reader may recover a truncated PDF's objects: what it finds is indexed.
    { mayBeReady: () => undefined },
  ),
  documentEntry('pdf: header then 64 KB of noise', 'a malformed PDF', () => ({
    fileName: 'noise.pdf',
    contentType: 'application/pdf',
    bytes: malformedPdf(),
  })),
  documentEntry('pdf: page tree that is its own kid', 'a reference cycle in the page tree', () => ({
    fileName: 'cycle.pdf',
    contentType: 'application/pdf',
    bytes: cyclicPagesPdf(),
  })),
  documentEntry(
    'zip bomb named .docx',
    'a Word file (a zip) whose one entry inflates to 256 MiB: a type the knowledge base does not read',
    () => ({
      fileName: 'bomb.docx',
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      bytes: zipBomb('word/document.xml', 256),
    }),
    { refused: [415] },
  ),
  documentEntry(
    'zip bomb named .zip',
    'an archive whose one entry inflates to 256 MiB',
    () => ({ fileName: 'bomb.zip', contentType: 'application/zip', bytes: zipBomb('bomb.md', 256) }),
    { refused: [415] },
  ),
  documentEntry(
    'zip bomb named .md',
    'binary bytes claiming to be Markdown',
    () => ({ fileName: 'bomb.md', contentType: 'text/markdown', bytes: zipBomb('bomb.md', 64) }),
    { refused: [400] },
  ),
  documentEntry(
    'xml: entity bomb as application/xml',
    'an XML document with "billion laughs"',
    () => ({ fileName: 'laughs.xml', contentType: 'application/xml', bytes: text(entityBombHtml()) }),
    { refused: [415] },
  ),
];

// --- Ids in every route -----------------------------------------------------------------------------------------

/** A bad id as it is written in a path segment, in a query and in a JSON body. */
interface BadId {
  label: string;
  segment: string;
  query: string;
  value: string;
}

const BAD_IDS: readonly BadId[] = [
  { label: '.', segment: '.', query: '.', value: '.' },
  { label: '..', segment: '..', query: '..', value: '..' },
  { label: '%2e%2e', segment: '%2e%2e', query: '%2e%2e', value: '%2e%2e' },
  { label: '%2E', segment: '%2E', query: '%2E', value: '%2E' },
  { label: 'NUL', segment: '%00', query: '%00', value: '\u0000' },
  { label: 'LF', segment: '%0A', query: '%0A', value: '\n' },
  { label: 'ESC', segment: '%1B', query: '%1B', value: '\u001b' },
  { label: 'a/b', segment: 'a%2Fb', query: 'a%2Fb', value: 'a/b' },
  { label: 'a\\b', segment: 'a%5Cb', query: 'a%5Cb', value: 'a\\b' },
  { label: '?', segment: '%3F', query: '%3F', value: '?' },
  { label: '#', segment: '%23', query: '%23', value: '#' },
];

type IdField = {
  field: string;
  /** Where the bad id goes; t are the targets (the attacker's own ids fill the other fields). */
  request: (bad: BadId, t: CorpusTargets) => RawRequest;
  /** Statuses that refuse it; default 400 (a path segment: 400 or 404, the route not matching). */
  status?: readonly number[];
  problemJson?: boolean;
  check?: (answer: RawAnswer) => string | undefined;
};

const PATH_REFUSAL = [400, 404];
const USER_PATH_REFUSAL = [400, 403, 404];
const get = (path: string): RawRequest => ({ method: 'GET', path, headers: asAttacker() });
const del = (path: string): RawRequest => ({ method: 'DELETE', path, headers: asAttacker() });

/** An MCP tools/call at the current protocol revision, as the attacker. */
export function mcpToolCall(name: string, args: Record<string, unknown>): RawRequest {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'hostile-suite', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return jsonRequest(
    'POST',
    '/api/mcp',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: meta } },
    {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
  );
}

/** The JSON-RPC answer of an MCP call (its JSON, or its one SSE message's data). */
export function mcpResult(answer: RawAnswer): {
  result?: { isError?: boolean; content?: unknown };
  error?: unknown;
} {
  const data = answer.text.startsWith('{') ? answer.text : (/^data: (.*)$/m.exec(answer.text)?.[1] ?? '{}');
  try {
    return JSON.parse(data) as { result?: { isError?: boolean }; error?: unknown };
  } catch {
    return {};
  }
}

/** An MCP tool call that must not succeed: a tool error, a JSON-RPC error, or a 4xx. */
const mcpRefused = (answer: RawAnswer): string | undefined => {
  if (answer.status >= 400) return undefined;
  const reply = mcpResult(answer);
  return reply.error !== undefined || reply.result?.isError === true
    ? undefined
    : `the tool succeeded: ${answer.text.slice(0, 200)}`;
};

const idFields: IdField[] = [
  {
    field: 'cancel: path sessionId',
    request: (bad, t) => ({
      method: 'POST',
      path: `/api/chat/${bad.segment}/${t.attacker.chatMessageId}/cancel`,
      headers: asAttacker(),
    }),
    status: PATH_REFUSAL,
  },
  {
    field: 'cancel: path chatMessageId',
    request: (bad, t) => ({
      method: 'POST',
      path: `/api/chat/${t.attacker.sessionId}/${bad.segment}/cancel`,
      headers: asAttacker(),
    }),
    status: PATH_REFUSAL,
  },
  {
    field: 'regenerate: path chatMessageId',
    request: (bad, t) =>
      jsonRequest('POST', `/api/chat/${t.attacker.sessionId}/${bad.segment}/regenerate`, {
        chatMessageId: randomUUIDFor(bad),
      }),
    status: PATH_REFUSAL,
  },
  {
    field: 'regenerate: body chatMessageId',
    request: (bad, t) =>
      jsonRequest('POST', `/api/chat/${t.attacker.sessionId}/${t.attacker.chatMessageId}/regenerate`, {
        chatMessageId: bad.value,
      }),
  },
  {
    field: 'stream: path sessionId',
    request: (bad, t) => get(`/api/stream/${bad.segment}/${t.attacker.chatMessageId}`),
    status: PATH_REFUSAL,
  },
  {
    field: 'stream: path chatMessageId',
    request: (bad, t) => get(`/api/stream/${t.attacker.sessionId}/${bad.segment}`),
    status: PATH_REFUSAL,
  },
  {
    field: 'negotiate: query sessionId',
    request: (bad) => get(`/api/realtime/negotiate?sessionId=${bad.query}`),
  },
  {
    field: 'chat: body sessionId',
    request: (bad) =>
      jsonRequest('POST', '/api/chat', {
        sessionId: bad.value,
        chatMessageId: randomUUIDFor(bad),
        text: 'hi',
      }),
  },
  {
    field: 'chat: body chatMessageId',
    request: (bad, t) =>
      jsonRequest('POST', '/api/chat', {
        sessionId: t.attacker.sessionId,
        chatMessageId: bad.value,
        text: 'hi',
      }),
  },
  {
    field: 'chat: body editOf',
    request: (bad, t) =>
      jsonRequest('POST', '/api/chat', {
        sessionId: t.attacker.sessionId,
        chatMessageId: randomUUIDFor(bad),
        text: 'hi',
        editOf: bad.value,
      }),
  },
  {
    field: 'session start: body userId',
    request: (bad) => jsonRequest('POST', '/api/session/start', { userId: bad.value }),
    status: [400, 403],
  },
  {
    field: 'conversation: GET path sessionId',
    request: (bad) => get(`/api/history/conversations/${bad.segment}`),
    status: PATH_REFUSAL,
  },
  {
    field: 'conversation: DELETE path sessionId',
    request: (bad) => del(`/api/history/conversations/${bad.segment}`),
    status: PATH_REFUSAL,
  },
  {
    field: 'branch: path sessionId',
    request: (bad, t) =>
      jsonRequest('PUT', `/api/history/conversations/${bad.segment}/branch`, {
        chatMessageId: t.attacker.chatMessageId,
      }),
    status: PATH_REFUSAL,
  },
  {
    field: 'branch: body chatMessageId',
    request: (bad, t) =>
      jsonRequest('PUT', `/api/history/conversations/${t.attacker.sessionId}/branch`, {
        chatMessageId: bad.value,
      }),
  },
  {
    field: 'title: path sessionId',
    request: (bad) => jsonRequest('PUT', `/api/history/conversations/${bad.segment}/title`, { title: 'x' }),
    status: PATH_REFUSAL,
  },
  {
    field: 'export: path sessionId',
    request: (bad) => get(`/api/history/conversations/${bad.segment}/export`),
    status: PATH_REFUSAL,
  },
  {
    field: 'conversations: path userId',
    request: (bad) => get(`/api/history/users/${bad.segment}/conversations`),
    status: USER_PATH_REFUSAL,
  },
  {
    field: 'conversations: query continuationToken',
    request: (bad) => get(`/api/history/users/${ATTACKER}/conversations?continuationToken=${bad.query}`),
  },
  {
    field: 'stats: path userId',
    request: (bad) => get(`/api/history/users/${bad.segment}/stats`),
    status: USER_PATH_REFUSAL,
  },
  {
    field: 'memories: GET path userId',
    request: (bad) => get(`/api/memory/users/${bad.segment}/memories`),
    status: USER_PATH_REFUSAL,
  },
  {
    field: 'memories: DELETE path userId',
    request: (bad) => del(`/api/memory/users/${bad.segment}/memories`),
    status: USER_PATH_REFUSAL,
  },
  {
    field: 'memories: query continuationToken',
    request: (bad) => get(`/api/memory/users/${ATTACKER}/memories?continuationToken=${bad.query}`),
  },
  {
    field: 'forget: query factId',
    request: (bad) => del(`/api/memory/users/${ATTACKER}/memories?factId=${bad.query}`),
    // An id of the closed format that names no fact is a 404; any other is refused as malformed.
    status: [400, 404],
  },
  {
    field: 'forget: query sessionId',
    request: (bad) => del(`/api/memory/users/${ATTACKER}/memories?sessionId=${bad.query}`),
  },
  {
    field: 'memory search: path userId',
    request: (bad) =>
      jsonRequest('POST', `/api/memory/users/${bad.segment}/conversations/search`, { query: 'trip' }),
    status: USER_PATH_REFUSAL,
  },
  {
    field: 'document: GET path documentId',
    request: (bad) => get(`/api/knowledge/documents/${bad.segment}`),
    status: PATH_REFUSAL,
  },
  {
    field: 'document: DELETE path documentId',
    request: (bad) => del(`/api/knowledge/documents/${bad.segment}`),
    status: PATH_REFUSAL,
  },
  {
    field: 'documents: query continuationToken',
    request: (bad) => get(`/api/knowledge/documents?continuationToken=${bad.query}`),
  },
  {
    field: 'MCP delete_memory: factId',
    request: (bad) => mcpToolCall('delete_memory', { factId: bad.value }),
    status: [200, 400],
    problemJson: false,
    check: mcpRefused,
  },
  {
    field: 'MCP delete_memory: sessionId',
    request: (bad) => mcpToolCall('delete_memory', { sessionId: bad.value }),
    status: [200, 400],
    problemJson: false,
    check: mcpRefused,
  },
];

/** A fresh-looking but fixed UUID per bad id, so the corpus is the same on every run. */
function randomUUIDFor(bad: BadId): string {
  const hex = Buffer.from(bad.label.padEnd(16, '-').slice(0, 16), 'latin1').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The statuses that refuse a bad id. A dot segment in a path (`.`, `..`, and `%2e`, `%2E` spelled out) is resolved
 * by URL rules before any route is matched, so the request names another route or none: it may then also be a 405,
 * or, for a GET, the caller's own data on the route it became.
 */
function refusals(field: IdField, bad: BadId, method: string): readonly number[] {
  const statuses = field.status ?? [400];
  const isPathField = statuses === PATH_REFUSAL || statuses === USER_PATH_REFUSAL;
  if (!isPathField || !/^(\.|%2e)+$/i.test(bad.segment)) return statuses;
  return [...statuses, 405, ...(method === 'GET' ? [200] : [])];
}

const PLACEHOLDER_TARGETS: CorpusTargets = {
  control: { userId: '', sessionId: '', chatMessageId: '', documentId: '', factId: '' },
  attacker: { userId: '', sessionId: '', chatMessageId: '' },
};

const idEntries: HostileEntry[] = idFields.flatMap((field) =>
  BAD_IDS.map((bad): HostileEntry => ({
    name: `id ${field.field} = ${JSON.stringify(bad.label)}`,
    attacks: `a ${field.field} that is not an id: it must never reach a Cosmos DB item URL or a query as one`,
    expect: {
      answer: 'status',
      status: refusals(field, bad, field.request(bad, PLACEHOLDER_TARGETS).method),
      ...(field.problemJson === undefined ? {} : { problemJson: field.problemJson }),
      ...(field.check === undefined ? {} : { check: field.check }),
    },
    build: (targets) => field.request(bad, targets),
  })),
);

// --- Another user's ids -----------------------------------------------------------------------------------------

function foreign(
  name: string,
  status: readonly number[],
  request: (t: CorpusTargets) => RawRequest,
  check?: (answer: RawAnswer, t: CorpusTargets) => string | undefined,
  problemJson?: boolean,
): HostileEntry {
  let targets: CorpusTargets | undefined;
  return {
    name: `other user: ${name}`,
    attacks: "user_002 reaching user_001's data",
    expect: {
      answer: 'status',
      status,
      ...(problemJson === undefined ? {} : { problemJson }),
      ...(check === undefined ? {} : { check: (answer: RawAnswer) => check(answer, targets!) }),
    },
    build: (t) => {
      targets = t;
      return request(t);
    },
  };
}

/** The answer shows none of the control user's ids. */
const showsNothingOf = (answer: RawAnswer, t: CorpusTargets) =>
  [t.control.sessionId, t.control.factId, t.control.documentId].some((id) => answer.text.includes(id))
    ? `the answer shows user_001's data: ${answer.text.slice(0, 200)}`
    : undefined;

const foreignEntries: HostileEntry[] = [
  foreign('POST /api/chat to their session', [403, 404], (t) =>
    jsonRequest('POST', '/api/chat', {
      sessionId: t.control.sessionId,
      chatMessageId: '00000000-0000-4000-8000-000000000001',
      text: 'hijack',
    }),
  ),
  foreign('cancel their turn', [403, 404], (t) => ({
    method: 'POST',
    path: `/api/chat/${t.control.sessionId}/${t.control.chatMessageId}/cancel`,
    headers: asAttacker(),
  })),
  foreign('regenerate their turn', [403, 404], (t) =>
    jsonRequest('POST', `/api/chat/${t.control.sessionId}/${t.control.chatMessageId}/regenerate`, {
      chatMessageId: '00000000-0000-4000-8000-000000000002',
    }),
  ),
  foreign('stream their turn', [403, 404], (t) =>
    get(`/api/stream/${t.control.sessionId}/${t.control.chatMessageId}`),
  ),
  foreign('stream their turn with a made-up ticket', [401, 403, 404], (t) => ({
    method: 'GET',
    // Well formed, naming their user: only the random part is made up.
    path: `/api/stream/${t.control.sessionId}/${t.control.chatMessageId}?ticket=${Buffer.from(t.control.userId).toString('base64url')}.${'A'.repeat(43)}`,
  })),
  foreign('negotiate for their session', [403, 404], (t) =>
    get(`/api/realtime/negotiate?sessionId=${t.control.sessionId}`),
  ),
  foreign('read their conversation', [403, 404], (t) =>
    get(`/api/history/conversations/${t.control.sessionId}`),
  ),
  foreign('export their conversation', [403, 404], (t) =>
    get(`/api/history/conversations/${t.control.sessionId}/export?format=json`),
  ),
  foreign('rename their conversation', [403, 404], (t) =>
    jsonRequest('PUT', `/api/history/conversations/${t.control.sessionId}/title`, { title: 'pwned' }),
  ),
  foreign('switch their branch', [403, 404], (t) =>
    jsonRequest('PUT', `/api/history/conversations/${t.control.sessionId}/branch`, {
      chatMessageId: t.control.chatMessageId,
    }),
  ),
  foreign('delete their conversation', [403, 404], (t) =>
    del(`/api/history/conversations/${t.control.sessionId}`),
  ),
  foreign('list their conversations', [403], () => get(`/api/history/users/${CONTROL}/conversations`)),
  foreign('their stats', [403], () => get(`/api/history/users/${CONTROL}/stats`)),
  foreign('read their memories', [403], () => get(`/api/memory/users/${CONTROL}/memories`)),
  foreign('forget all their memories', [403], () => del(`/api/memory/users/${CONTROL}/memories`)),
  foreign('forget their fact (by path)', [403], (t) =>
    del(`/api/memory/users/${CONTROL}/memories?factId=${encodeURIComponent(t.control.factId)}`),
  ),
  foreign('forget their fact (in their own path)', [404], (t) =>
    del(`/api/memory/users/${ATTACKER}/memories?factId=${encodeURIComponent(t.control.factId)}`),
  ),
  foreign('forget their conversation (in their own path)', [204, 404], (t) =>
    del(`/api/memory/users/${ATTACKER}/memories?sessionId=${t.control.sessionId}`),
  ),
  foreign('search their conversations', [403], () =>
    jsonRequest('POST', `/api/memory/users/${CONTROL}/conversations/search`, { query: 'lighthouse' }),
  ),
  foreign('read their document', [403, 404], (t) => get(`/api/knowledge/documents/${t.control.documentId}`)),
  foreign('delete their document', [403, 404], (t) =>
    del(`/api/knowledge/documents/${t.control.documentId}`),
  ),
  foreign(
    'search finds nothing of their documents',
    [200],
    () => jsonRequest('POST', '/api/knowledge/search', { query: 'lighthouse keeper tide tables' }),
    showsNothingOf,
  ),
  // A body or query userId naming another user is refused on every route that takes one, and on those that don't.
  foreign('session start with their userId', [403], () =>
    jsonRequest('POST', '/api/session/start', { userId: CONTROL }),
  ),
  foreign('chat with their userId', [403], (t) =>
    jsonRequest('POST', '/api/chat', {
      sessionId: t.attacker.sessionId,
      chatMessageId: '00000000-0000-4000-8000-000000000003',
      text: 'hi',
      userId: CONTROL,
    }),
  ),
  foreign('regenerate with their userId', [403], (t) =>
    jsonRequest('POST', `/api/chat/${t.attacker.sessionId}/${t.attacker.chatMessageId}/regenerate`, {
      chatMessageId: '00000000-0000-4000-8000-000000000004',
      userId: CONTROL,
    }),
  ),
  foreign('stream with their userId in the query', [403], (t) =>
    get(`/api/stream/${t.attacker.sessionId}/${t.attacker.chatMessageId}?userId=${CONTROL}`),
  ),
  foreign('rename with their userId', [403], (t) =>
    jsonRequest('PUT', `/api/history/conversations/${t.attacker.sessionId}/title`, {
      title: 'mine',
      userId: CONTROL,
    }),
  ),
  foreign('switch branch with their userId', [403], (t) =>
    jsonRequest('PUT', `/api/history/conversations/${t.attacker.sessionId}/branch`, {
      chatMessageId: t.attacker.chatMessageId,
      userId: CONTROL,
    }),
  ),
  foreign('memory search with their userId in the body', [403], () =>
    jsonRequest('POST', `/api/memory/users/${ATTACKER}/conversations/search`, {
      query: 'lighthouse',
      userId: CONTROL,
    }),
  ),
  foreign('knowledge search with their userId', [403], () =>
    jsonRequest('POST', '/api/knowledge/search', { query: 'lighthouse', userId: CONTROL }),
  ),
  foreign('upload with their userId', [403], () =>
    jsonRequest('POST', '/api/knowledge/documents', {
      fileName: 'theirs.md',
      contentType: 'text/markdown',
      contentBase64: Buffer.from('# Planted\n\nA document planted in their library.\n').toString('base64'),
      userId: CONTROL,
    }),
  ),
  foreign('list documents with their userId in the query', [400, 403], () =>
    get(`/api/knowledge/documents?userId=${CONTROL}`),
  ),
  foreign(
    'MCP delete_memory of their fact',
    [200, 400, 404],
    (t) => mcpToolCall('delete_memory', { factId: t.control.factId }),
    (answer) => mcpRefused(answer),
    false,
  ),
  foreign(
    'MCP delete_memory of their conversation',
    [200, 400, 404],
    (t) => mcpToolCall('delete_memory', { sessionId: t.control.sessionId }),
    undefined,
    false,
  ),
  foreign(
    'MCP get_user_profile with their userId',
    [200, 400],
    () => mcpToolCall('get_user_profile', { include_history: true, userId: CONTROL }),
    showsNothingOf,
    false,
  ),
  foreign(
    'MCP search with their userId',
    [200, 400],
    () =>
      mcpToolCall('search_conversation_history', { search_query: 'lighthouse', limit: 5, userId: CONTROL }),
    showsNothingOf,
    false,
  ),
  foreign('their id in the principal header, ours in the principal blob', [401], () => ({
    method: 'GET',
    path: `/api/history/users/${CONTROL}/conversations`,
    headers: {
      [IDENTITY]: CONTROL,
      'x-ms-client-principal': Buffer.from(
        JSON.stringify({ claims: [{ typ: 'oid', val: ATTACKER }] }),
      ).toString('base64'),
    },
  })),
];

// --- Identity and the local runtime's front door ----------------------------------------------------------------

const frontDoorEntries: HostileEntry[] = [
  {
    name: 'host: a DNS-rebinding name',
    attacks: 'a page on evil.example whose name now resolves to 127.0.0.1 calling the local runtime',
    expect: { answer: 'status', status: [403] },
    build: () => ({
      method: 'GET',
      path: `/api/history/users/${ATTACKER}/conversations`,
      headers: asAttacker({ host: 'evil.example:7071' }),
    }),
  },
  {
    name: 'host: a loopback-looking foreign name',
    attacks: 'DNS rebinding with a name that starts like localhost',
    expect: { answer: 'status', status: [403] },
    build: () => ({
      method: 'POST',
      path: '/api/session/start',
      headers: asAttacker({ host: 'localhost.evil.example' }),
    }),
  },
  {
    name: 'origin: a foreign page reading',
    attacks: "a page on another origin reading the dev user's conversations",
    expect: { answer: 'status', status: [403] },
    build: () => ({
      method: 'GET',
      path: `/api/history/users/${ATTACKER}/conversations`,
      headers: asAttacker({ origin: 'http://evil.example' }),
    }),
  },
  {
    name: 'origin: a foreign page deleting',
    attacks: "a page on another origin deleting the dev user's memories",
    expect: { answer: 'status', status: [403] },
    build: () => ({
      method: 'DELETE',
      path: `/api/memory/users/${ATTACKER}/memories`,
      headers: asAttacker({ origin: 'http://evil.example' }),
    }),
  },
  {
    name: 'identity: an unknown dev user',
    attacks: 'a made-up identity',
    expect: { answer: 'status', status: [401] },
    build: () => ({
      method: 'GET',
      path: '/api/history/users/user_999/conversations',
      headers: { [IDENTITY]: 'user_999' },
    }),
  },
  {
    name: 'identity: ".." as the user',
    attacks: 'a user id that is a path segment',
    expect: { answer: 'status', status: [401] },
    build: () => ({
      method: 'GET',
      path: `/api/history/users/${ATTACKER}/conversations`,
      headers: { [IDENTITY]: '..' },
    }),
  },
  {
    name: 'headers: 64 KB of one header',
    attacks: "the HTTP parser's header limit",
    expect: { answer: 'status', status: [400, 413, 431], problemJson: false },
    build: () => ({
      method: 'GET',
      path: '/api/health',
      headers: { 'x-padding': 'a'.repeat(64 * 1024) },
    }),
  },
];

// --- Bodies and names -------------------------------------------------------------------------------------------

const BOUNDARY = 'hostile-boundary-7d1c';

function multipart(parts: string[], closed = true): RawRequest {
  const body = `${parts.join('')}${closed ? `--${BOUNDARY}--\r\n` : ''}`;
  return {
    method: 'POST',
    path: '/api/knowledge/documents',
    headers: asAttacker({ 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }),
    body: Buffer.from(body, 'utf8'),
  };
}

function filePart(fileName: string, content: string, extraHeaders: string[] = []): string {
  return (
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n` +
    `Content-Type: text/markdown\r\n${extraHeaders.map((line) => `${line}\r\n`).join('')}\r\n${content}\r\n`
  );
}

function fieldPart(name: string, value: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}

/** Control characters, lone surrogates, bidirectional overrides, backslashes: none belongs in a shown title. */
const UNSAFE_TITLE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\\]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A title that was accepted shows none of the unsafe characters. */
function cleanTitleIn(path: (body: Record<string, unknown>) => unknown) {
  return (answer: RawAnswer): string | undefined => {
    if (answer.status >= 400) return undefined;
    let title: unknown;
    try {
      title = path(JSON.parse(answer.text) as Record<string, unknown>);
    } catch {
      return `the answer is not JSON: ${answer.text.slice(0, 100)}`;
    }
    return typeof title === 'string' && !UNSAFE_TITLE.test(title)
      ? undefined
      : `the title was kept as ${JSON.stringify(title)}`;
  };
}

const documentTitle = cleanTitleIn((body) => (body.document as { title?: unknown } | undefined)?.title);
const conversationTitle = cleanTitleIn((body) => body.title);

const UNSAFE_TITLES: [string, string][] = [
  ['NUL', 'a\u0000b'],
  ['ANSI escape', '\u001b[31mred\u001b[0m'],
  ['lone surrogate', 'broken \ud800 title'],
  ['U+202E', 'invoice\u202efdp.exe'],
];

const nameEntries: HostileEntry[] = [
  ...UNSAFE_TITLES.map(([label, title]): HostileEntry => ({
    name: `title: PUT a conversation title with ${label}`,
    attacks: 'a title that rewrites what other screens and logs show',
    expect: { answer: 'status', status: [200, 400], check: conversationTitle },
    build: (t) => jsonRequest('PUT', `/api/history/conversations/${t.attacker.sessionId}/title`, { title }),
  })),
  ...UNSAFE_TITLES.map(([label, title], index): HostileEntry => ({
    name: `title: an upload's title with ${label}`,
    attacks: 'a document title that rewrites what citations show',
    expect: { answer: 'status', status: [200, 202, 400], check: documentTitle },
    build: () =>
      jsonRequest('POST', '/api/knowledge/documents', {
        title,
        fileName: 'titled.md',
        contentType: 'text/markdown',
        contentBase64: Buffer.from(
          `# Titled ${index}\n\nA document with a hostile title ${index}.\n`,
        ).toString('base64'),
      }),
  })),
  {
    name: 'file name: C:\\x\\evil\\0.md (a Windows path with NUL)',
    attacks: 'a file name whose base name would become the title "evil\\u0000"',
    expect: { answer: 'status', status: [202, 400], check: documentTitle },
    build: () => multipart([filePart('C:\\x\\evil\u0000.md', '# Evil\n\nA document named with a path.\n')]),
  },
  {
    name: 'file name: ../../etc/passwd.md',
    attacks: 'a file name that is a relative path',
    expect: {
      answer: 'status',
      status: [202, 400],
      check: (answer) =>
        documentTitle(answer) ??
        (/[/]/.test(answer.text.match(/"title":"([^"]*)"/)?.[1] ?? '')
          ? 'the title keeps the path'
          : undefined),
    },
    build: () => multipart([filePart('../../etc/passwd.md', '# Passwords\n\nNot really.\n')]),
  },
  {
    name: 'file name: U+202E reversing the extension',
    attacks: 'a file name that shows as "invoice.pdf" and is "fdp.md"',
    expect: { answer: 'status', status: [202, 400], check: documentTitle },
    build: () => multipart([filePart('invoice\u202efdp.md', '# Invoice\n\nTotal due: nothing.\n')]),
  },
  {
    name: 'body: JSON "[" × 3,000,000 as an upload',
    attacks: 'a JSON parser recursing 3 million deep before the body is refused',
    expect: { answer: 'status', status: [400, 413] },
    build: () => ({
      method: 'POST',
      path: '/api/knowledge/documents',
      headers: asAttacker({ 'content-type': 'application/json' }),
      body: '['.repeat(3_000_000),
    }),
  },
  {
    name: 'body: JSON "[" × 3,000,000 as a chat message',
    attacks: 'the same on the chat front door',
    expect: { answer: 'status', status: [400, 413] },
    build: () => ({
      method: 'POST',
      path: '/api/chat',
      headers: asAttacker({ 'content-type': 'application/json' }),
      body: '['.repeat(3_000_000),
    }),
  },
  {
    name: 'body: JSON {"a": × 1,000,000 as a search',
    attacks: 'deep objects on a small endpoint',
    expect: { answer: 'status', status: [400, 413] },
    build: () => ({
      method: 'POST',
      path: '/api/knowledge/search',
      headers: asAttacker({ 'content-type': 'application/json' }),
      body: '{"a":'.repeat(1_000_000),
    }),
  },
  {
    name: 'multipart: a part with 5,000 header lines',
    attacks: 'a form parser that reads every part header before refusing',
    expect: { answer: 'status', status: [400, 413] },
    build: () =>
      multipart([
        filePart(
          'headers.md',
          '# Headers\n',
          Array.from({ length: 5_000 }, (_, index) => `X-Filler-${index}: ${'h'.repeat(40)}`),
        ),
      ]),
  },
  {
    name: 'multipart: 50,000 empty fields',
    attacks: 'a form of many parts, each an allocation',
    expect: { answer: 'status', status: [400, 413] },
    build: () =>
      multipart([
        ...Array.from({ length: 50_000 }, (_, index) => fieldPart(`f${index}`, '')),
        filePart('many.md', '# Many\n'),
      ]),
  },
  {
    name: 'multipart: no closing boundary',
    attacks: 'a form that never ends',
    expect: { answer: 'status', status: [400] },
    build: () => multipart([filePart('open.md', '# Open\n')], false),
  },
  {
    name: 'upload: contentBase64 that is not base64',
    attacks: 'a decoder that guesses',
    expect: { answer: 'status', status: [400] },
    build: () =>
      jsonRequest('POST', '/api/knowledge/documents', {
        fileName: 'bad.md',
        contentType: 'text/markdown',
        contentBase64: '!!!not base64 at all%%%',
      }),
  },
];

// --- Identities of the other auth modes ---------------------------------------------------------------------------

/** The Entra ID tenant a runtime in `entra` mode trusts, as the identity entries see it. */
export const ENTRA = {
  tenantId: 'hostile-suite.example',
  audience: 'api://hostile-suite',
  issuer: 'https://login.hostile-suite.example/v2.0',
  scope: 'user_impersonation',
  oid: '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b',
} as const;

/** A caller of an identity mode: the claims it signs a token with (entra), or nothing (app-service). */
export interface IdentityTargets {
  /**
   * An RS256 token with these claims, signed with the key the runtime's JWKS serves (or another: 'foreign'),
   * expiring `lifetimeSeconds` from now (default 600; negative: already expired; null: no exp claim).
   */
  token(
    claims: Record<string, unknown>,
    options?: { key?: 'trusted' | 'foreign'; lifetimeSeconds?: number | null },
  ): Promise<string>;
}

export interface IdentityEntry {
  name: string;
  attacks: string;
  mode: 'app-service' | 'entra';
  /** The statuses it must get (a sanity entry, the caller a mode does accept, expects 200). */
  status: readonly number[];
  build(targets: IdentityTargets): Promise<RawRequest>;
}

const CONVERSATIONS_OF = (userId: string) => `/api/history/users/${userId}/conversations`;
const bearer = (token: string): RawRequest => ({
  method: 'GET',
  path: CONVERSATIONS_OF(ENTRA.oid),
  headers: { authorization: `Bearer ${token}` },
});
const principalBlob = (oid: string) =>
  Buffer.from(JSON.stringify({ auth_typ: 'aad', claims: [{ typ: 'oid', val: oid }] })).toString('base64');
const userClaims = { iss: ENTRA.issuer, aud: ENTRA.audience, oid: ENTRA.oid, scp: ENTRA.scope };

export const identityCorpus: readonly IdentityEntry[] = [
  {
    name: 'app-service: the principal id header with its blob (accepted)',
    attacks:
      'nothing: the caller App Service authentication vouches for, so the refusals below mean something',
    mode: 'app-service',
    status: [200],
    build: () =>
      Promise.resolve({
        method: 'GET',
        path: CONVERSATIONS_OF(ATTACKER),
        headers: { [IDENTITY]: ATTACKER, 'x-ms-client-principal': principalBlob(ATTACKER) },
      }),
  },
  {
    name: 'app-service: the principal id header without its blob',
    attacks: 'an id header a client wrote itself, which App Service would have sent with the signed-in blob',
    mode: 'app-service',
    status: [401],
    build: () =>
      Promise.resolve({ method: 'GET', path: CONVERSATIONS_OF(CONTROL), headers: { [IDENTITY]: CONTROL } }),
  },
  {
    name: 'app-service: a blob naming another user than the id header',
    attacks: 'two principal headers that disagree',
    mode: 'app-service',
    status: [401],
    build: () =>
      Promise.resolve({
        method: 'GET',
        path: CONVERSATIONS_OF(CONTROL),
        headers: { [IDENTITY]: CONTROL, 'x-ms-client-principal': principalBlob(ATTACKER) },
      }),
  },
  {
    name: 'entra: a user token with the scope (accepted)',
    attacks: 'nothing: the caller a token of the tenant vouches for, so the refusals below mean something',
    mode: 'entra',
    status: [200],
    build: async (t) => bearer(await t.token(userClaims)),
  },
  {
    name: 'entra: a token without exp',
    attacks: 'a signed token that never expires',
    mode: 'entra',
    status: [401],
    build: async (t) => bearer(await t.token(userClaims, { lifetimeSeconds: null })),
  },
  {
    name: 'entra: an expired token',
    attacks: 'a token replayed after its lifetime',
    mode: 'entra',
    status: [401],
    build: async (t) => bearer(await t.token(userClaims, { lifetimeSeconds: -600 })),
  },
  {
    name: 'entra: an app-only token (no scp, no role)',
    attacks: "any app of the tenant calling as if it were a user (its oid is the app's)",
    mode: 'entra',
    status: [401, 403],
    build: async (t) =>
      bearer(await t.token({ iss: ENTRA.issuer, aud: ENTRA.audience, oid: ENTRA.oid, idtyp: 'app' })),
  },
  {
    name: 'entra: a token for another scope',
    attacks: "a user's token for another permission of the same API",
    mode: 'entra',
    status: [401, 403],
    build: async (t) => bearer(await t.token({ ...userClaims, scp: 'files.read' })),
  },
  {
    name: 'entra: a token signed by another key',
    attacks: 'a forged token',
    mode: 'entra',
    status: [401],
    build: async (t) => bearer(await t.token(userClaims, { key: 'foreign' })),
  },
  {
    name: 'entra: an unsigned token (alg none)',
    attacks: 'a token that names no signature',
    mode: 'entra',
    status: [401],
    build: () => {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const exp = Math.floor(Date.now() / 1000) + 600;
      return Promise.resolve(bearer(`${part({ alg: 'none', typ: 'JWT' })}.${part({ ...userClaims, exp })}.`));
    },
  },
  {
    name: 'entra: the dev identity header instead of a token',
    attacks: 'the local dev header sent to a deployment that takes tokens',
    mode: 'entra',
    status: [401],
    build: () =>
      Promise.resolve({ method: 'GET', path: CONVERSATIONS_OF(CONTROL), headers: { [IDENTITY]: CONTROL } }),
  },
];

/** Every entry of the corpus, in a fixed order. */
export const hostileCorpus: readonly HostileEntry[] = [
  ...documentEntries,
  ...idEntries,
  ...foreignEntries,
  ...frontDoorEntries,
  ...nameEntries,
];
