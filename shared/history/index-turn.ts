// The history worker's index step: the exchange's one-line entry with its tags (stored with the turn's messages), and
// the model's title for the conversation when one is due (the user's own title always kept), from one model call.
import type { ConversationMessage } from '../conversation/messages.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { Logger } from '../logger.js';
import { ensureError } from '../errors.js';
import type { ConversationHeader, ExchangeEntry } from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';
import { fallbackIndexLine, indexExchange, type ExchangeIndex } from './history-llm.js';
import type { SessionMemory } from './session-memory.js';

export interface IndexServices {
  headers: ConversationHeaders;
  sessionMemory: SessionMemory;
  llm: LlmGateway;
}

/** A conversation has enough content for a model title once an exchange holds this much text (or at its second). */
const TITLE_MIN_CHARS = 200;

type TurnMessage = ConversationMessage & { ordinal: number };

/**
 * The exchange's index entry, and the model's title when one is due: one model call. A failed or invalid answer
 * does not stop persistence: the line falls back to the question, and the title stays (to be tried next turn). The
 * title is set here; the entry is the caller's to store (the history worker writes it with the turn's messages).
 */
export async function indexTurn(
  services: Pick<IndexServices, 'headers' | 'llm'>,
  event: MessageCompleted,
  header: ConversationHeader,
  exchange: { user: TurnMessage; assistant: TurnMessage },
  log: Pick<Logger, 'log' | 'warn'>,
): Promise<ExchangeEntry> {
  const { user, assistant } = exchange;
  const titleDue =
    header.titleSource === 'first-message' &&
    (user.ordinal >= 2 || user.content.length + assistant.content.length >= TITLE_MIN_CHARS);
  let index: ExchangeIndex;
  try {
    index = await indexExchange(
      services.llm,
      { question: user.content, answer: assistant.content },
      titleDue ? { firstQuestion: header.title } : undefined,
    );
  } catch (error) {
    log.warn(
      `History: no index line from the model for turn ${event.chatMessageId} of session ${event.sessionId}; ` +
        `the question stands in. ${ensureError(error).message}`,
    );
    index = { line: fallbackIndexLine(user.content), tags: [] };
  }
  const entry: ExchangeEntry = {
    exchangeId: event.chatMessageId,
    ordinal: user.ordinal,
    line: index.line,
    tags: index.tags,
    at: assistant.timestamp,
  };
  const titled =
    index.title === undefined
      ? undefined
      : await services.headers.setTitle(event.userId, event.sessionId, index.title, 'model');
  if (titled === 'kept')
    log.log(`History: session ${event.sessionId} keeps the title its user set; the model's is not used.`);
  return entry;
}
