// Attachments kept in memory, by user, as the Blob adapter keeps them under each user's prefix.
import type { AttachmentStore, StoredAttachment } from '../../shared/attachments/attachment-store.js';
import type { AttachmentUploads, UploadTicket } from '../../shared/attachments/attachment-uploads.js';

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

  findSent(userId: string, sourceSha256: string, sessionId?: string): Promise<StoredAttachment | undefined> {
    const found = this.of(userId).find(
      ([, { attachment }]) =>
        attachment.sourceSha256 === sourceSha256 &&
        (attachment.sessionId === undefined || attachment.sessionId === sessionId),
    );
    return Promise.resolve(found?.[1].attachment);
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

/** Direct uploads kept in memory: the "URL" names the pending file, which a test writes with `write`. */
export class MemoryUploads implements AttachmentUploads {
  readonly pending = new Map<string, { ticket: UploadTicket; bytes?: Uint8Array; at: Date }>();

  open(userId: string, ticket: UploadTicket): Promise<string> {
    this.pending.set(key(userId, ticket.attachmentId), { ticket, at: new Date() });
    return Promise.resolve(`memory://uploads/${key(userId, ticket.attachmentId)}`);
  }

  write(userId: string, attachmentId: string, bytes: Uint8Array): void {
    const entry = this.pending.get(key(userId, attachmentId));
    if (entry) entry.bytes = bytes;
  }

  find(userId: string, attachmentId: string) {
    const entry = this.pending.get(key(userId, attachmentId));
    return Promise.resolve(entry && { ticket: entry.ticket, uploadedBytes: entry.bytes?.length });
  }

  read(userId: string, attachmentId: string): Promise<Uint8Array> {
    const bytes = this.pending.get(key(userId, attachmentId))?.bytes;
    return bytes ? Promise.resolve(bytes) : Promise.reject(new Error('nothing uploaded'));
  }

  drop(userId: string, attachmentId: string): Promise<void> {
    this.pending.delete(key(userId, attachmentId));
    return Promise.resolve();
  }

  sweep(options: { uploadsBefore: Date }): Promise<{ uploads: number; unattached: number }> {
    let uploads = 0;
    for (const [name, entry] of this.pending)
      if (entry.at < options.uploadsBefore) {
        this.pending.delete(name);
        uploads++;
      }
    return Promise.resolve({ uploads, unattached: 0 });
  }
}
