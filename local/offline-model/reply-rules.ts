// The offline model's "intelligence": a handful of fixed, documented rules that turn a chat request into
// a reply plan (reasoning, text, tool calls). Pure; the same request always gets the same plan.
import { messageText, type ChatCompletionRequest, type ChatRequestMessage } from './request-schema.js';
import { valueForSchema, valueSourceFrom, type JsonSchema } from './schema-values.js';

export interface PlannedToolCall {
  name: string;
  arguments: string;
}

export interface ReplyPlan {
  reasoning: string;
  content: string;
  toolCalls: PlannedToolCall[];
}

const QUOTE_LIMIT = 120;
const TOOL_RESULT_LIMIT = 200;
const MAX_WORDS = 4096;
const WORDS = ['offline', 'model', 'reply', 'word', 'stand-in', 'text', 'token', 'stream'];

export function planReply(request: ChatCompletionRequest): ReplyPlan {
  const messages = request.messages;
  const last = messages[messages.length - 1];
  const lastUser = messages.findLast((m) => m.role === 'user');
  const question = lastUser ? messageText(lastUser) : '';
  const thinks = /\b(?:think|reason)/i.test(question);

  const answer = (content: string, intent: string, toolCalls: PlannedToolCall[] = []): ReplyPlan => ({
    reasoning: thinks ? `The user wrote "${quote(question)}". ${intent}` : '',
    content,
    toolCalls,
  });

  const format = request.response_format;
  if (format?.type === 'json_schema') {
    const value = valueForSchema(format.json_schema.schema ?? {}, valueSourceFrom(question));
    return answer(JSON.stringify(value), `I will answer with JSON for "${format.json_schema.name}".`);
  }
  if (format?.type === 'json_object') {
    return answer(JSON.stringify({ reply: defaultReply(question) }), 'I will answer with a JSON object.');
  }

  if (last?.role === 'tool') {
    return answer(describeToolResults(messages), 'I will report what the tools returned.');
  }

  if (last?.role === 'user') {
    const calls = plannedToolCalls(request, question);
    if (calls.length > 0) {
      return answer('', `I will call ${calls.map((c) => c.name).join(' and ')}.`, calls);
    }
  }

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

/** Tools named in the message (in the order they are named), or the one tool_choice forces. */
function plannedToolCalls(request: ChatCompletionRequest, text: string): PlannedToolCall[] {
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
  else if (choice === 'required' && chosen.length === 0) chosen = tools.slice(0, 1);

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

/** Position of a function name in the text as a whole word (`add` does not match inside `address`). */
function findName(text: string, name: string): number {
  const escaped = name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`).exec(text)?.index ?? -1;
}

function describeToolResults(messages: readonly ChatRequestMessage[]): string {
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
      return `${name} returned ${quote(messageText(result).trim(), TOOL_RESULT_LIMIT)}.`;
    })
    .join(' ');
}

function quote(text: string, limit = QUOTE_LIMIT): string {
  // One line: line breaks become spaces; other whitespace (tabs, U+202F, ...) is quoted as written.
  const chars = [...text.replace(/\s*[\r\n]+\s*/g, ' ').trim()];
  return chars.length <= limit ? chars.join('') : `${chars.slice(0, limit - 1).join('')}…`;
}
