// Per-user quotas and rate limits (QUOTA_*): turns running at once, messages per minute, tokens per day, spend per
// month, knowledge-base bytes, and who is exempt. Every limit is off (0) unless set.
import { defineSettings, intSetting, textSetting, type SettingValues } from '../settings/setting.js';

const tuning = { kind: 'default' } as const;
/** A full prompt (CHAT_PROMPT_TOKEN_BUDGET) and a full answer (CHAT_MAX_OUTPUT_TOKENS), as they are by default. */
export const DEFAULT_TURN_TOKEN_ESTIMATE = 20_000;
const off = '0 = no limit.';

export const quotaSettings = defineSettings({
  QUOTA_CONCURRENT_TURNS: intSetting({
    default: 0,
    help:
      'Turns one user may have accepted and not yet ended (queued or answering) at once; one more is refused ' +
      `with 429. ${off}`,
    azure: tuning,
  }),
  QUOTA_MESSAGES_PER_MINUTE: intSetting({
    default: 0,
    help:
      'Chat messages (posts, edits, regenerates) one user may send per UTC clock minute; a re-post of an accepted ' +
      `message is never counted. ${off}`,
    azure: tuning,
  }),
  QUOTA_TOKENS_PER_DAY: intSetting({
    default: 0,
    max: Number.MAX_SAFE_INTEGER,
    help:
      'Model tokens (input and output, background work included) one user may use per UTC day; once reached, ' +
      `new turns are refused until midnight UTC. ${off}`,
    azure: tuning,
  }),
  QUOTA_COST_PER_MONTH: textSetting({
    default: '0',
    pattern: [/^\d{1,9}(\.\d{1,6})?$/, 'must be an amount in US dollars, e.g. 25 or 7.50'],
    help:
      'US dollars of model use (LLM_PRICES) one user may spend per UTC month; once reached, new turns are refused ' +
      `until the month ends. ${off}`,
    azure: tuning,
  }),
  QUOTA_KNOWLEDGE_BYTES: intSetting({
    default: 0,
    max: Number.MAX_SAFE_INTEGER,
    help: `Bytes of documents one user may keep in the knowledge base; an upload past it is refused. ${off}`,
    azure: tuning,
  }),
  QUOTA_EXEMPT: textSetting({
    default: '',
    help:
      "Who no quota applies to: user ids and `group:<id>` entries (an Entra ID group in the caller's `groups` " +
      'claim), comma-separated.',
    azure: tuning,
  }),
  QUOTA_TURN_TOKEN_ESTIMATE: intSetting({
    default: DEFAULT_TURN_TOKEN_ESTIMATE,
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    help:
      "Tokens a turn reserves of QUOTA_TOKENS_PER_DAY (and, at the chat model's output price, of " +
      'QUOTA_COST_PER_MONTH) from its acceptance until its usage is recorded, so turns running at once cannot ' +
      'overrun the limits together; the default covers a full prompt (CHAT_PROMPT_TOKEN_BUDGET) and a full answer ' +
      '(CHAT_MAX_OUTPUT_TOKENS). Only what is left of a limit is reserved when less.',
    azure: tuning,
  }),
  QUOTA_TURN_LEASE_SECONDS: intSetting({
    default: 900,
    min: 60,
    max: 86_400,
    help:
      "How long a turn holds its QUOTA_CONCURRENT_TURNS slot at most: a turn's slot is freed when it ends, and " +
      'after this long if its instance died first. Keep it above the longest turn (CHAT_TURN_WAIT_MS).',
    azure: tuning,
  }),
});

export interface QuotaConfig {
  /** 0: no limit, in every field but leaseSeconds and exempt. */
  concurrentTurns: number;
  messagesPerMinute: number;
  tokensPerDay: number;
  costPerMonthUsd: number;
  knowledgeBytes: number;
  exempt: { users: string[]; groups: string[] };
  leaseSeconds: number;
  /** Tokens a turn reserves against the spend limits until it settles (QUOTA_TURN_TOKEN_ESTIMATE when absent). */
  turnTokenEstimate?: number;
}

export function quotaConfig(values: SettingValues<typeof quotaSettings>): QuotaConfig {
  const entries = values.QUOTA_EXEMPT.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return {
    concurrentTurns: values.QUOTA_CONCURRENT_TURNS,
    messagesPerMinute: values.QUOTA_MESSAGES_PER_MINUTE,
    tokensPerDay: values.QUOTA_TOKENS_PER_DAY,
    costPerMonthUsd: Number(values.QUOTA_COST_PER_MONTH),
    knowledgeBytes: values.QUOTA_KNOWLEDGE_BYTES,
    exempt: {
      users: entries.filter((entry) => !entry.startsWith('group:')),
      groups: entries
        .filter((entry) => entry.startsWith('group:'))
        .map((entry) => entry.slice('group:'.length)),
    },
    leaseSeconds: values.QUOTA_TURN_LEASE_SECONDS,
    turnTokenEstimate: values.QUOTA_TURN_TOKEN_ESTIMATE,
  };
}
