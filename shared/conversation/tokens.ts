// Token estimation, one rule for every area that budgets text by tokens: prompt building, working memory's
// window, history's digest checkpoints and knowledge chunking. Counts a message's files as the prompt sends them. Pure.
import {
  ATTACHMENT_CHARS_PER_TOKEN,
  imageCaption,
  inlinedFile,
  isImageAttachment,
  type MessageAttachment,
} from '../message-attachments.js';
import { utf8Bytes } from '../utf8.js';

/** What the API adds around each message (role, separators), in tokens. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/** The user messages (the newest ones) whose images the prompt shows, unless configured otherwise. */
export const DEFAULT_IMAGE_TURNS = 4;
/** Tokens of one message's text and PDF files the prompt takes, unless configured otherwise. */
export const DEFAULT_ATTACHMENT_TEXT_TOKENS = 8_000;

/** Room for the line that says a file was cut to its budget, or which of its passages were kept. */
const CUT_NOTE_BYTES = 160;

/**
 * The most an image of unknown size costs once scaled to the stored 2048-pixel edge: its short side becomes 768
 * pixels, so at most 2 × 4 tiles.
 */
const UNKNOWN_IMAGE_TOKENS = imageTokens(768, 2048);

/** How a message's files reach the prompt: its images as images or as a caption, and its files' text budget. */
export interface AttachmentTokenRules {
  /** False in a turn older than the ones whose images are shown: a caption stands for each image. */
  imageShown: boolean;
  textTokens: number;
}

const SHOWN: AttachmentTokenRules = { imageShown: true, textTokens: DEFAULT_ATTACHMENT_TEXT_TOKENS };

/**
 * A conservative token estimate: one token per 3 UTF-8 bytes, rounded up. Real counts depend on the model's
 * tokenizer, so no exact count is possible here; the estimate is meant never to fall short. It over-counts
 * English (about 4 characters, i.e. 4 bytes, per token) and still fits CJK text, where a character takes 3
 * bytes and usually about one token.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(utf8Bytes(text) / 3);
}

/**
 * An image's cost at high detail, as OpenAI's vision models count it: scaled to fit 2048 × 2048, then its
 * shortest side to 768 pixels (never enlarged), 170 tokens per 512-pixel tile it spans and 85 more.
 */
export function imageTokens(width: number, height: number): number {
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const shortest = Math.min(1, 768 / (Math.min(width, height) * fit));
  const scale = fit * shortest;
  const tiles = Math.ceil(Math.round(width * scale) / 512) * Math.ceil(Math.round(height * scale) / 512);
  return 85 + 170 * tiles;
}

/**
 * A message's size in the prompt: its text's estimate, what the API adds around it, and its files: an image by
 * its pixels (or its caption in an older turn), a text or PDF file by the text it puts in within the budget.
 */
export function messageTokens(
  message: { content: string; attachments?: readonly MessageAttachment[] | undefined },
  rules: AttachmentTokenRules = SHOWN,
): number {
  const files = attachmentCost(message.attachments ?? [], rules);
  const textBytes = utf8Bytes(message.content) + files.textBytes;
  return Math.ceil(textBytes / 3) + files.images + MESSAGE_OVERHEAD_TOKENS;
}

/** The tokens of a message's shown images, and the bytes its files add to its text. */
function attachmentCost(
  attachments: readonly MessageAttachment[],
  rules: AttachmentTokenRules,
): { images: number; textBytes: number } {
  let images = 0;
  let textBytes = 0;
  let budget = rules.textTokens * ATTACHMENT_CHARS_PER_TOKEN;
  for (const attachment of attachments) {
    if (isImageAttachment(attachment)) {
      if (rules.imageShown)
        images +=
          attachment.width === undefined || attachment.height === undefined
            ? UNKNOWN_IMAGE_TOKENS
            : imageTokens(attachment.width, attachment.height);
      else textBytes += utf8Bytes(`\n\n${imageCaption(attachment)}`);
      continue;
    }
    // A text file puts in at most its bytes (the budget counts characters: a byte each, as in English); a PDF's text
    // is known only once it is read, so it may fill the budget.
    const pdf = attachment.mediaType === 'application/pdf';
    const shown = pdf ? budget : Math.min(attachment.size, budget);
    const cut = pdf || attachment.size > budget ? CUT_NOTE_BYTES : 0;
    budget -= shown;
    textBytes += utf8Bytes(`\n\n${inlinedFile(attachment, '')}`) + shown + cut;
  }
  return { images, textBytes };
}
