// The attachments port: each user's files, kept under that user's own prefix, so a lookup by another user finds
// nothing (404) without a check that could be forgotten.
import type { MessageAttachment } from '../message-attachments.js';

/** An attachment as stored: what a message keeps of it, its digest, and the conversation it was sent in. */
export interface StoredAttachment extends MessageAttachment {
  sha256: string;
  /** SHA-256 of the bytes as they were sent (before any re-encoding): the same file sent again is found by it. */
  sourceSha256?: string;
  /** Set once a message carries it: deleting that conversation deletes the file. */
  sessionId?: string;
}

export interface AttachmentStore {
  /** Stores the file whole, or nothing of it. */
  put(userId: string, attachment: StoredAttachment, bytes: Uint8Array): Promise<void>;
  /** The user's attachment without its bytes; undefined for an unknown id or another user's. */
  find(userId: string, attachmentId: string): Promise<StoredAttachment | undefined>;
  /** The user's attachment with its bytes; undefined for an unknown id or another user's. */
  read(
    userId: string,
    attachmentId: string,
  ): Promise<{ attachment: StoredAttachment; bytes: Buffer } | undefined>;
  /**
   * The user's file stored from these bytes (by `sourceSha256`) that is free to be named again: tied to no
   * conversation yet, or to `sessionId`. A file tied to another conversation is not shared, since deleting that
   * conversation deletes it.
   */
  findSent(userId: string, sourceSha256: string, sessionId?: string): Promise<StoredAttachment | undefined>;
  /** Ties the user's attachments to the conversation a message of it carries them in. */
  link(userId: string, attachmentIds: readonly string[], sessionId: string): Promise<void>;
  /** Every attachment of the user, without bytes (the data archive reads each in turn). */
  list(userId: string): Promise<StoredAttachment[]>;
  /** Bytes the user keeps in attachments. */
  usedBytes(userId: string): Promise<number>;
  /** Deletes the user's attachments by id (an unknown id is skipped). */
  delete(userId: string, attachmentIds: readonly string[]): Promise<void>;
  /** Deletes the attachments of a conversation; how many were deleted. */
  deleteConversation(userId: string, sessionId: string): Promise<number>;
  /** Deletes every attachment of a user; how many were deleted. */
  deleteUser(userId: string): Promise<number>;
}
