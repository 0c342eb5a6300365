// The model port, traced: each call is a GenAI client span (`chat {model}`, `embeddings {model}`) with its usage,
// and feeds the GenAI client metrics. Message text goes on the span only when the deployment opted in.
import {
  genAiProvider,
  genAiSpanName,
  inputContent,
  modelRequestAttributes,
  modelResponseAttributes,
  outputContent,
  usageAttributes,
} from '../telemetry/gen-ai.js';
import {
  recordFirstTokenAdded,
  recordModelCall,
  recordTimeToFirstChunk,
  type ModelMetricAttributes,
} from '../telemetry/metrics.js';
import { activeConversation, setAttributes, SpanKind, takeTurnStart, withSpan } from '../telemetry/spans.js';
import type { LlmConnection, LlmGateway } from './llm-gateway.js';

export interface LlmTracing {
  /** Puts prompts and answers on the spans (the GenAI content capture opt-in). */
  captureContent: boolean;
}

const seconds = (since: number) => (performance.now() - since) / 1000;

export function traceLlmGateway(
  gateway: LlmGateway,
  connection: LlmConnection,
  tracing: LlmTracing,
): LlmGateway {
  const provider = genAiProvider(connection.kind);
  const chatModel = connection.kind === 'azure-openai' ? connection.chatDeployment : connection.chatModel;
  const embeddingModel =
    connection.kind === 'azure-openai' ? connection.embeddingDeployment : connection.embeddingModel;
  const chatCall: ModelMetricAttributes = { operation: 'chat', provider, requestModel: chatModel };
  const embeddingCall: ModelMetricAttributes = {
    operation: 'embeddings',
    provider,
    requestModel: embeddingModel,
  };

  return {
    streamChat: (request, onDelta) =>
      withSpan(
        genAiSpanName('chat', request.model ?? chatModel),
        {
          kind: SpanKind.CLIENT,
          attributes: modelRequestAttributes({
            ...chatCall,
            model: request.model ?? chatModel,
            stream: true,
            conversationId: activeConversation(),
            maxTokens: request.maxTokens,
          }),
        },
        async (span) => {
          if (tracing.captureContent) setAttributes(span, () => inputContent(request.messages));
          const started = performance.now();
          const turnPostedAt = takeTurnStart();
          let firstChunk = true;
          try {
            const reply = await gateway.streamChat(request, (delta) => {
              if (firstChunk) {
                firstChunk = false;
                const waited = seconds(started);
                recordTimeToFirstChunk(chatCall, waited);
                span.setAttribute('gen_ai.response.time_to_first_chunk', waited);
                // What came before this call (queue, worker, orchestration, the prompt) is what the pipeline added.
                if (turnPostedAt !== undefined)
                  recordFirstTokenAdded((Date.now() - turnPostedAt) / 1000 - waited);
              }
              onDelta?.(delta);
            });
            const usage = reply.usage;
            setAttributes(span, () => ({
              ...modelResponseAttributes({ model: reply.model, finishReason: reply.finishReason }),
              ...(usage
                ? usageAttributes({
                    inputTokens: usage.promptTokens,
                    outputTokens: usage.completionTokens,
                    reasoningTokens: usage.reasoningTokens,
                    cachedInputTokens: usage.cachedPromptTokens,
                  })
                : {}),
              ...(tracing.captureContent
                ? outputContent(
                    {
                      role: 'assistant',
                      content: reply.content,
                      tool_calls: reply.toolCalls,
                    },
                    reply.finishReason,
                  )
                : {}),
            }));
            recordModelCall(
              { ...chatCall, responseModel: reply.model },
              {
                seconds: seconds(started),
                ...(usage ? { inputTokens: usage.promptTokens, outputTokens: usage.completionTokens } : {}),
              },
            );
            return reply;
          } catch (error) {
            recordModelCall(chatCall, { seconds: seconds(started), errorType: errorType(error) });
            throw error;
          }
        },
      ),

    completeJson: (request) =>
      withSpan(
        genAiSpanName('chat', chatModel),
        {
          kind: SpanKind.CLIENT,
          attributes: {
            ...modelRequestAttributes({
              ...chatCall,
              model: chatModel,
              stream: false,
              conversationId: activeConversation(),
            }),
            'gen_ai.output.type': 'json',
          },
        },
        async (span) => {
          if (tracing.captureContent) setAttributes(span, () => inputContent(request.messages));
          const started = performance.now();
          try {
            const value = await gateway.completeJson(request);
            if (tracing.captureContent)
              setAttributes(span, () =>
                outputContent({ role: 'assistant', content: JSON.stringify(value) }, undefined),
              );
            recordModelCall(chatCall, { seconds: seconds(started) });
            return value;
          } catch (error) {
            recordModelCall(chatCall, { seconds: seconds(started), errorType: errorType(error) });
            throw error;
          }
        },
      ),

    embed: (texts) =>
      withSpan(
        genAiSpanName('embeddings', embeddingModel),
        {
          kind: SpanKind.CLIENT,
          attributes: modelRequestAttributes({
            ...embeddingCall,
            model: embeddingModel,
            conversationId: activeConversation(),
          }),
        },
        async (span) => {
          const started = performance.now();
          try {
            const vectors = await gateway.embed(texts);
            setAttributes(span, () => ({ 'gen_ai.embeddings.dimension.count': vectors[0]?.length ?? 0 }));
            recordModelCall(embeddingCall, { seconds: seconds(started) });
            return vectors;
          } catch (error) {
            recordModelCall(embeddingCall, { seconds: seconds(started), errorType: errorType(error) });
            throw error;
          }
        },
      ),

    // A health probe is not a model call.
    probe: () => gateway.probe(),
  };
}

function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error';
}
