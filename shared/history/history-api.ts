// The History API's use-cases (seed 000 "History APIs"): list a user's conversations (newest activity first,
// optionally matching words of their titles or messages), read one with its messages a page at a time, rename
// it, export it whole as Markdown or JSON, and total a user's use. Every read goes through the caller's header:
// another user's conversation is not found, exactly like an unknown one. Reads are read-your-writes: the turn's
// commit keeps the header live, and the messages the history worker has not stored yet are taken from working
// memory (by ordinal, never twice). The conversation's system prompt (seed 000: its first message) is shown first,
// apart from the numbered messages: from long-term history, or from working memory until the worker stored it.
// A conversation with branches (edits, regenerates) shows its active path, paged along it; each turn at a branch
// point lists its alternatives, and PUT .../branch makes another one's branch the active path.
import { z } from 'zod';
import { activeLeaf, pathOf, type PathLeaf } from '../conversation/active-path.js';
import { gapsAfter, onPath } from '../conversation/branch-path.js';
import { MAIN_BRANCH } from '../conversation/branches.js';
import type { ConversationMessage, SystemPrompt } from '../conversation/messages.js';
import type { WorkingMemory, WorkingMemoryStore } from '../conversation/working-memory-store.js';
import type { PostedMessageStore } from '../conversation/posted-message-store.js';
import { NotFoundError, NotReadyError, ValidationError } from '../errors.js';
import { pageLimitSchema } from '../validation.js';
import {
  DEFAULT_CONVERSATION_PAGE,
  DEFAULT_MESSAGE_PAGE,
  MAX_CONVERSATION_PAGE,
  MAX_MESSAGE_PAGE,
  type ConversationHeader,
  type ConversationPage,
  type ConversationPath,
  type ConversationSummary,
  type ConversationWithMessages,
  type HistoryMessage,
  type HistoryStats,
  type TurnAlternatives,
  fromStoredMessage,
} from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';
import type { ConversationMessages } from './conversation-messages.js';
import { oneLine } from '../plain-text.js';
import { preview } from './header-preview.js';

export interface HistoryReadServices {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  workingMemory: WorkingMemoryStore;
}

/** A switch also tells a turn posted but not answered yet from an unknown one. */
export type SwitchBranchServices = HistoryReadServices & { posted: Pick<PostedMessageStore, 'find'> };

/** Sessions whose messages match `q` that the list considers (beyond them, only titles match). */
const MAX_MATCHING_SESSIONS = 500;
/** Longest search text. */
const MAX_QUERY_CHARS = 200;

// --- Request parts ----------------------------------------------------------------------------------------

/** Where a page of messages ends, for the next one: opaque to clients (base64url JSON). */
export interface MessageCursor {
  /** The ordinal of the page's last message. */
  ordinal: number;
  order: 'asc' | 'desc';
}

const cursorSchema = z.object({
  v: z.literal(1),
  o: z.number().int().nonnegative(),
  d: z.enum(['asc', 'desc']),
});

export function encodeMessageCursor(cursor: MessageCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, o: cursor.ordinal, d: cursor.order }), 'utf8').toString(
    'base64url',
  );
}

/** undefined when `token` is not one encodeMessageCursor made. */
export function decodeMessageCursor(token: string): MessageCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = cursorSchema.safeParse(json);
  return parsed.success ? { ordinal: parsed.data.o, order: parsed.data.d } : undefined;
}

const BAD_TOKEN = 'is not a token this API gave: pass back the continuationToken of the previous page';

