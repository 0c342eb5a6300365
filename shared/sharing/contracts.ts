// The sharing area's contracts: a share is a snapshot of a conversation's shown branch, kept apart from the
// conversation (one small head plus bounded chunks of messages), and each owner's list of their links.
import { z } from 'zod';
import { ID_FORMATS, shareIdSchema } from '../ids.js';
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const SHARES_CONTAINER = 'shares';
export const SHARE_LINKS_CONTAINER = 'share-links';

export const sharingContainers: readonly ContainerSpec[] = [
  {
    id: SHARES_CONTAINER,
    partitionKeyPaths: ['/shareId'],
    defaultTtlSeconds: -1,
    purpose:
      "Shared snapshots: per share, one head (title, owner, dates) and its messages in chunks of at most 256 KiB, keyed by the share's random id so an anonymous reader's open is one point read and one single-partition query; a share with an expiry carries a TTL.",
  },
  {
    id: SHARE_LINKS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    defaultTtlSeconds: -1,
    purpose:
      "Each owner's share links (id, conversation, title, dates), listed and revoked by their owner only; deleting a conversation revokes its links through them.",
  },
];

// --- Limits -----------------------------------------------------------------------------------------------

/** The JSON of one chunk of a snapshot's messages stays under this (Cosmos DB's item limit is 2 MB). */
export const SHARE_CHUNK_BYTES = 256 * 1024;
/** The whole snapshot: a conversation shared past this is refused with 413 (share up to an earlier message). */
export const SHARE_MAX_BYTES = 4 * 1024 * 1024;
/** A tool call's arguments and result, when the owner includes them, are cut to this many characters. */
export const SHARED_TOOL_TEXT_CHARS = 2_000;
/** The furthest a share's expiry may be set. */
export const SHARE_MAX_LIFETIME_DAYS = 3_660;

// --- The snapshot -----------------------------------------------------------------------------------------

/** A source an answer cites, as a share shows it: what it is called, never the passage's text. */
export const sharedSourceSchema = z.object({
  title: z.string(),
  citation: z.string(),
  heading: z.string().optional(),
  pages: z.array(z.number().int().min(1)).optional(),
});

/** A tool call of an answer, in a share whose owner included them (cut to SHARED_TOOL_TEXT_CHARS). */
export const sharedToolCallSchema = z.object({
  name: z.string(),
  arguments: z.string(),
  result: z.string(),
  isError: z.boolean(),
});

/** A message as a share shows it: who said what, when, and the sources an answer cites. */
export const sharedMessageSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  timestamp: z.string(),
  sources: z.array(sharedSourceSchema).optional(),
  toolCalls: z.array(sharedToolCallSchema).optional(),
});
export type SharedMessage = z.infer<typeof sharedMessageSchema>;

/** What a share is, beside its messages. */
const shareFieldsSchema = z.object({
  shareId: z.string(),
  /** The owner: never shown to readers. */
  userId: z.string(),
  sessionId: z.string(),
  title: z.string(),
  createdAt: z.iso.datetime(),
  /** null: until revoked. */
  expiresAt: z.iso.datetime().nullable(),
  messageCount: z.number().int().nonnegative(),
  includesToolCalls: z.boolean(),
});
export type ShareFields = z.infer<typeof shareFieldsSchema>;

/** A share's head (container `shares`, id `share`): written last, so a reader never sees a share half-written. */
export const SHARE_HEAD_ID = 'share';
export const shareHeadSchema = shareFieldsSchema.extend({
  id: z.literal(SHARE_HEAD_ID),
  kind: z.literal('share'),
  chunkCount: z.number().int().nonnegative(),
});
export type ShareHead = z.infer<typeof shareHeadSchema>;

/** One chunk of a share's messages (container `shares`, id `chunk.{index}`), in order. */
export const shareChunkSchema = z.object({
  id: z.string(),
  kind: z.literal('share-chunk'),
  shareId: z.string(),
  index: z.number().int().nonnegative(),
  messages: z.array(sharedMessageSchema),
});
export type ShareChunk = z.infer<typeof shareChunkSchema>;

export function shareChunkId(index: number): string {
  return `chunk.${index}`;
}

/** An owner's link (container `share-links`, partition userId, id = shareId). */
export const shareLinkSchema = shareFieldsSchema
  .omit({ messageCount: true, includesToolCalls: true })
  .extend({
    id: z.string(),
    kind: z.literal('share-link'),
  });
export type ShareLink = z.infer<typeof shareLinkSchema>;

/** A snapshot ready to store: its fields and its messages cut into chunks. */
export interface ShareSnapshot {
  fields: ShareFields;
  chunks: SharedMessage[][];
}

// --- HTTP -------------------------------------------------------------------------------------------------

const messageIdPattern = new RegExp(
  `^(?:${ID_FORMATS.chatMessageId.forms.map((form) => form.pattern).join('|')})_(?:user|assistant)$`,
);

/** POST /api/history/conversations/{sessionId}/shares (no body: the whole shown branch, no expiry). */
export const createShareBodySchema = z
  .object(
    {
      /** The last message shared (`{chatMessageId}_user` or `_assistant`, as the History API names it); default: the end. */
      upToMessageId: z
        .string()
        .regex(
          messageIdPattern,
          'must be a messageId of the conversation ({chatMessageId}_user or _assistant)',
        )
        .optional(),
      /** When the link stops working; default: never (until revoked). */
      expiresAt: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time' }).optional(),
      /** Shows the answers' tool calls (arguments and results, cut to 2,000 characters each); default false. */
      includeToolCalls: z.boolean().default(false),
    },
    { error: 'the body must be a JSON object' },
  )
  .optional();
export type CreateShareBody = NonNullable<z.infer<typeof createShareBodySchema>>;

export const shareParamsSchema = z.object({ shareId: shareIdSchema });

export const createdShareSchema = z.object({
  shareId: z.string(),
  /** The page that shows the share, for anyone with the link. */
  url: z.string(),
  messageCount: z.number().int().nonnegative(),
  expiresAt: z.string().nullable(),
});

/** What anyone with the link reads: never the owner, the system prompt, memory or other branches. */
export const sharedConversationSchema = z.object({
  shareId: z.string(),
  title: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  includesToolCalls: z.boolean(),
  messages: z.array(sharedMessageSchema),
});
export type SharedConversation = z.infer<typeof sharedConversationSchema>;

export const shareLinkViewSchema = z.object({
  shareId: z.string(),
  url: z.string(),
  sessionId: z.string(),
  title: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
});
export type ShareLinkView = z.infer<typeof shareLinkViewSchema>;

export const shareListSchema = z.object({ shares: z.array(shareLinkViewSchema) });

/** POST /api/shares/{shareId}/copy: the caller's new conversation. */
export const copiedShareSchema = z.object({
  sessionId: z.string(),
  title: z.string(),
  messageCount: z.number().int().nonnegative(),
});
