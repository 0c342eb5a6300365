// The knowledge-base sources an answer carries: found by the knowledge search tool, streamed in the `sources`
// event and kept on the answer's stored message.
import { z } from 'zod';
import { documentIdSchema } from '../ids.js';

/** Pages a chunk's text comes from (1-based, ascending, contiguous); absent for formats without pages. */
export const pagesSchema = z.array(z.number().int().min(1)).min(1);

/** A source kept with an answer: at most this many per turn, each with an excerpt of this length. */
export const MAX_TURN_SOURCES = 20;
export const SOURCE_EXCERPT_CHARS = 300;

/**
 * A chunk a turn's knowledge search found: in the `sources` event (the turn's sources so far, deduplicated by
 * chunk, in the order found) and on the answer's stored message.
 */
export const knowledgeSourceSchema = z.object({
  chunkId: z.string(),
  documentId: documentIdSchema,
  title: z.string(),
  heading: z.string().optional(),
  pages: pagesSchema.optional(),
  citation: z.string(),
  /** The chunk's first SOURCE_EXCERPT_CHARS characters (the whole text is in the tool's result). */
  excerpt: z.string(),
  score: z.number(),
});
export type KnowledgeSource = z.infer<typeof knowledgeSourceSchema>;
