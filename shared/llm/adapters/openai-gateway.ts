// The LLM adapter: one LlmGateway over the real openai SDK for OpenAI, Azure OpenAI, Ollama, vLLM,
// llama.cpp and the local offline model, through Chat Completions (the default) or the Responses API
// (connection.api). Retries (429/5xx, retry-after-ms / retry-after) are the SDK's own.
import type OpenAI from 'openai';
import type { LlmConnection, LlmGateway, LlmGatewayOptions } from '../llm-gateway.js';
import { streamChat } from './openai-chat-stream.js';
import { createOpenAiClient } from './openai-client-factory.js';
import { embed } from './openai-embeddings.js';
import { openAiEndpoint } from './openai-endpoint.js';
import { toLlmError } from './openai-errors.js';
import { completeJson } from './openai-json-output.js';
import { probe } from './openai-probe.js';

/** Throws an LlmError naming the problem when the connection cannot make a client (e.g. no way to sign in). */
export function createLlmGateway(connection: LlmConnection, options: LlmGatewayOptions): LlmGateway {
  let client: OpenAI;
  try {
    client = createOpenAiClient(connection, options);
  } catch (error) {
    throw toLlmError(error, {
      endpoint:
        connection.kind === 'azure-openai' ? `Azure OpenAI ${connection.endpoint}` : connection.baseUrl,
      model: connection.kind === 'azure-openai' ? connection.chatDeployment : connection.chatModel,
      kind: connection.kind,
      timeoutMs: options.timeoutMs,
    });
  }
  const endpoint = openAiEndpoint(
    connection,
    options,
    client,
    connection.api === 'responses' ? client : undefined,
  );
  return {
    streamChat: (request, onDelta) => streamChat(endpoint, request, onDelta),
    completeJson: (request) => completeJson(endpoint, request),
    embed: (texts, options) => embed(endpoint, texts, options),
    probe: () => probe(endpoint),
  };
}
