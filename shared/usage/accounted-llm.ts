// The LLM gateway with cost accounting: every call made inside a job's usage scope is tallied, and the job's calls
// are recorded once, together, as its work ends.
import type { CompleteJsonRequest, LlmGateway } from '../llm/llm-gateway.js';
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
      if (scope && reply.usage) {
        const kind = scope.attribution.kind ?? 'turn';
        recorder.tally(scope, kind, reply.model ?? request.model ?? models.chat, reply.usage);
      }
      return reply;
    },
    async completeJson<T>(request: CompleteJsonRequest<T>) {
      const scope = currentUsageScope();
      if (!scope) return llm.completeJson(request);
      const kind = scope.attribution.kind ?? kindOf(request);
      // A corrective second ask, or an answer that failed validation, was paid for too: each request is counted.
      return llm.completeJson({
        ...request,
        onUsage: (call) => {
          recorder.tally(scope, kind, call.model ?? models.chat, call.usage);
          request.onUsage?.(call);
        },
      });
    },
    async embed(texts, options) {
      const scope = currentUsageScope();
      if (!scope) return llm.embed(texts, options);
      const kind = scope.attribution.kind ?? 'embedding';
      return llm.embed(texts, {
        ...options,
        onUsage: (call) => {
          recorder.tally(scope, kind, call.model ?? models.embedding, call.usage);
          options?.onUsage?.(call);
        },
      });
    },
    probe: () => llm.probe(),
  };
}

function kindOf(request: CompleteJsonRequest<unknown>): UsageKind {
  if (request.purpose === 'title') return 'title';
  return KIND_OF_FORMAT[request.name] ?? 'summary';
}
