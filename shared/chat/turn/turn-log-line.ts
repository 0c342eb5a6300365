// The one line an operator sees for each finished turn, at the default log level: whose turn, how it ended,
// what it cost in tokens and how long it took from the message being posted to the answer being committed.
import type { LlmUsage } from '../../llm/llm-gateway.js';

export interface FinishedTurn {
  sessionId: string;
  chatMessageId: string;
  finishReason: string;
  usage: LlmUsage | undefined;
  /** Model rounds the turn took (1 without tools). */
  rounds: number;
  /** When the message was posted (ISO 8601). */
  postedAt: string;
  /** When the turn ended. */
  endedAt: Date;
}

export function turnLogLine(turn: FinishedTurn): string {
  const { usage } = turn;
  const tokens = usage
    ? `tokens ${usage.promptTokens} in, ${usage.completionTokens} out` +
      // Zero counts are left out: most providers report them on every turn, and they say nothing.
      (usage.reasoningTokens ? ` (${usage.reasoningTokens} reasoning)` : '') +
      (usage.cachedPromptTokens ? `, ${usage.cachedPromptTokens} cached` : '')
    : 'tokens not reported';
  const posted = Date.parse(turn.postedAt);
  const duration = Number.isNaN(posted)
    ? 'duration unknown'
    : `${(Math.max(0, turn.endedAt.getTime() - posted) / 1000).toFixed(1)} s`;
  const rounds = turn.rounds === 1 ? '1 model round' : `${turn.rounds} model rounds`;
  return (
    `Turn ended: session ${turn.sessionId}, turn ${turn.chatMessageId}, finish ${turn.finishReason}, ` +
    `${tokens}, ${duration} since posted, ${rounds}`
  );
}
