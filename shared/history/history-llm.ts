// The history worker's model calls: an exchange's one-line index entry with topic tags (and the conversation's
// title when one is due), and the fold of turns into the rolling session summary. Each call's input is bounded, so
// its cost never grows with the conversation; the offline model answers these formats by name.
import { z } from 'zod';
import { completeInstructedJson } from '../llm/instructed-json.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import { FIRST_MESSAGE_TITLE_CHARS } from './contracts.js';
import { cleanDisplayText, cut, oneLine } from '../plain-text.js';

/** Response format names: the offline model recognises them. */
export const EXCHANGE_INDEX_FORMAT = 'exchange_index';
export const SESSION_SUMMARY_FORMAT = 'session_summary';

const INDEX_LINE_MAX_CHARS = 240;
const MAX_TAGS = 5;
const TAG_MAX_CHARS = 40;
const SUMMARY_MAX_WORDS = 250;
/** Room for SUMMARY_MAX_WORDS long words; the word count is the limit the model is held to. */
const SUMMARY_MAX_CHARS = 2_500;
/** Each question and answer a call sees is cut to this: the call's cost stays bounded whatever was said. */
export const EXCHANGE_TEXT_CHARS = 4_000;

/** A C0 control character or DEL (a title is one plain line). */
const hasControlChars = (text: string) => [...text].some((char) => char < ' ' || char === '\u007f');
const wordCount = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;

const lineSchema = z
  .string()
  .min(1)
  .max(INDEX_LINE_MAX_CHARS)
  .refine((line) => !/[\r\n]/.test(line), 'must be one line');
const tagsSchema = z.array(z.string().min(1).max(TAG_MAX_CHARS)).min(1).max(MAX_TAGS);
const titleSchema = z
  .string()
  .min(1)
  .max(FIRST_MESSAGE_TITLE_CHARS)
  .refine((title) => title.trim() !== '', 'must not be blank')
  .refine((title) => !hasControlChars(title), 'must be one line without control characters')
  .refine((title) => cleanDisplayText(title) !== '', 'must have text to show');

const exchangeIndexSchema = z.object({ line: lineSchema, tags: tagsSchema });
const titledExchangeIndexSchema = exchangeIndexSchema.extend({ title: titleSchema });
const sessionSummarySchema = z.object({
  summary: z
    .string()
    .min(1)
    .max(SUMMARY_MAX_CHARS)
    .refine(
      (summary) => wordCount(summary) <= SUMMARY_MAX_WORDS,
      `must be at most ${SUMMARY_MAX_WORDS} words`,
    ),
});

export interface ExchangeText {
  question: string;
  answer: string;
}

export interface ExchangeIndex {
  line: string;
  /** 1–5 short lowercase topics. */
  tags: string[];
  /** Present when a title was asked for. */
  title?: string;
}

const INDEX_INSTRUCTIONS =
  'You index one exchange of a conversation between a user and an assistant, so it can be found later. The ' +
  'user message is a JSON object with the user\'s "question" and the assistant\'s "answer". Write "line": one ' +
  `line of at most ${INDEX_LINE_MAX_CHARS} characters saying what was asked and the gist of the answer, in the ` +
  'language of the question; and "tags": 1 to 5 short lowercase topics (one or two words each).';
const TITLE_INSTRUCTIONS =
  ' Also write "title": a short title for the whole conversation (at most ' +
  `${FIRST_MESSAGE_TITLE_CHARS} characters, no quotes), from "firstQuestion" (how the conversation began) and ` +
  'this exchange.';

const SUMMARY_INSTRUCTIONS =
  'You keep the running summary of a conversation between a user and an assistant. The user message is a JSON ' +
  'object with "previousSummary" (what the conversation covered so far, may be empty) and "exchanges" (the next ' +
  'exchanges, oldest first; "failed": true means the question got no answer). Write "summary": the new summary of ' +
  `everything, at most ${SUMMARY_MAX_WORDS} words, in the language of the conversation. Keep the facts, names, ` +
  "numbers, decisions and the user's stated preferences and corrections; drop pleasantries.";

/**
 * The index entry of an exchange, with the conversation's title when `titleFrom` is given. Throws what the
 * gateway throws (an LlmError, also when the answer stays invalid after the gateway's one correction).
 */
export async function indexExchange(
  llm: LlmGateway,
  exchange: ExchangeText,
  titleFrom?: { firstQuestion: string },
): Promise<ExchangeIndex> {
  const input = {
    ...(titleFrom ? { firstQuestion: cut(titleFrom.firstQuestion, EXCHANGE_TEXT_CHARS) } : {}),
    question: cut(exchange.question, EXCHANGE_TEXT_CHARS),
    answer: cut(exchange.answer, EXCHANGE_TEXT_CHARS),
  };
  const instructions = INDEX_INSTRUCTIONS + (titleFrom ? TITLE_INSTRUCTIONS : '');
  if (titleFrom) {
    const value = await completeInstructedJson(llm, {
      instructions,
      input,
      schema: titledExchangeIndexSchema,
      name: EXCHANGE_INDEX_FORMAT,
      purpose: 'title',
    });
    return { line: value.line.trim(), tags: normalTags(value.tags), title: cleanDisplayText(value.title) };
  }
  const value = await completeInstructedJson(llm, {
    instructions,
    input,
    schema: exchangeIndexSchema,
    name: EXCHANGE_INDEX_FORMAT,
  });
  return { line: value.line.trim(), tags: normalTags(value.tags) };
}

/** The summary of the previous summary and the folded exchanges. Throws what the gateway throws. */
export async function foldSummary(
  llm: LlmGateway,
  previousSummary: string,
  exchanges: readonly (ExchangeText & { failed?: boolean })[],
): Promise<string> {
  const input = {
    previousSummary,
    exchanges: exchanges.map((exchange) => ({
      question: cut(exchange.question, EXCHANGE_TEXT_CHARS),
      answer: cut(exchange.answer, EXCHANGE_TEXT_CHARS),
      ...(exchange.failed ? { failed: true } : {}),
    })),
  };
  const value = await completeInstructedJson(llm, {
    instructions: SUMMARY_INSTRUCTIONS,
    input,
    schema: sessionSummarySchema,
    name: SESSION_SUMMARY_FORMAT,
  });
  return value.summary.trim();
}

/** The index line when the model gave none: the question, on one line. */
export function fallbackIndexLine(question: string): string {
  return `Q: ${cut(oneLine(question), INDEX_LINE_MAX_CHARS - 3)}`;
}

/** Tags are matched case-insensitively by lookup_past_conversation: stored lowercase, trimmed, once each. */
function normalTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()).filter((tag) => tag !== ''))];
}
