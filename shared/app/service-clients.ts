// The shared SDK clients the app's adapters are composed over (Cosmos DB, Web PubSub, the LLM), each with a key
// when one is configured and the app's one Azure credential otherwise.
import type { Agent } from 'node:https';
import { CosmosClient } from '@azure/cosmos';
import type { TokenCredential } from '@azure/identity';
import { WebPubSubServiceClient } from '@azure/web-pubsub';
import { createLlmGateway } from '../llm/adapters/openai-gateway.js';
import { azureOpenAiTokenProvider } from '../llm/adapters/openai-client-factory.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import { accessKeyOf, cacheWebPubSubRestTokens } from '../streaming/adapters/web-pubsub-rest-tokens.js';
import type { AppConfig } from './config.js';

export function createCosmosClient(
  config: AppConfig,
  credential: TokenCredential,
  agent: Agent | undefined,
): CosmosClient {
  return new CosmosClient(
    config.cosmos.key !== undefined
      ? {
          endpoint: config.cosmos.endpoint,
          key: config.cosmos.key,
          ...(agent === undefined ? {} : { agent }),
        }
      : { endpoint: config.cosmos.endpoint, aadCredentials: credential },
  );
}

export function createWebPubSubClient(
  config: Pick<AppConfig, 'webPubSub'>,
  credential: TokenCredential,
  allowInsecureConnection: boolean,
): WebPubSubServiceClient {
  const options = { allowInsecureConnection };
  if (config.webPubSub.connectionString !== undefined) {
    const client = new WebPubSubServiceClient(
      config.webPubSub.connectionString,
      config.webPubSub.hub,
      options,
    );
    // One signed token per URL while it is valid, not one per call.
    const key = accessKeyOf(config.webPubSub.connectionString);
    if (key !== undefined) cacheWebPubSubRestTokens(client, key);
    return client;
  }
  const endpoint = config.webPubSub.endpoint ?? '';
  return new WebPubSubServiceClient(endpoint, credential, config.webPubSub.hub, options);
}

export function createLlm(config: AppConfig, credential: TokenCredential): LlmGateway {
  const { connection } = config.llm;
  return createLlmGateway(connection, {
    maxRetries: config.llm.maxRetries,
    timeoutMs: config.llm.timeoutMs,
    embeddingDimensions: config.llm.embeddingDimensions,
    ...(connection.kind === 'azure-openai' && connection.apiKey === undefined
      ? { azureAdTokenProvider: azureOpenAiTokenProvider(credential, connection) }
      : {}),
  });
}
