// The LLM gateway with cost accounting: every call made inside a job's usage scope is recorded once with its tokens
// and cost, after the call and before its result is handed back (a job that crashes before then runs it again).
import type { CompleteJsonRequest, LlmCallUsage, LlmGateway } from '../llm/llm-gateway.js';
import type { UsageKind } from './contracts.js';
import type { UsageRecorder } from './usage-recorder.js';
import { currentUsageScope } from './usage-scope.js';

/** What a JSON-output call is for, by the name of its format; a call may also say it (`purpose`). */
const KIND_OF_FORMAT: Readonly<Record<string, UsageKind>> = {
  exchange_index: 'exchange-index',
  session_summary: 'summary',
  conversation_summary: 'summary',
  memory_profile_changes: 'profile',
};

/** The models the gateway calls, for a reply that does not name its own. */
export interface ConfiguredModels {
  chat: string;
  embedding: string;
}

export function accountedLlm(llm: LlmGateway, recorder: UsageRecorder, models: ConfiguredModels): LlmGateway {
  return {
    async streamChat(request, onDelta) {
      const reply = await llm.streamChat(request, onDelta);
      const scope = currentUsageScope();
      if (scope && reply.usage)
        await recorder.record(
          scope,
          scope.attribution.kind ?? 'turn',
          reply.model ?? models.chat,
          reply.usage,
        );
      return reply;
    },
    async completeJson<T>(request: CompleteJsonRequest<T>) {
      const scope = currentUsageScope();
      if (!scope) return llm.completeJson(request);
      const kind = scope.attribution.kind ?? kindOf(request);
      const calls: LlmCallUsage[] = [];
      try {
        return await llm.completeJson({ ...request, onUsage: (call) => calls.push(call) });
      } finally {
        // A corrective second ask, or an answer that failed validation, was paid for too.
        for (const call of calls) await recorder.record(scope, kind, call.model ?? models.chat, call.usage);
      }
    },
    async embed(texts, options) {
      const scope = currentUsageScope();
      if (!scope) return llm.embed(texts, options);
      const kind = scope.attribution.kind ?? 'embedding';
      const calls: LlmCallUsage[] = [];
      try {
        return await llm.embed(texts, {
          ...options,
          onUsage: (call) => {
            calls.push(call);
            options?.onUsage?.(call);
          },
        });
      } finally {
        for (const call of calls)
          await recorder.record(scope, kind, call.model ?? models.embedding, call.usage);
      }
    },
    probe: () => llm.probe(),
  };
}

function kindOf(request: CompleteJsonRequest<unknown>): UsageKind {
  if (request.purpose === 'title') return 'title';
  return KIND_OF_FORMAT[request.name] ?? 'summary';
}
