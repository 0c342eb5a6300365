// Files that come inside a message (a useChat file part's data: URL): checked against a message's limits before any
// is stored, then stored one by one, each as an upload would be; if one is refused, those this call stored are deleted.
import type { Caller } from '../identity/caller.js';
import type { IncomingFile } from './contracts.js';
import { AttachmentRefusedError } from './errors.js';
import { storeAttachment, type AttachmentServices } from './store-attachment.js';

/**
 * The ids of the files, in order, and those of them stored by this call: a file whose bytes this user already keeps,
 * free or in this conversation, is that file (a useChat app re-sends earlier messages' files).
 */
export async function storeMessageFiles(
  services: AttachmentServices,
  caller: Pick<Caller, 'userId' | 'groups'>,
  files: readonly IncomingFile[],
  sessionId?: string,
): Promise<{ ids: string[]; stored: string[] }> {
  const { config } = services;
  if (files.length > config.maxPerMessage)
    throw new AttachmentRefusedError(
      'attachments_per_message',
      `This message carries ${files.length} files: a message may carry at most ${config.maxPerMessage} (ATTACHMENTS_MAX_PER_MESSAGE).`,
    );
  const bytes = files.reduce((sum, file) => sum + file.bytes.length, 0);
  if (bytes > config.maxMessageBytes)
    throw new AttachmentRefusedError(
      'attachments_message_bytes',
      `This message's files are ${bytes} bytes: a message may carry at most ${config.maxMessageBytes} (ATTACHMENTS_MAX_MESSAGE_BYTES).`,
    );
  const ids: string[] = [];
  const stored: string[] = [];
  try {
    for (const file of files) {
      const kept = await storeAttachment(
        services,
        caller,
        file,
        sessionId === undefined ? {} : { sessionId },
      );
      ids.push(kept.id);
      if (!kept.reused) stored.push(kept.id);
    }
  } catch (error) {
    await services.store.delete(caller.userId, stored);
    throw error;
  }
  return { ids, stored };
}
