// The port of chat sessions: one per session, owned by a user. Reading a session always goes through its owner, so
// another user's session is simply not found; nor is one whose conversation is being deleted, or was: its document
// stays as the conversation's tombstone, which writers read. Adapter: chat/adapters/cosmos-session-store.ts.
import { z } from 'zod';
import { userIdSchema } from '../ids.js';
import { conversationShapeShape, type ConversationShape } from './conversation-shape.js';

/** A session as stored and as POST /api/session/start answers it (201). */
export const chatSessionSchema = z.object({
  sessionId: z.string(),
  userId: userIdSchema,
  createdAt: z.iso.datetime(),
  ...conversationShapeShape,
  /**
   * A turn of the session has waited for its user's yes: a message posted from then on has the chat worker look
   * for a turn still parked (one read no other session pays).
   */
  approvals: z.literal(true).optional(),
});
export type ChatSession = z.infer<typeof chatSessionSchema>;

export interface SessionStore {
  /** A new session of the caller, under a new random id, shaped as chosen (model, assistant, project, ...). */
  create(userId: string, shape?: ConversationShape): Promise<ChatSession>;
  /**
   * The caller's session under an id the client chose (an AI SDK id, a form the server never makes), made now when
   * no user ever held that id. Undefined when another user holds or held it, or the caller's conversation under
   * it was deleted. Atomic: of racing claims of one new id, one user's wins and one session is made. A session made
   * now takes `shape`; one made before keeps its own.
   */
  claim(userId: string, sessionId: string, shape?: ConversationShape): Promise<ChatSession | undefined>;
  /**
   * Takes back the session a claim just made when its first message was refused: the session goes, the id stays
   * the caller's (their next claim makes it again). Harmless when there is none.
   */
  release(userId: string, sessionId: string): Promise<void>;
  /** Marks the session as one where a turn waits (or waited) for its user's yes: see ChatSession.approvals. */
  markApprovals(userId: string, sessionId: string): Promise<void>;
  /** Files the caller's live session in a project, or in none (null); false when there is no such session. */
  setProject(userId: string, sessionId: string, projectId: string | null): Promise<boolean>;
  /** Who claimed this client-chosen id (one point read, nothing made); undefined while no one has. */
  claimant(sessionId: string): Promise<string | undefined>;
  /**
   * The caller's session, or undefined when the caller has no session with that id, or its conversation is being
   * deleted or was.
   */
  find(userId: string, sessionId: string): Promise<ChatSession | undefined>;
  /**
   * Whether the session's conversation is being deleted or was (its tombstone stands): one point read. False for a
   * live session, and for an id that has no document (never made, or its tombstone expired).
   */
  isDeleted(userId: string, sessionId: string): Promise<boolean>;
  /**
   * Marks the session as being deleted (find no longer answers it, so no turn is posted to it, and every writer
   * of the conversation leaves it alone); false when the caller has no session with that id, or its delete has
   * finished. Marking again is harmless: a retried delete resumes.
   */
  markDeleting(userId: string, sessionId: string): Promise<boolean>;
  /**
   * Ends the delete: the marked document becomes the conversation's tombstone, kept until its own expiry
   * (SESSION_TOMBSTONE_TTL_SECONDS); false when there was no document.
   */
  markDeleted(userId: string, sessionId: string): Promise<boolean>;
}
