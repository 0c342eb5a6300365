// The offline model's "intelligence": a handful of fixed, documented rules that turn a chat request into
// a reply plan (reasoning, text, tool calls). Pure; the same request always gets the same plan.
import { describeImages } from './image-parts.js';
import { memoryFormatValue } from './memory-formats.js';
import {
  messageText,
  parseJsonObject,
  type ChatCompletionRequest,
  type ChatRequestMessage,
} from './request-schema.js';
import { valueForSchema, valueSourceFrom, type JsonSchema } from './schema-values.js';
import { STOP_WORDS, contentWords, mostFrequent } from './text-tokens.js';
import type { OfflineModelVocabulary } from './vocabulary.js';

export interface PlannedToolCall {
  name: string;
  arguments: string;
}

export interface ReplyPlan {
  reasoning: string;
  /** The reasoning's steps (what was read, what the answer will do); `reasoning` is them joined by a space. */
  reasoningParts?: string[];
  content: string;
  toolCalls: PlannedToolCall[];
}

const QUOTE_LIMIT = 120;
const TOOL_RESULT_LIMIT = 200;
const MAX_WORDS = 4096;
const WORDS = ['offline', 'model', 'reply', 'word', 'stand-in', 'text', 'token', 'stream'];

/** The plan for a request; `vocabulary` names the app's formats and search tools that the stand-in rules answer. */
export function planReply(request: ChatCompletionRequest, vocabulary: OfflineModelVocabulary): ReplyPlan {
  const messages = request.messages;
  const last = messages[messages.length - 1];
  const lastUser = messages.findLast((m) => m.role === 'user');
  const question = lastUser ? messageText(lastUser) : '';
  const thinks = /\b(?:think|reason)/i.test(question);

  const answer = (content: string, intent: string, toolCalls: PlannedToolCall[] = []): ReplyPlan => {
    if (!thinks) return { reasoning: '', content, toolCalls };
    const reasoningParts = [`The user wrote "${quote(question)}".`, intent];
    return { reasoning: reasoningParts.join(' '), reasoningParts, content, toolCalls };
  };

  const format = request.response_format;
  if (format?.type === 'json_schema') {
    const standIn =
      historyFormatValue(vocabulary.formats, format.json_schema.name, format.json_schema.schema, question) ??
      memoryFormatValue(vocabulary.formats, format.json_schema.name, question);
    if (standIn !== undefined)
      return answer(
        JSON.stringify(standIn),
        `I will answer "${format.json_schema.name}" by its stand-in rule.`,
      );
    const value = valueForSchema(format.json_schema.schema ?? {}, valueSourceFrom(question));
    return answer(JSON.stringify(value), `I will answer with JSON for "${format.json_schema.name}".`);
  }
  if (format?.type === 'json_object') {
    return answer(JSON.stringify({ reply: defaultReply(question) }), 'I will answer with a JSON object.');
  }

  if (last?.role === 'tool') {
    return answer(describeToolResults(messages, vocabulary), 'I will report what the tools returned.');
  }

  if (last?.role === 'user') {
    const calls = plannedToolCalls(request, question, vocabulary);
    if (calls.length > 0) {
      return answer('', `I will call ${calls.map((c) => c.name).join(' and ')}.`, calls);
    }
  }

  // Images: their type, size and digest, so whoever sent them sees exactly what arrived.
  const images = last?.role === 'user' ? describeImages(last.content) : undefined;
  if (images !== undefined) return answer(images, 'I will describe the images I received.');

  const wordCount = /\breply with (\d+) words?\b/i.exec(question);
  if (wordCount?.[1] !== undefined) {
    const n = Math.min(Number(wordCount[1]), MAX_WORDS);
    return answer(
      Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(' '),
      `I will reply with ${n} words.`,
    );
  }
  return answer(defaultReply(question), 'I will reply briefly.');
}

function defaultReply(question: string): string {
  return `This is the offline stand-in model, not a real LLM. You said: "${quote(question)}"`;
}

/**
 * Tools named in the message (in the order they are named), or the one tool_choice forces; else, when the message
 * asks about an earlier conversation or mentions the user's documents and the matching search is offered, a
 * search for its topic.
 */
