// Attachments kept in memory, by user, as the Blob adapter keeps them under each user's prefix.
import type { AttachmentStore, StoredAttachment } from '../../shared/attachments/attachment-store.js';

export class MemoryAttachments implements AttachmentStore {
  readonly files = new Map<string, { attachment: StoredAttachment; bytes: Uint8Array }>();

  put(userId: string, attachment: StoredAttachment, bytes: Uint8Array): Promise<void> {
    this.files.set(key(userId, attachment.id), { attachment, bytes });
    return Promise.resolve();
  }

  find(userId: string, attachmentId: string): Promise<StoredAttachment | undefined> {
    return Promise.resolve(this.files.get(key(userId, attachmentId))?.attachment);
  }

  read(userId: string, attachmentId: string) {
    const file = this.files.get(key(userId, attachmentId));
    return Promise.resolve(file && { attachment: file.attachment, bytes: Buffer.from(file.bytes) });
  }

  link(userId: string, attachmentIds: readonly string[], sessionId: string): Promise<void> {
    for (const id of attachmentIds) {
      const file = this.files.get(key(userId, id));
      if (file) file.attachment = { ...file.attachment, sessionId };
    }
    return Promise.resolve();
  }

  list(userId: string): Promise<StoredAttachment[]> {
    return Promise.resolve(this.of(userId).map(([, file]) => file.attachment));
  }

  usedBytes(userId: string): Promise<number> {
    return Promise.resolve(this.of(userId).reduce((sum, [, file]) => sum + file.bytes.length, 0));
  }

  delete(userId: string, attachmentIds: readonly string[]): Promise<void> {
    for (const id of attachmentIds) this.files.delete(key(userId, id));
    return Promise.resolve();
  }

  deleteConversation(userId: string, sessionId: string): Promise<number> {
    const gone = this.of(userId).filter(([, file]) => file.attachment.sessionId === sessionId);
    for (const [name] of gone) this.files.delete(name);
    return Promise.resolve(gone.length);
  }

  deleteUser(userId: string): Promise<number> {
    const gone = this.of(userId);
    for (const [name] of gone) this.files.delete(name);
    return Promise.resolve(gone.length);
  }

  private of(userId: string) {
    return [...this.files.entries()].filter(([name]) => name.startsWith(`${userId}/`));
  }
}

const key = (userId: string, attachmentId: string) => `${userId}/${attachmentId}`;
