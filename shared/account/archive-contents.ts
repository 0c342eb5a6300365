// What "download all my data" puts in the archive, entry by entry: each conversation as its JSON export, memory as
// its NDJSON export, each knowledge document the user uploaded with its text, and each attachment's bytes.
import type { AttachmentStore } from '../attachments/attachment-store.js';
import type { HistoryReadServices } from '../history/conversation-reads.js';
import { exportConversation } from '../history/export-conversation.js';
import { privateLibrary, SHARED_LIBRARY } from '../knowledge/contracts.js';
import type { KnowledgeDocuments } from '../knowledge/knowledge-documents.js';
import { exportMemory, type MemoryTransferServices } from '../memory/memory-transfer.js';
import { NotFoundError } from '../errors.js';
import type { ArchiveEntry } from '../tar-archive.js';
import type { ExportRecord } from './contracts.js';

/** The text of a knowledge document, read back from its chunks in order. */
export interface KnowledgeText {
  read(library: string, documentId: string): Promise<string>;
}

export interface ArchiveSources {
  history: HistoryReadServices;
  memory: Pick<MemoryTransferServices, 'facts' | 'summaries'>;
  knowledge: { documents: KnowledgeDocuments; text: KnowledgeText };
  attachments: Pick<AttachmentStore, 'list' | 'read'>;
}

export type ArchiveCounts = NonNullable<ExportRecord['contents']>;

const PAGE = 100;
const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

/** The archive's entries; `counts` is filled in as they are read. */
export async function* archiveEntries(
  sources: ArchiveSources,
  userId: string,
  counts: ArchiveCounts,
): AsyncGenerator<ArchiveEntry> {
  yield { name: 'README.txt', bytes: Buffer.from(README, 'utf8') };
  for await (const sessionId of conversationIds(sources.history, userId)) {
    try {
      const file = await exportConversation(sources.history, userId, sessionId, 'json');
      counts.conversations++;
      yield { name: `conversations/${sessionId}.json`, bytes: Buffer.from(file.text, 'utf8') };
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error; // deleted while the archive was written
    }
  }
  const memory = await exportMemory(sources.memory, userId);
  counts.memoryLines = memory.split('\n').filter((line) => line.length > 0).length;
  yield { name: 'memory/memory.ndjson', bytes: Buffer.from(memory, 'utf8') };
  for (const library of [privateLibrary(userId), SHARED_LIBRARY]) {
    for await (const document of documentsOf(sources.knowledge.documents, library, userId)) {
      const text = await sources.knowledge.text.read(library, document.documentId);
      counts.documents++;
      const { documentId, title, fileName, format, mediaType, bytes, status, createdAt, updatedAt } =
        document;
      yield {
        name: `knowledge/${document.documentId}.json`,
        bytes: json({
          documentId,
          library: library === SHARED_LIBRARY ? 'shared' : 'private',
          title,
          ...(fileName === undefined ? {} : { fileName }),
          format,
          mediaType,
          bytes,
          status,
          createdAt,
          updatedAt,
          text,
        }),
      };
    }
  }
  for (const attachment of await sources.attachments.list(userId)) {
    const file = await sources.attachments.read(userId, attachment.id);
    if (file === undefined) continue; // deleted meanwhile
    counts.attachments++;
    yield { name: `attachments/${attachment.id}/${safeFileName(attachment.name)}`, bytes: file.bytes };
  }
}

async function* conversationIds(history: HistoryReadServices, userId: string): AsyncGenerator<string> {
  let continuationToken: string | undefined;
  do {
    const page = await history.headers.list(userId, {
      limit: PAGE,
      ...(continuationToken === undefined ? {} : { continuationToken }),
    });
    for (const header of page.headers) yield header.sessionId;
    continuationToken = page.continuationToken;
  } while (continuationToken !== undefined);
}

async function* documentsOf(documents: KnowledgeDocuments, library: string, userId: string) {
  let continuationToken: string | undefined;
  do {
    const page = await documents.list(library, {
      ownerId: userId,
      limit: PAGE,
      ...(continuationToken === undefined ? {} : { continuationToken }),
    });
    yield* page.documents;
    continuationToken = page.continuationToken;
  } while (continuationToken !== undefined);
}

/** A file name as an archive path's last part: no separators or control characters, at most 80 characters. */
export function safeFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[/\\\u0000-\u001f\u007f]/g, '_').replace(/^\.+/, '_');
  const short = [...cleaned].slice(0, 80).join('');
  return short.length === 0 ? 'file' : short;
}

const README = `Your data, as this service keeps it.

conversations/<sessionId>.json  each conversation as its JSON export (GET /api/history/conversations/{id}/export?format=json)
memory/memory.ndjson            your long-term memory: facts and conversation summaries, one JSON object per line;
                                POST /api/memory/users/{userId}/import takes this file back
knowledge/<documentId>.json     each knowledge document you uploaded: its details and its text
attachments/<id>/<name>         each file you attached to a message, as you sent it

Temporary chats are not included: they are kept nowhere beyond their time to live.
`;
