// The export's renderers (pure): a conversation as JSON, or as Markdown with its system prompt, messages, sources,
// tool calls and failures; and a file name safe in a content-disposition header.
import type { SystemPrompt } from '../conversation/messages.js';
import type { ConversationSummary, HistoryMessage } from './contracts.js';
import { oneLine } from '../plain-text.js';

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
    if (message.attachments !== undefined && message.attachments.length > 0)
      lines.push(
        '',
        '**Attachments:**',
        '',
        ...message.attachments.map(
          (file) =>
            `- ${oneLine(file.name)} (${file.mediaType}, ${file.size} bytes${file.width === undefined ? '' : `, ${file.width}×${file.height}`}): \`${file.id}\``,
        ),
      );
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