function plannedToolCalls(
  request: ChatCompletionRequest,
  text: string,
  vocabulary: OfflineModelVocabulary,
): PlannedToolCall[] {
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === 'none') return [];
  let chosen = tools
    .map((tool) => ({ tool, at: findName(text, tool.function.name) }))
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at)
    .map(({ tool }) => tool);
  if (typeof choice === 'object')
    chosen = tools.filter((tool) => tool.function.name === choice.function.name);
  else if (chosen.length === 0) {
    const { searchConversationHistory, searchKnowledgeBase } = vocabulary.tools;
    const offered = (name: string | undefined) => tools.find((tool) => tool.function.name === name);
    const conversations = offered(searchConversationHistory);
    if (asksAboutEarlierConversation(text) && conversations !== undefined)
      return [searchCall(conversations, searchTopic(text))];
    const knowledge = offered(searchKnowledgeBase);
    if (mentionsKnowledgeBase(text) && knowledge !== undefined)
      return [searchCall(knowledge, searchTopic(text, KNOWLEDGE_FILLER))];
  }
  if (choice === 'required' && chosen.length === 0) chosen = tools.slice(0, 1);

  const names = tools.map((tool) => tool.function.name);
  return chosen.map((tool) => ({
    name: tool.function.name,
    // Each call reads the numbers and quoted phrases from the start: "add and multiply 2 and 3".
    arguments: JSON.stringify(
      valueForSchema(
        (tool.function.parameters ?? { type: 'object' }) as JsonSchema,
        valueSourceFrom(text, names),
      ) ?? {},
    ),
  }));
}

/**
 * A search tool's call with the topic as its query: the first required string parameter of the tool's schema (the
 * first string one when none is required), nothing else, so the tool's own defaults apply.
 */
function searchCall(
  tool: NonNullable<ChatCompletionRequest['tools']>[number],
  topic: string,
): PlannedToolCall {
  const schema = (tool.function.parameters ?? {}) as {
    properties?: Record<string, { type?: unknown }>;
    required?: unknown;
  };
  const strings = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'string')
    .map(([name]) => name);
  const required = Array.isArray(schema.required) ? schema.required : [];
  const parameter = strings.find((name) => required.includes(name)) ?? strings[0] ?? 'query';
  return { name: tool.function.name, arguments: JSON.stringify({ [parameter]: topic }) };
}

