// The LLM connections the adapter's tests call through a scripted fetch: an OpenAI-compatible server and an Azure
// OpenAI resource with a key, on hosts no request can reach.
import type { LlmConnection } from '../../shared/llm/llm-gateway.js';

export const openAiCompatible: LlmConnection = {
  kind: 'openai-compatible',
  baseUrl: 'http://llm.test/v1',
  chatModel: 'chat-model',
  embeddingModel: 'embedding-model',
};

export const azureWithKey: Extract<LlmConnection, { kind: 'azure-openai' }> = {
  kind: 'azure-openai',
  endpoint: 'https://example.openai.azure.com/',
  chatDeployment: 'chat-dep',
  embeddingDeployment: 'embed-dep',
  apiKey: 'test-key',
};
