// Exports a whole conversation as a file, Markdown or JSON: its active path, every page read in order,
// read-your-writes like the reads of the History API.
import { MAX_MESSAGE_PAGE, type HistoryMessage } from './contracts.js';
import {
  pendingMemory,
  requireHeader,
  shownPath,
  systemPromptOf,
  toSummary,
  unpersistedMessages,
  type HistoryReadServices,
} from './conversation-reads.js';
import {
  exportFileName,
  renderJsonExport,
  renderMarkdownExport,
  type ExportableConversation,
} from './export-renderers.js';
import type { ExportFormat } from './history-queries.js';
import { readPage } from './message-pages.js';

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
