// The reasoning an answer keeps: the summary text of every round of the turn, bounded, and how long the model
// reasoned, so a conversation read back shows "Thought for N s" as it did live. Pure.
import { MAX_KEPT_REASONING, type ConversationMessage } from '../../conversation/messages.js';
import type { RoundRecord } from '../contracts/documents.js';
import type { RoundReply } from './turn-effects.js';

/** The answer's `reasoning` field from its turn's recorded rounds and its last reply; nothing without reasoning. */
export function keptReasoning(
  rounds: readonly Pick<RoundRecord, 'reasoning' | 'reasoningMs'>[],
  reply: Pick<RoundReply, 'reasoning' | 'reasoningMs'>,
): Pick<ConversationMessage, 'reasoning'> {
  const all = [...rounds, reply];
  const text = all
    .map((round) => round.reasoning)
    .filter((part) => part !== '')
    .join('\n\n');
  if (text === '') return {};
  const measured = all.filter((round) => round.reasoningMs !== undefined);
  const durationMs = measured.reduce((sum, round) => sum + (round.reasoningMs ?? 0), 0);
  return {
    reasoning: {
      text: text.length > MAX_KEPT_REASONING ? text.slice(0, MAX_KEPT_REASONING) : text,
      ...(measured.length > 0 ? { durationMs } : {}),
    },
  };
}