/** Position of a function name in the text as a whole word (`add` does not match inside `address`). */
function findName(text: string, name: string): number {
  const escaped = name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`).exec(text)?.index ?? -1;
}

// --- Stand-in rules for conversation search (the tool search_conversation_history) -----------------------------
// A message that asks about an earlier conversation makes the model search with the message's topic words; the
// result is reported by naming the conversations found, so an answer cites them by title and date.

const EARLIER_CONVERSATION =
  /\b(?:last time|we (?:talked|spoke|chatted) about|remember when|(?:earlier|previous|past) conversations?|previously)\b/i;
/** Words of the trigger phrases and questions about them, which say nothing about the topic. */
const SEARCH_FILLER = new Set(
  (
    'last time talked talk spoke chatted about remember when earlier previous previously past conversation ' +
    'conversations discussed discuss say said told asked mentioned again recall'
  ).split(' '),
);
const MAX_TOPIC_WORDS = 8;
const SEARCH_SUMMARY_CHARS = 100;

function asksAboutEarlierConversation(text: string): boolean {
  return EARLIER_CONVERSATION.test(text);
}

/** The message's topic: its content words (3+ letters, no stop or trigger words), at most 8; else the message. */
function searchTopic(text: string, filler: ReadonlySet<string> = SEARCH_FILLER): string {
  const words = [...new Set(contentWords(text, STOP_WORDS).filter((word) => !filler.has(word)))];
  return words.length > 0 ? words.slice(0, MAX_TOPIC_WORDS).join(' ') : quote(text) || 'conversation';
}

/**
 * A search result as one sentence that names each conversation found (title, date and the start of its summary);
 * undefined when the result is not the tool's JSON (an error, say), which is then reported as any other.
 */
function describeConversationSearch(tool: string, result: string): string | undefined {
  const conversations = parseJsonObject(result)?.['conversations'];
  if (!Array.isArray(conversations)) return undefined;
  if (conversations.length === 0) return `${tool} found no earlier conversation about that.`;
  const named = conversations.map((found: unknown) => {
    const { title, date, summary } = (found ?? {}) as { title?: unknown; date?: unknown; summary?: unknown };
    const name = typeof title === 'string' && title.trim() !== '' ? title : 'an untitled conversation';
    const day = typeof date === 'string' ? date.slice(0, 10) : 'an unknown date';
    const about = typeof summary === 'string' ? `: ${quote(summary, SEARCH_SUMMARY_CHARS)}` : '';
    return `"${quote(name)}" (${day}${about})`;
  });
  const count =
    conversations.length === 1 ? 'an earlier conversation' : `${conversations.length} earlier conversations`;
  return `${tool} found ${count}: ${named.join('; ')}.`;
}

// --- Stand-in rules for the knowledge base (the tool search_knowledge_base) -------------------------------------
// A message that mentions the user's documents makes the model search them with the message's topic words; the
// result is reported by quoting the best passages, each followed by its citation in square brackets, as a real
// model is told to cite them. The tool is offered on every turn, so the phrases are narrow: "document" the verb
// ("How do I document a REST API?") or a handbook one might buy asks nothing of the user's documents.

const KNOWLEDGE_BASE =
  /\b(?:knowledge base|(?:the|my) handbook|my (?:documents|files)|the documents?|uploaded documents?|what I uploaded|according to (?:the|my))\b/i;
/** Words of the trigger phrases and of asking about a document, which say nothing about the topic. */
const KNOWLEDGE_FILLER = new Set(
  (
    'knowledge base document documents handbook according uploaded upload file files say says said ' +
    'find look search mention mentions write written'
  ).split(' '),
);
/** Passages quoted at most, and the characters quoted of each. */
const KNOWLEDGE_QUOTES = 3;
const KNOWLEDGE_QUOTE_CHARS = 100;

function mentionsKnowledgeBase(text: string): boolean {
  return KNOWLEDGE_BASE.test(text);
}

/**
 * A knowledge search result as one sentence quoting the best passages, each with its citation in square brackets;
 * undefined when the result is not the tool's JSON (an error, say), which is then reported as any other.
 */
function describeKnowledgeSearch(tool: string, result: string): string | undefined {
  const results = parseJsonObject(result)?.['results'];
  if (!Array.isArray(results)) return undefined;
  if (results.length === 0) return `${tool} found nothing in the knowledge base about that.`;
  const quoted = results.slice(0, KNOWLEDGE_QUOTES).map((found: unknown) => {
    const { text, citation } = (found ?? {}) as { text?: unknown; citation?: unknown };
    const passage = typeof text === 'string' ? quote(text, KNOWLEDGE_QUOTE_CHARS) : '';
    return `"${passage}" [${typeof citation === 'string' ? quote(citation) : 'no citation'}]`;
  });
  return `${tool} found: ${quoted.join('; ')}.`;
}

function describeToolResults(
  messages: readonly ChatRequestMessage[],
  vocabulary: OfflineModelVocabulary,
): string {
  const results: ChatRequestMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--)
    results.unshift(messages[i]!);
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  }
  return results
    .map((result) => {
      const name = names.get(result.tool_call_id ?? '') ?? 'the tool';
      const { searchConversationHistory, searchKnowledgeBase } = vocabulary.tools;
      const searched =
        name === searchConversationHistory
          ? describeConversationSearch(name, messageText(result))
          : name === searchKnowledgeBase
            ? describeKnowledgeSearch(name, messageText(result))
            : undefined;
      return searched ?? `${name} returned ${quote(messageText(result).trim(), TOOL_RESULT_LIMIT)}.`;
    })
    .join(' ');
}

function quote(text: string, limit = QUOTE_LIMIT): string {
  // One line: line breaks become spaces; other whitespace (tabs, U+202F, ...) is quoted as written.
  const chars = [...text.replace(/\s*[\r\n]+\s*/g, ' ').trim()];
  return chars.length <= limit ? chars.join('') : `${chars.slice(0, limit - 1).join('')}…`;
}

// --- Stand-in rules for the history worker's formats (the vocabulary's exchangeIndex and sessionSummary) -------
// Its requests carry their input as JSON in the user message; these answers are built from that input by fixed
// rules, so a local conversation gets index lines, tags, titles and summaries that say what was asked.

const INDEX_PART_CHARS = 100;
const MAX_STAND_IN_TAGS = 3;
const TAG_CHARS = 40;
const TITLE_CHARS = 60;
const SUMMARY_QUESTION_CHARS = 100;
const SUMMARY_WORDS = 200;
const SUMMARY_CHARS = 2_000;

/** The value of a history format, or undefined when the name is another or its input is not the expected JSON. */
function historyFormatValue(
  formats: OfflineModelVocabulary['formats'],
  name: string,
  schema: JsonSchema | undefined,
  input: string,
): unknown {
  const { exchangeIndex, sessionSummary } = formats;
  if (name !== exchangeIndex && name !== sessionSummary) return undefined;
  const fields = parseJsonObject(input);
  if (fields === undefined) return undefined;
  const text = (key: string) => (typeof fields[key] === 'string' ? fields[key] : '');
  if (name === sessionSummary) {
    const exchanges = Array.isArray(fields['exchanges']) ? (fields['exchanges'] as unknown[]) : [];
    const questions = exchanges.map((exchange) =>
      typeof exchange === 'object' &&
      exchange !== null &&
      typeof (exchange as { question?: unknown }).question === 'string'
        ? quote((exchange as { question: string }).question, SUMMARY_QUESTION_CHARS)
        : '',
    );
    return { summary: standInSummary(text('previousSummary'), questions) };
  }
  const question = text('question');
  const answerText = text('answer');
  const value: Record<string, unknown> = {
    line: standInLine(question, answerText),
    tags: standInTags(`${question} ${answerText}`),
  };
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (properties?.['title'] !== undefined) value['title'] = standInTitle(text('firstQuestion') || question);
  return value;
}

/** `Q: <question> → A: <answer start>`, each part on one line and cut to 100 characters. */
function standInLine(question: string, answer: string): string {
  const q = quote(question, INDEX_PART_CHARS) || '(empty)';
  return answer.trim() === '' ? `Q: ${q}` : `Q: ${q} → A: ${quote(answer, INDEX_PART_CHARS)}`;
}

/** The most frequent content words (3+ letters, no stop words, cut to 40), at most 3, ties by first appearance. */
function standInTags(text: string): string[] {
  const tags = mostFrequent(contentWords(text, STOP_WORDS), MAX_STAND_IN_TAGS).map((word) =>
    [...word].slice(0, TAG_CHARS).join(''),
  );
  return tags.length > 0 ? tags : ['conversation'];
}

/** The first words of the question, at most 60 characters (cut at a word when it can be). */
function standInTitle(question: string): string {
  const line = quote(question, Number.MAX_SAFE_INTEGER);
  if ([...line].length <= TITLE_CHARS) return line || 'Conversation';
  const start = [...line].slice(0, TITLE_CHARS).join('');
  const atWord = start.slice(0, start.lastIndexOf(' '));
  return (atWord.length >= TITLE_CHARS / 2 ? atWord : start).trim();
}

/**
 * The previous summary and the folded questions, joined with "; ", keeping the newest words: at most 200 of them
 * in at most 2,000 characters.
 */
function standInSummary(previous: string, questions: readonly string[]): string {
  const parts = [previous.trim(), ...questions].filter((part) => part !== '');
  const words = parts
    .join('; ')
    .split(/\s+/)
    .filter((word) => word !== '');
  if (words.length === 0) return 'Nothing was asked yet.';
  const kept: string[] = [];
  let chars = 0;
  for (const word of words.reverse()) {
    chars += [...word].length + 1;
    if (kept.length >= SUMMARY_WORDS || chars > SUMMARY_CHARS) break;
    kept.unshift(word);
  }
  return kept.length === words.length ? kept.join(' ') : `… ${kept.join(' ')}`;
}
