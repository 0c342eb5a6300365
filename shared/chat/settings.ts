// Limits of a chat turn (CHAT_*): message size, tool rounds, prompt and output budgets, who runs its first round, how
// long the worker holds a session, how often a streaming turn checks for a stop, how long a temporary chat lives;
// and how long a new conversation's turn waits for the user's profile (MEMORY_PROFILE_TIMEOUT_MS).
import { PROFILE_FETCH_BUDGET_MS } from '../memory/contracts.js';
import { TEMPORARY_CHAT_TTL_SECONDS } from './contracts/documents.js';
import { choiceSetting, defineSettings, intSetting, type SettingValues } from '../settings/setting.js';

const tuning = { kind: 'default' } as const;

export const chatSettings = defineSettings({
  CHAT_MAX_TEXT_CHARS: intSetting({
    default: 8_000,
    min: 1,
    help: 'Longest chat message accepted, in characters (longer ones get 400).',
    azure: tuning,
  }),
  CHAT_MAX_TOOL_ROUNDS: intSetting({
    default: 10,
    help: 'Most rounds of tool calls in one turn; then the model must answer without tools.',
    azure: tuning,
  }),
  CHAT_PROMPT_TOKEN_BUDGET: intSetting({
    default: 16_000,
    min: 256,
    help:
      'Estimated tokens the prompt may use; the oldest turns are left out beyond it (the system prompt and the ' +
      'new message always stay).',
    azure: tuning,
  }),
  CHAT_MAX_OUTPUT_TOKENS: intSetting({
    default: 4_096,
    min: 1,
    help: 'Most tokens the model may generate in one call.',
    azure: tuning,
  }),
  CHAT_TURN_WAIT_MS: intSetting({
    default: 600_000,
    help: "How long the chat worker holds a session for a running turn, so the session's next message waits for it.",
    azure: tuning,
  }),
  CHAT_FIRST_ROUND: choiceSetting(['worker', 'orchestration'], {
    default: 'worker',
    help:
      "Who runs a turn's first model round: `worker` (the chat worker itself, handing the turn to the chatTurn " +
      'orchestration only when the model asks for tools: one task-hub dispatch less before the first token, two ' +
      'for an answer without tools) or `orchestration` (every round is an activity of the orchestration).',
    azure: tuning,
  }),
  CHAT_CANCEL_POLL_MS: intSetting({
    default: 1_000,
    min: 50,
    max: 60_000,
    help:
      "How often a turn's open model stream checks whether its owner stopped it from another instance (one point " +
      'read each time, only while the model streams); a stop taken by the instance running the turn acts at once.',
    azure: tuning,
  }),
  TEMPORARY_CHAT_TTL: intSetting({
    default: TEMPORARY_CHAT_TTL_SECONDS,
    min: 1,
    max: 30 * 24 * 60 * 60,
    help:
      'Seconds a temporary chat lives after it starts: then a job deletes it everywhere (its working memory, turns, ' +
      "events and attachments' blobs) as a delete of the conversation does, and its session's own Cosmos DB ttl " +
      'ends it even without the job. Past 24 h, working memory (the hot store) may expire first.',
    azure: tuning,
  }),
  MEMORY_PROFILE_TIMEOUT_MS: intSetting({
    default: PROFILE_FETCH_BUDGET_MS,
    min: 1,
    max: 60_000,
    help:
      "How long a new conversation's first turn waits for the user's profile (its personalised system prompt); " +
      'past it the turn goes on with the basic prompt and logs why.',
    azure: tuning,
  }),
});

export interface ChatConfig {
  maxTextChars: number;
  maxToolRounds: number;
  promptTokenBudget: number;
  maxOutputTokens: number;
  turnWaitMs: number;
  /** Who runs a turn's round 0: the chat worker itself, or the chatTurn orchestration as an activity. */
  firstRound: 'worker' | 'orchestration';
  /** How often an open model stream reads whether its turn was stopped elsewhere (ms). */
  cancelPollMs: number;
  /** The budget of a new conversation's profile read (ms). */
  profileTimeoutMs: number;
  /** How long a temporary chat lives (seconds). */
  temporaryChatTtlSeconds: number;
}

export function chatConfig(values: SettingValues<typeof chatSettings>): ChatConfig {
  return {
    maxTextChars: values.CHAT_MAX_TEXT_CHARS,
    maxToolRounds: values.CHAT_MAX_TOOL_ROUNDS,
    promptTokenBudget: values.CHAT_PROMPT_TOKEN_BUDGET,
    maxOutputTokens: values.CHAT_MAX_OUTPUT_TOKENS,
    turnWaitMs: values.CHAT_TURN_WAIT_MS,
    firstRound: values.CHAT_FIRST_ROUND,
    cancelPollMs: values.CHAT_CANCEL_POLL_MS,
    profileTimeoutMs: values.MEMORY_PROFILE_TIMEOUT_MS,
    temporaryChatTtlSeconds: values.TEMPORARY_CHAT_TTL,
  };
}
