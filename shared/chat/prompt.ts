// Prompt building for a chat turn in three layers: the system prompt, the conversation's memory beyond the prompt
// (its rolling summary and the index lines of earlier exchanges), and the recent conversation with the new user
// message, trimmed to a token budget by dropping the oldest whole turns first. Pure.
import type { MessageAttachment } from '../message-attachments.js';
import { PROMPT_EXCHANGE_LINES, type SessionDigest } from '../history/contracts.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import {
  DEFAULT_ATTACHMENT_TEXT_TOKENS,
  DEFAULT_IMAGE_TURNS,
  messageTokens,
} from '../conversation/tokens.js';

import type { ConversationMessage } from '../conversation/messages.js';
import type { HistoryRange } from './contracts/documents.js';

/** The system prompt when nothing personal is known about the user (or the memory fetch did not answer). */
export const BASIC_SYSTEM_PROMPT =
  'You are a helpful, friendly assistant. Answer clearly and concisely, in the language the user writes in. ' +
  'You may call the tools you are given when they help (for example to compute a result exactly); ' +
  'use their results, and never invent a tool result.';

/**
 * What the prompt takes of the conversation's digest (history's contract), with the gaps of the path it was folded
 * along (absent: the main line), so a turn on another path can leave it out.
 */
export type PromptDigest = Pick<SessionDigest, 'summary' | 'summarizedThrough' | 'recentExchanges'> &
  Partial<Pick<SessionDigest, 'gaps'>>;

export interface PromptInput {
  systemPrompt: string;
  /** The conversation so far, oldest first. */
  history: readonly ConversationMessage[];
  userText: string;
  /** The files the user's message carries. */
  userAttachments?: readonly MessageAttachment[] | undefined;
  tokenBudget: number;
  /**
   * The memory beyond the prompt: its summary and exchange lines become a second system message, and history
   * messages it already summarises (ordinal below summarizedThrough) are left out.
   */
  digest?: PromptDigest;
  /**
   * How files reach the model (the attachment settings): images of the newest `imageTurns` user messages are
   * shown, older ones become a caption; `textTokens` bounds a message's text files. Absent: the defaults.
   */
  attachments?: { imageTurns: number; textTokens: number };
}

export interface BuiltPrompt {
  messages: ChatMessage[];
  estimatedTokens: number;
  /** History messages sent to the model. */
  includedMessages: number;
  /** History messages left out to fit the budget (not counting assistant messages without text). */
  droppedMessages: number;
  /** The stored messages the prompt's history spans (a reference a later round rebuilds it from); null if none. */
  history: HistoryRange | null;
}

interface Turn {
  messages: ChatMessage[];
  tokens: number;
  /** The first and last stored messages of the turn. */
  fromMessageId: string;
  toMessageId: string;
}

export function buildPrompt(input: PromptInput): BuiltPrompt {
  const system: ChatMessage = { role: 'system', content: input.systemPrompt };
  const memory = digestMessage(input.digest);
  const user: ChatMessage = {
    role: 'user',
    content: input.userText,
    ...(input.userAttachments?.length ? { attachments: [...input.userAttachments] } : {}),
  };
  const rules = input.attachments ?? {
    imageTurns: DEFAULT_IMAGE_TURNS,
    textTokens: DEFAULT_ATTACHMENT_TEXT_TOKENS,
  };
  const turns = groupTurns(unsummarized(input.history, input.digest), rules);
  const fixed = [system, ...(memory ? [memory] : [])];

  let tokens =
    sum(fixed.map((message) => messageTokens(message))) +
    messageTokens(user, { imageShown: true, textTokens: rules.textTokens }) +
    sum(turns.map((turn) => turn.tokens));
  let firstKept = 0;
  while (tokens > input.tokenBudget && firstKept < turns.length) {
    tokens -= turns[firstKept]!.tokens;
    firstKept += 1;
  }

  const keptTurns = turns.slice(firstKept);
  const kept = keptTurns.flatMap((turn) => turn.messages);
  const dropped = turns.slice(0, firstKept).reduce((count, turn) => count + turn.messages.length, 0);
  const first = keptTurns[0];
  const last = keptTurns.at(-1);
  return {
    messages: [...fixed, ...kept, user],
    estimatedTokens: tokens,
    includedMessages: kept.length,
    droppedMessages: dropped,
    history: first && last ? { fromMessageId: first.fromMessageId, toMessageId: last.toMessageId } : null,
  };
}

