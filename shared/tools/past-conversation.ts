// The tools that reach the part of a conversation the prompt no longer holds: retrieve_past_answer gives an
// earlier exchange whole by its id (the ids are in the prompt's exchange lines), and lookup_past_conversation
// finds exchanges by topic in the conversation's Q&A index.
import { z } from 'zod';

import { inGaps } from '../conversation/branch-path.js';
import { assistantMessageId, userMessageId } from '../conversation/turn-ids.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { canonicalId, idPatternSchema } from '../ids.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import type { ConversationMessages } from '../history/conversation-messages.js';
import type { SessionMemory } from '../history/session-memory.js';
import { cited, defineTool, type ToolDefinition } from './tool-registry.js';

/** Entries lookup_past_conversation gives at most. */
const LOOKUP_LIMIT = 5;

export interface PastConversationDeps {
  /** Long-term history: an exchange's messages once the history worker stored them. */
  messages: Pick<ConversationMessages, 'get'>;
  /** The conversation's Q&A index. */
  sessionMemory: Pick<SessionMemory, 'findExchanges'>;
  /** Where an exchange committed moments ago still is, before the history worker stored it. */
  workingMemory: Pick<WorkingMemoryStore, 'load'>;
}

export function pastConversationTools(deps: PastConversationDeps): ToolDefinition[] {
  const retrievePastAnswer = defineTool({
    name: 'retrieve_past_answer',
    description:
      'Returns an earlier exchange of this conversation in full: the user question, the complete answer and ' +
      'the knowledge-base sources it cited. Use it when the summary or an exchange line is not detailed enough.',
    arguments: z.object({
      exchangeId: idPatternSchema('chatMessageId').describe(
        'The id of the exchange, as the earlier exchange lines or lookup_past_conversation give it.',
      ),
    }),
    async run(args, { userId, sessionId, branch }) {
      // Turn ids are stored in lower case; a model may repeat one in another case.
      const exchangeId = canonicalId('chatMessageId', args.exchangeId);
      let [question, answer]: (ConversationMessage | undefined)[] = await Promise.all([
        deps.messages.get(userId, sessionId, userMessageId(exchangeId)),
        deps.messages.get(userId, sessionId, assistantMessageId(exchangeId)),
      ]);
      if (question === undefined) {
        // Not stored long-term yet: a recent exchange is still in working memory.
        const recent = (await deps.workingMemory.load(userId, sessionId)).messages;
        question = recent.find((message) => message.messageId === userMessageId(exchangeId));
        answer = recent.find((message) => message.messageId === assistantMessageId(exchangeId));
      }
      if (question === undefined)
        throw new Error(
          `This conversation has no exchange "${exchangeId}". Call lookup_past_conversation with a topic to ` +
            'find the ids of earlier exchanges.',
        );
      if (question.ordinal !== undefined && inGaps(question.ordinal, branch?.gaps ?? []))
        throw new Error(
          `The exchange "${exchangeId}" is on another branch of this conversation (the user edited or ` +
            'regenerated it): it is not part of the conversation as it stands. Answer from this branch only.',
        );
      const sources = answer?.sources ?? [];
      // What the answer cited, so a new answer that repeats it can cite the same passages: they are sources of this
      // turn too, listed with the knowledge search's.
      return cited(
        {
          exchangeId,
          at: (answer ?? question).timestamp,
          question: question.content,
          answer: answerOf(question, answer),
          ...(sources.length > 0
            ? { sources: sources.map(({ citation, excerpt }) => ({ citation, excerpt })) }
            : {}),
        },
        sources,
      );
    },
  });

  const lookupPastConversation = defineTool({
    name: 'lookup_past_conversation',
    description:
      'Finds earlier exchanges of this conversation about a topic (a word or a few words), newest first, each ' +
      'with its id and a one-line summary. Pass an id to retrieve_past_answer for the full answer.',
    arguments: z.object({
      topic: z.string().trim().min(1).max(200).describe('What the earlier exchanges were about.'),
    }),
    async run({ topic }, { userId, sessionId, branch }) {
      const found = await deps.sessionMemory.findExchanges(userId, sessionId, topic, LOOKUP_LIMIT, {
        skip: branch?.gaps ?? [],
      });
      return {
        topic,
        exchanges: found.map(({ exchangeId, line, tags, at }) => ({ exchangeId, line, tags, at })),
        ...(found.length === 0
          ? { note: 'No earlier exchange of this conversation is about that topic.' }
          : {}),
      };
    },
  });

  return [retrievePastAnswer, lookupPastConversation];
}

/** The answer's text; a turn that failed says so, as the model would otherwise read an empty answer. */
function answerOf(question: ConversationMessage, answer: ConversationMessage | undefined): string {
  if (question.failure !== undefined)
    return `(This turn failed: ${question.failure.message})${answer?.content ? ` Partial answer: ${answer.content}` : ''}`;
  return answer?.content ?? '(No answer was given.)';
}
