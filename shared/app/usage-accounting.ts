// The composition of usage accounting: the ledger in Cosmos DB, the model gateway that records every call of a job,
// the price a turn's message-end shows, and the eraser that leaves a deleted conversation's spend in the user's totals.
import type { Database } from '@azure/cosmos';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { LlmGateway, LlmUsage } from '../llm/llm-gateway.js';
import type { LlmConfig } from '../llm/settings.js';
import { accountedLlm, type ConfiguredModels } from '../usage/accounted-llm.js';
import { createCosmosUsageLedger } from '../usage/adapters/cosmos-usage-ledger.js';
import { USAGE_CONTAINER } from '../usage/contracts.js';
import { costOf, type LlmCost } from '../usage/prices.js';
import type { UsageConfig } from '../usage/settings.js';
import type { UsageLedger } from '../usage/usage-ledger.js';
import { CounterUsageReader } from '../usage/usage-reader.js';
import { UsageRecorder } from '../usage/usage-recorder.js';

export interface UsageAccounting {
  ledger: UsageLedger;
  reader: CounterUsageReader;
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
  return {
    ledger,
    reader: new CounterUsageReader(ledger),
    llm: config.usage.accounting
      ? accountedLlm(model, new UsageRecorder(ledger, config.usage.prices), models)
      : model,
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