/**
 * The stored messages a history range spans, for rebuilding a turn's prompt in a later round (buildPrompt with
 * them and an unbounded budget gives the same messages). Empty when the range is null or no longer stored.
 */
export function historyInRange(
  messages: readonly ConversationMessage[],
  range: HistoryRange | null,
): ConversationMessage[] {
  if (range === null) return [];
  const from = messages.findIndex((message) => message.messageId === range.fromMessageId);
  const to = messages.findIndex((message) => message.messageId === range.toMessageId);
  return from === -1 || to < from ? [] : messages.slice(from, to + 1);
}

/**
 * The digest as the model reads it: the summary of what the prompt no longer holds, the newest index lines
 * (with the ids the past-answer tool takes), and how to reach the rest. Undefined when it has nothing yet.
 */
export function digestMessage(digest: PromptDigest | undefined): ChatMessage | undefined {
  if (digest === undefined) return undefined;
  const parts: string[] = [];
  if (digest.summary.trim() !== '')
    parts.push(`Summary of the earlier part of this conversation: ${digest.summary.trim()}`);
  const lines = digest.recentExchanges.slice(-PROMPT_EXCHANGE_LINES);
  if (lines.length > 0)
    parts.push(
      [
        'Earlier exchanges (id: line [tags]):',
        ...lines.map((entry) => `- ${entry.exchangeId}: ${entry.line} [${entry.tags.join(', ')}]`),
      ].join('\n'),
    );
  if (parts.length === 0) return undefined;
  parts.push(
    'For the full text of an earlier answer, call retrieve_past_answer with its exchange id; to find earlier ' +
      'exchanges about a topic, call lookup_past_conversation with the topic.',
  );
  return { role: 'system', content: parts.join('\n\n') };
}

/** The history the summary does not cover; a message without an ordinal (not committed yet) is always new. */
function unsummarized(
  history: readonly ConversationMessage[],
  digest: PromptDigest | undefined,
): readonly ConversationMessage[] {
  if (digest === undefined || digest.summarizedThrough === 0) return history;
  return history.filter(
    (message) => message.ordinal === undefined || message.ordinal >= digest.summarizedThrough,
  );
}

/**
 * Splits the history into turns: a user message with the assistant reply that follows it, each counted as the model
 * gets it (the new message is the newest user message, so the history's last imageTurns - 1 show their images).
 */
function groupTurns(
  history: readonly ConversationMessage[],
  rules: { imageTurns: number; textTokens: number },
): Turn[] {
  const turns: Turn[] = [];
  let usersAfter = history.filter((message) => message.role === 'user').length;
  for (const stored of history) {
    if (stored.role === 'user') usersAfter -= 1;
    const counting = { imageShown: usersAfter + 1 < rules.imageTurns, textTokens: rules.textTokens };
    // Earlier tool traffic is not replayed; an assistant message without text adds nothing to the context.
    if (stored.role === 'assistant' && stored.content === '') continue;
    const message: ChatMessage =
      stored.role === 'user' && stored.attachments?.length
        ? { role: 'user', content: stored.content, attachments: stored.attachments }
        : { role: stored.role, content: stored.content };
    const current = turns.at(-1);
    if (stored.role === 'user' || current === undefined) {
      turns.push({
        messages: [message],
        tokens: messageTokens(message, counting),
        fromMessageId: stored.messageId,
        toMessageId: stored.messageId,
      });
    } else {
      current.messages.push(message);
      current.tokens += messageTokens(message, counting);
      current.toMessageId = stored.messageId;
    }
  }
  return turns;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