export const listConversationsQuerySchema = z.object({
  limit: pageLimitSchema(MAX_CONVERSATION_PAGE, DEFAULT_CONVERSATION_PAGE),
  continuationToken: z.string().min(1, BAD_TOKEN).max(4096, BAD_TOKEN).optional(),
  q: z
    .string()
    .transform((value) => value.trim())
    .refine((value) => value !== '', 'must not be empty')
    .refine((value) => value.length <= MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`)
    // Matching is by words: a q with none would match everything.
    .refine((value) => value === '' || /[\p{L}\p{N}]/u.test(value), 'must contain a letter or a digit')
    .optional(),
});
export type ListConversationsQuery = z.infer<typeof listConversationsQuerySchema>;

export const getConversationQuerySchema = z.object({
  limit: pageLimitSchema(MAX_MESSAGE_PAGE, DEFAULT_MESSAGE_PAGE),
  continuationToken: z
    .string()
    .transform((value, context) => {
      const cursor = decodeMessageCursor(value);
      if (cursor === undefined) context.addIssue({ code: 'custom', message: BAD_TOKEN });
      return cursor ?? z.NEVER;
    })
    .optional(),
  order: z.enum(['asc', 'desc'], { error: "must be 'asc' or 'desc'" }).default('asc'),
});
export type GetConversationQuery = z.infer<typeof getConversationQuerySchema>;

/** PUT .../branch answers the new path's first page: its size and order as GET takes them. */
export const switchBranchQuerySchema = z.object({
  limit: pageLimitSchema(MAX_MESSAGE_PAGE, DEFAULT_MESSAGE_PAGE),
  order: z.enum(['asc', 'desc'], { error: "must be 'asc' or 'desc'" }).default('asc'),
});
export type SwitchBranchQuery = z.infer<typeof switchBranchQuerySchema>;

export const exportFormatSchema = z.enum(['markdown', 'json'], { error: "must be 'markdown' or 'json'" });
export type ExportFormat = z.infer<typeof exportFormatSchema>;

export const exportQuerySchema = z.object({ format: exportFormatSchema.default('markdown') });

// --- Use-cases --------------------------------------------------------------------------------------------

export async function listConversations(
  services: Pick<HistoryReadServices, 'headers' | 'messages'>,
  userId: string,
  query: ListConversationsQuery,
): Promise<ConversationPage> {
  const match =
    query.q === undefined
      ? undefined
      : {
          q: query.q,
          sessionIds: await services.messages.sessionsMatching(userId, query.q, MAX_MATCHING_SESSIONS),
        };
  const page = await services.headers.list(userId, {
    limit: query.limit,
    ...(query.continuationToken === undefined ? {} : { continuationToken: query.continuationToken }),
    ...(match === undefined ? {} : { match }),
  });
  return {
    conversations: page.headers.map(toSummary),
    ...(page.continuationToken === undefined ? {} : { continuationToken: page.continuationToken }),
  };
}

export async function getConversation(
  services: HistoryReadServices,
  userId: string,
  sessionId: string,
  query: GetConversationQuery,
): Promise<ConversationWithMessages> {
  const header = await requireHeader(services.headers, userId, sessionId);
  const cursor = query.continuationToken;
  if (cursor !== undefined && cursor.order !== query.order)
    throw new ValidationError(
      `Invalid query: continuationToken continues a page in order '${cursor.order}': ask with order=${cursor.order}.`,
      [{ path: 'continuationToken', message: `continues a page in order '${cursor.order}'` }],
    );
  const memory = pendingMemory(services.workingMemory, header);
  // The prompt heads the conversation: the first page (either order) carries it; the next pages need not.
  const [loaded, systemPrompt] = await Promise.all([
    memory,
    cursor === undefined ? systemPromptOf(services.messages, header, memory) : undefined,
  ]);
  const path = shownPath(header, loaded);
  const page = await readPage(services.messages, header, unpersistedMessages(loaded, header), {
    order: query.order,
    limit: query.limit,
    ...(cursor === undefined ? {} : { from: cursor.ordinal }),
    ...(path === undefined ? {} : { path }),
  });
  const messages = await withAlternatives(services.messages, header, loaded, page.messages);
  return {
    ...toSummary(header),
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    ...(path === undefined
      ? {}
      : { path: { leafChatMessageId: path.leafChatMessageId, branchId: path.branch.branchId } }),
    messages,
    ...(page.next === undefined ? {} : { continuationToken: encodeMessageCursor(page.next) }),
  };
}

/**
 * Shows the branch the turn `chatMessageId` is on, as it was last continued: the active path becomes the path of
 * that branch's newest turn (in working memory and on the header), so the conversation shows it and the next turn
 * continues it. Answers the new path's first page. An unknown turn (or another user's conversation) → 404; a turn
 * posted but not answered yet, a path whose newest messages the history worker has not stored yet and working
 * memory no longer holds, or a switch a turn's commit overtook → 409, retry.
 */
export async function switchBranch(
  services: SwitchBranchServices,
  userId: string,
  sessionId: string,
  chatMessageId: string,
  query: SwitchBranchQuery,
): Promise<ConversationWithMessages> {
  const header = await requireHeader(services.headers, userId, sessionId);
  const memory = await services.workingMemory.load(userId, sessionId);
  const target = await services.workingMemory.findTurn(userId, sessionId, chatMessageId, memory);
  if (target === undefined) {
    // A turn posted but not answered yet has no place to show: retried once it has (as an edit of it would be).
    if ((await services.posted.find(userId, sessionId, chatMessageId)) !== undefined)
      throw new NotReadyError(
        `Turn '${chatMessageId}' is still being answered: switch to it once its answer has ended (message-end or error).`,
        2,
      );
    throw new NotFoundError(`No turn '${chatMessageId}' in conversation '${sessionId}'.`);
  }
  const leaf = await newestOfBranch(services, header, memory, target);
  // Continuing a branch after other branches' turns skips them with one more gap: a path that has all it may
  // have could be shown but not continued, so it is refused here (gapsAfter's 409) rather than failing the next turn.
  gapsAfter(leaf.branch.gaps, leaf.lastOrdinal, memory.messageCount);
  if (activeLeaf(memory)?.chatMessageId !== leaf.chatMessageId) {
    const moved = await services.workingMemory.showPath(userId, sessionId, leaf, memory);
    const shown = moved.messages.findLast((message) => message.content.trim() !== '');
    // The header names the path working memory shows, unless a turn committed since (its path is the newer).
    const changed = await services.headers.setPath(userId, sessionId, {
      path: pathOf(activeLeaf(moved) ?? leaf),
      preview: preview(shown?.content ?? ''),
      messageCount: moved.messageCount,
    });
    if (changed === 'missing') throw notFound(sessionId);
    if (changed === 'moved')
      throw new NotReadyError(
        'A turn of this conversation was answered while it switched branches: switch again to show that branch.',
      );
  }
  return getConversation(services, userId, sessionId, { ...query });
}

export async function renameConversation(
  headers: ConversationHeaders,
  userId: string,
  sessionId: string,
  title: string,
): Promise<ConversationSummary> {
  if ((await headers.setTitle(userId, sessionId, title, 'user')) === 'missing') throw notFound(sessionId);
  return toSummary(await requireHeader(headers, userId, sessionId));
}

export async function historyStats(headers: ConversationHeaders, userId: string): Promise<HistoryStats> {
  return { userId, ...(await headers.totals(userId)) };
}

export interface ExportedConversation {
  /** A file name safe in a content-disposition header, with its extension. */
  fileName: string;
  contentType: string;
  text: string;
}

/** The whole conversation, every page read in order, rendered as Markdown or JSON. */
export async function exportConversation(
  services: HistoryReadServices,
  userId: string,
  sessionId: string,
  format: ExportFormat,
): Promise<ExportedConversation> {
  const header = await requireHeader(services.headers, userId, sessionId);
  const memory = pendingMemory(services.workingMemory, header);
  const [loaded, systemPrompt] = await Promise.all([
    memory,
    systemPromptOf(services.messages, header, memory),
  ]);
  const pending = unpersistedMessages(loaded, header);
  // The export is the conversation as shown: its active path.
  const path = shownPath(header, loaded);
  const messages: HistoryMessage[] = [];
  let from: number | undefined;
  for (;;) {
    const page = await readPage(services.messages, header, pending, {
      order: 'asc',
      limit: MAX_MESSAGE_PAGE,
      ...(from === undefined ? {} : { from }),
      ...(path === undefined ? {} : { path }),
    });
    messages.push(...page.messages);
    if (page.next === undefined) break;
    from = page.next.ordinal;
  }
  const conversation: ExportableConversation = {
    ...toSummary(header),
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    messages,
  };
  return format === 'json'
    ? {
        fileName: exportFileName(header.title, 'json'),
        contentType: 'application/json',
        text: renderJsonExport(conversation),
      }
    : {
        fileName: exportFileName(header.title, 'md'),
        contentType: 'text/markdown; charset=utf-8',
        text: renderMarkdownExport(conversation),
      };
}

// --- Reading pages ----------------------------------------------------------------------------------------

async function requireHeader(
  headers: ConversationHeaders,
  userId: string,
  sessionId: string,
): Promise<ConversationHeader> {
  const header = await headers.get(userId, sessionId);
  if (header === undefined) throw notFound(sessionId);
  return header;
}

function notFound(sessionId: string): NotFoundError {
  return new NotFoundError(`No conversation '${sessionId}' for this user.`);
}

function toSummary(header: ConversationHeader): ConversationSummary {
  const { sessionId, title, titleSource, createdAt, lastActivity, messageCount, preview } = header;
  return { sessionId, title, titleSource, createdAt, lastActivity, messageCount, preview };
}

/**
 * Working memory, read only when the header says it holds committed messages the history worker has not stored
 * yet: a conversation wholly stored costs no hot-store read.
 */
function pendingMemory(
  workingMemory: WorkingMemoryStore,
  header: ConversationHeader,
): Promise<WorkingMemory | undefined> {
  if (header.messageCount <= header.persistedCount) return Promise.resolve(undefined);
  return workingMemory.load(header.userId, header.sessionId);
}

/**
 * The committed messages of the active path the history worker has not stored yet (ordinal >= persistedCount):
 * working memory's window holds that path.
 */
function unpersistedMessages(
  memory: WorkingMemory | undefined,
  header: ConversationHeader,
): HistoryMessage[] {
  if (memory === undefined) return [];
  return memory.messages.filter(
    (message): message is HistoryMessage =>
      message.ordinal !== undefined && message.ordinal >= header.persistedCount,
  );
}

/**
 * The path shown: working memory's when it was read (it moves first), else the header's; none for a conversation
 * whose turns all came before branches (all of it is its main line).
 */
function shownPath(
  header: ConversationHeader,
  memory: WorkingMemory | undefined,
): ConversationPath | undefined {
  const leaf = memory === undefined ? undefined : activeLeaf(memory);
  if (memory?.path !== undefined && leaf !== undefined) return pathOf(leaf);
  return header.path;
}

/** The newest turn of `target`'s branch: long-term history's, or a newer one working memory holds. */
async function newestOfBranch(
  services: HistoryReadServices,
  header: ConversationHeader,
  memory: WorkingMemory,
  target: PathLeaf,
): Promise<PathLeaf> {
  const branchId = target.branch.branchId;
  const stored = await services.messages.newestOfBranch(header.userId, header.sessionId, branchId);
  let newest =
    stored === undefined ? undefined : { chatMessageId: stored.chatMessageId, ordinal: stored.ordinal };
  for (const message of [...memory.messages, ...(memory.offPath ?? [])]) {
    if (message.ordinal === undefined || (message.branch?.branchId ?? MAIN_BRANCH) !== branchId) continue;
    if (newest === undefined || message.ordinal > newest.ordinal)
      newest = { chatMessageId: message.chatMessageId, ordinal: message.ordinal };
  }
  if (
    newest === undefined ||
    newest.chatMessageId === target.chatMessageId ||
    newest.ordinal < target.lastOrdinal
  )
    return target;
  const found = await services.workingMemory.findTurn(
    header.userId,
    header.sessionId,
    newest.chatMessageId,
    memory,
  );
  return found ?? target;
}

/**
 * The page's messages, each turn at a branch point with its alternatives: the turn that was replaced first (the
 * group) and every edit or regenerate of it, oldest first. One query for the page's groups (long-term history),
 * plus what working memory holds that history has not stored yet; none at all for a conversation never forked.
 */
async function withAlternatives(
  messages: ConversationMessages,
  header: ConversationHeader,
  memory: WorkingMemory | undefined,
  page: HistoryMessage[],
): Promise<HistoryMessage[]> {
  const pending = [...(memory?.messages ?? []), ...(memory?.offPath ?? [])].filter(
    (message) => message.ordinal !== undefined && message.ordinal >= header.persistedCount,
  );
  const forked = header.branched === true || pending.some((message) => message.branch?.alternativeOf);
  if (!forked || page.length === 0) return page;
  const groupOf = (message: ConversationMessage) => message.branch?.alternativeOf ?? message.chatMessageId;
  const groups = [...new Set(page.map(groupOf))];
  const stored = await messages.alternatives(header.userId, header.sessionId, groups);
  const members = new Map<string, Map<string, number>>();
  const add = (group: string, chatMessageId: string, ordinal: number) => {
    const known = members.get(group) ?? new Map<string, number>();
    members.set(group, known);
    if (!known.has(chatMessageId)) known.set(chatMessageId, ordinal);
  };
  for (const alternative of stored)
    add(alternative.alternativeOf, alternative.chatMessageId, alternative.ordinal);
  for (const message of pending) {
    const group = message.branch?.alternativeOf;
    if (group !== undefined && groups.includes(group) && message.role === 'user')
      add(group, message.chatMessageId, message.ordinal!);
  }
  return page.map((message) => {
    const group = groupOf(message);
    const alternatives = members.get(group);
    if (alternatives === undefined) return message;
    // The group's first turn is the oldest of them all: the others replaced it later.
    const chatMessageIds = [
      group,
      ...[...alternatives.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id),
    ];
    const shown: TurnAlternatives = {
      index: chatMessageIds.indexOf(message.chatMessageId),
      count: chatMessageIds.length,
      chatMessageIds,
    };
    return { ...message, alternatives: shown };
  });
}

interface PageRequest {
  order: 'asc' | 'desc';
  limit: number;
  /** The previous page's last ordinal: asc continues above it, desc below it. */
  from?: number;
  /** The branch path to page along: nothing in its gaps, nothing after its leaf. */
  path?: ConversationPath;
}

/**
 * One page of the stored items merged with the unpersisted messages, by ordinal, each ordinal once (the stored
 * item wins: the worker may have stored a turn before the header says so). One item more than the page is read,
 * so a next page is announced only when there is one.
 */
async function readPage(
  messages: ConversationMessages,
  header: ConversationHeader,
  pending: readonly HistoryMessage[],
  request: PageRequest,
): Promise<{ messages: HistoryMessage[]; next?: MessageCursor }> {
  const ascending = request.order === 'asc';
  const { path } = request;
  // Along the path: its gaps are skipped, and so is everything after its leaf (other branches' newer turns).
  const skip =
    path === undefined
      ? []
      : [...path.branch.gaps, { from: path.lastOrdinal + 1, to: Number.MAX_SAFE_INTEGER }];
  const stored = await messages.page(header.userId, header.sessionId, {
    order: request.order,
    limit: request.limit + 1,
    ...(request.from === undefined ? {} : ascending ? { after: request.from } : { before: request.from }),
    ...(skip.length === 0 ? {} : { skip }),
  });
  const inRange = (ordinal: number) =>
    (request.from === undefined || (ascending ? ordinal > request.from : ordinal < request.from)) &&
    (path === undefined || onPath(ordinal, path.branch, path.lastOrdinal));
  const byOrdinal = new Map<number, HistoryMessage>();
  for (const message of pending) if (inRange(message.ordinal)) byOrdinal.set(message.ordinal, message);
  for (const item of stored) byOrdinal.set(item.ordinal, fromStoredMessage(item));
  const merged = [...byOrdinal.values()].sort((a, b) =>
    ascending ? a.ordinal - b.ordinal : b.ordinal - a.ordinal,
  );
  const page = merged.slice(0, request.limit);
  const last = page.at(-1);
  return merged.length > request.limit && last !== undefined
    ? { messages: page, next: { ordinal: last.ordinal, order: request.order } }
    : { messages: page };
}

/**
 * The conversation's system prompt. The history worker stores it with the opening turn's messages, before it
 * records them: once a message is stored (persistedCount > 0) long-term history has it, if it ever will; until
 * then working memory does (read then anyway for the unstored messages).
 */
async function systemPromptOf(
  messages: ConversationMessages,
  header: ConversationHeader,
  memory: Promise<WorkingMemory | undefined>,
): Promise<SystemPrompt | undefined> {
  if (header.persistedCount > 0) return messages.getSystemPrompt(header.userId, header.sessionId);
  return (await memory)?.systemPrompt;
}

// --- Export renderers (pure) ------------------------------------------------------------------------------

export type ExportableConversation = ConversationSummary & {
  systemPrompt?: SystemPrompt;
  messages: readonly HistoryMessage[];
};

/** The conversation as JSON: its summary, its system prompt, and every message, tool calls and results included. */
export function renderJsonExport(conversation: ExportableConversation): string {
  return `${JSON.stringify(conversation, null, 2)}\n`;
}

/**
 * The conversation as Markdown: the title as heading, then its system prompt (in a fence: it may hold headings of
 * its own), then each message with its role and timestamp, its text, the knowledge-base sources it cites (each
 * citation with its excerpt), its tool calls with their arguments and results in fenced blocks, and a failed
 * turn's failure.
 */
export function renderMarkdownExport(conversation: ExportableConversation): string {
  const lines = [
    `# ${oneLine(conversation.title) || 'Conversation'}`,
    '',
    `- Conversation: \`${conversation.sessionId}\``,
    `- Started: ${conversation.createdAt}`,
    `- Last activity: ${conversation.lastActivity}`,
    `- Messages: ${conversation.messages.length}`,
  ];
  const prompt = conversation.systemPrompt;
  if (prompt !== undefined)
    lines.push(
      '',
      `## System prompt · ${prompt.createdAt}`,
      '',
      prompt.personalised ? "Personalised from the user's profile:" : 'The basic prompt:',
      '',
      ...fenced(prompt.content, 'text'),
    );
  for (const message of conversation.messages) {
    lines.push('', `## ${message.role === 'user' ? 'User' : 'Assistant'} · ${message.timestamp}`);
    if (message.content !== '') lines.push('', message.content.trimEnd());
    if (message.sources !== undefined && message.sources.length > 0)
      lines.push(
        '',
        '**Sources:**',
        '',
        ...message.sources.map((source) => `- ${oneLine(source.citation)}: “${oneLine(source.excerpt)}”`),
      );
    for (const call of message.toolCalls ?? []) {
      lines.push(
        '',
        `**Tool call** \`${call.name}\` (round ${call.round}), arguments:`,
        '',
        ...codeBlock(call.arguments),
        '',
        call.isError ? 'Result (error):' : 'Result:',
        '',
        ...codeBlock(call.result),
      );
    }
    if (message.failure !== undefined)
      lines.push('', `> **This turn failed** (${message.failure.code}): ${oneLine(message.failure.message)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A file name for the export: the title's letters, digits and a few safe signs, never empty, at most 80. */
export function exportFileName(title: string, extension: 'md' | 'json'): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 80)
    .replace(/[-.]+$/, '');
  return `${base === '' ? 'conversation' : base}.${extension}`;
}

/** A tool's arguments or result as a fenced block: pretty JSON when it is a JSON object or array, else as text. */
function codeBlock(text: string): string[] {
  const json = prettyJson(text);
  return json === undefined ? fenced(text, 'text') : fenced(json, 'json');
}

/** A fence longer than any run of backticks in the text, so the text cannot close it. */
function fenced(text: string, language: string): string[] {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, text, fence];
}

function prettyJson(text: string): string | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? JSON.stringify(value, null, 2) : undefined;
  } catch {
    return undefined;
  }
}
