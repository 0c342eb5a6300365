// The direct uploads port: a file too large for one API request goes from the client straight to its own pending
// blob through a short-lived write-only URL, beside a ticket of what the client said of it; both are gone once the
// upload is completed (checked and stored as an attachment), refused, or swept.
export interface UploadTicket {
  attachmentId: string;
  name: string;
  /** The client's word on the type: used only to tell text formats apart, as for any file. */
  declaredType?: string | undefined;
  /** The size the client announced; the upload's own size is what is checked. */
  size: number;
  expiresOn: Date;
}

export interface AttachmentUploads {
  /** Keeps the ticket and gives a URL that can create and write the pending blob, and nothing else, until it expires. */
  open(userId: string, ticket: UploadTicket): Promise<string>;
  /** The ticket and how many bytes were uploaded (undefined before any); undefined for an unknown id or another user's. */
  find(
    userId: string,
    attachmentId: string,
  ): Promise<{ ticket: UploadTicket; uploadedBytes: number | undefined } | undefined>;
  /** The uploaded bytes. */
  read(userId: string, attachmentId: string): Promise<Uint8Array>;
  /** Deletes the pending blob and its ticket (nothing there is not an error). */
  drop(userId: string, attachmentId: string): Promise<void>;
  /**
   * Deletes every pending upload (of any user) begun before `uploadsBefore`, and every stored attachment that no
   * message carries made before `unattachedBefore`; how many of each.
   */
  sweep(options: {
    uploadsBefore: Date;
    unattachedBefore: Date;
  }): Promise<{ uploads: number; unattached: number }>;
}
