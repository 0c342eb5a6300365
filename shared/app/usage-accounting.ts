// The composition of usage accounting: the ledger in Cosmos DB, the model gateway that records every call of a job,
// the price a turn's message-end shows, and the eraser that leaves a deleted conversation's spend in the user's totals.
import type { Database } from '@azure/cosmos';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { LlmGateway, LlmUsage } from '../llm/llm-gateway.js';
import type { LlmConfig } from '../llm/settings.js';
import { accountedLlm, type ConfiguredModels } from '../usage/accounted-llm.js';
import { createCosmosUsageLedger } from '../usage/adapters/cosmos-usage-ledger.js';
import { USAGE_CONTAINER } from '../usage/contracts.js';
import { costOf, type LlmCost, type PriceTable } from '../usage/prices.js';
import type { UsageConfig } from '../usage/settings.js';
import type { UsageLedger } from '../usage/usage-ledger.js';
import { CounterUsageReader } from '../usage/usage-reader.js';
import { UsageRecorder } from '../usage/usage-recorder.js';

/** What the triggers reach of usage accounting. */
export interface UsageServices {
  /** Each model call's record and the user's counters per day, month and conversation. */
  ledger: UsageLedger;
  /** The day's tokens and the month's cost, for quotas. */
  reader: CounterUsageReader;
  prices: PriceTable;
  /** Writes what a job was handed of another's calls (a turn's, to the history worker); absent when off. */
  recorder?: UsageRecorder;
}

export interface UsageAccounting {
  ledger: UsageLedger;
  reader: CounterUsageReader;
  /** Records each job's calls; absent when accounting is off. */
  recorder?: UsageRecorder;
  /** The model gateway, recording each call made inside a job's usage scope (as it was when accounting is off). */
  llm: LlmGateway;
  /** A turn's cost for its message-end: the model that answered, else the configured chat model. */
  pricing: (usage: LlmUsage, model: string | undefined) => LlmCost;
  /** The eraser, also detaching a deleted conversation from its usage records. */
  detaching: (eraser: ConversationEraser) => ConversationEraser;
}

export function composeUsageAccounting(
  config: { usage: UsageConfig; llm: LlmConfig },
  database: Database,
  model: LlmGateway,
): UsageAccounting {
  const ledger = createCosmosUsageLedger(database.container(USAGE_CONTAINER));
  const models = configuredModels(config.llm);
  const recorder = config.usage.accounting ? new UsageRecorder(ledger, config.usage.prices) : undefined;
  return {
    ledger,
    reader: new CounterUsageReader(ledger),
    ...(recorder ? { recorder } : {}),
    llm: recorder ? accountedLlm(model, recorder, models) : model,
    pricing: (usage, answeredBy) => costOf(config.usage.prices, answeredBy ?? models.chat, usage),
    detaching: (eraser) => ({
      ...eraser,
      async erasePosted(userId, sessionId) {
        const erased = await eraser.erasePosted(userId, sessionId);
        await ledger.detachConversation(userId, sessionId);
        return erased;
      },
    }),
  };
}

/** The model names calls are priced by: Azure's deployment names, or the OpenAI-compatible endpoint's models. */
export function configuredModels(llm: LlmConfig): ConfiguredModels {
  const { connection } = llm;
  return connection.kind === 'azure-openai'
    ? { chat: connection.chatDeployment, embedding: connection.embeddingDeployment }
    : { chat: connection.chatModel, embedding: connection.embeddingModel };
}

export function usageServices(usage: UsageAccounting, prices: PriceTable): UsageServices {
  const { ledger, reader, recorder } = usage;
  return { ledger, reader, prices, ...(recorder ? { recorder } : {}) };
}
