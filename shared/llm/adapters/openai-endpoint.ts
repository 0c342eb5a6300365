// One configured OpenAI-style endpoint as every part of the LLM adapter sees it: the SDK clients, the model names,
// what messages call it, and the few error builders they all share.
import type OpenAI from 'openai';
import { LlmError, type LlmConnection, type LlmGatewayOptions } from '../llm-gateway.js';
import { toLlmError, type LlmErrorContext } from './openai-errors.js';

export interface OpenAiEndpoint {
  readonly connection: LlmConnection;
  readonly options: LlmGatewayOptions;
  readonly client: OpenAI;
  /** Set when chat turns and JSON output go through the Responses API. */
  readonly responsesClient: OpenAI | undefined;
  readonly chatModel: string;
  readonly embeddingModel: string;
  /** What messages call the endpoint, e.g. `Azure OpenAI https://x.openai.azure.com`. */
  readonly name: string;
}

export function openAiEndpoint(
  connection: LlmConnection,
  options: LlmGatewayOptions,
  client: OpenAI,
  responsesClient: OpenAI | undefined,
): OpenAiEndpoint {
  const common = { connection, options, client, responsesClient };
  return connection.kind === 'azure-openai'
    ? {
        ...common,
        chatModel: connection.chatDeployment,
        embeddingModel: connection.embeddingDeployment,
        name: `Azure OpenAI ${connection.endpoint}`,
      }
    : {
        ...common,
        chatModel: connection.chatModel,
        embeddingModel: connection.embeddingModel,
        name: `LLM endpoint ${connection.baseUrl}`,
      };
}

export function errorContext(endpoint: OpenAiEndpoint, model: string): LlmErrorContext {
  return {
    endpoint: endpoint.name,
    model,
    kind: endpoint.connection.kind,
    timeoutMs: endpoint.options.timeoutMs,
  };
}

/** One non-streamed SDK call, its failure as an LlmError naming the endpoint and `model`. */
export async function callEndpoint<T>(
  endpoint: OpenAiEndpoint,
  model: string,
  request: () => Promise<T>,
): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toLlmError(error, errorContext(endpoint, model));
  }
}

/** A proxy's HTML page arrives as a string: the SDK only parses JSON content types. */
export function notOpenAiShaped(endpoint: OpenAiEndpoint, what: string): LlmError {
  return new LlmError(`${endpoint.name} did not answer with an OpenAI-style ${what}; check the URL.`, {
    retryable: false,
  });
}
