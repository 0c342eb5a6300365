// One structured-output call as the background workers make them: the task's instructions as the system message,
// its input as one JSON user message, and the answer validated against the caller's schema by the gateway.
import type { z } from 'zod';
import type { LlmGateway } from './llm-gateway.js';

export interface InstructedJsonRequest<T> {
  /** What to do with the input and what to answer: the system message. */
  instructions: string;
  /** Serialised as the one user message: the model sees nothing else of the conversation. */
  input: unknown;
  schema: z.ZodType<T>;
  /** The response format's name (the offline model answers formats by name). */
  name: string;
  /** What the answer is for where the format's name does not say it (cost accounting). */
  purpose?: 'title';
}

/** Throws what the gateway throws (an LlmError, also when the answer stays invalid after its one correction). */
export function completeInstructedJson<T>(
  llm: Pick<LlmGateway, 'completeJson'>,
  request: InstructedJsonRequest<T>,
): Promise<T> {
  return llm.completeJson({
    messages: [
      { role: 'system', content: request.instructions },
      { role: 'user', content: JSON.stringify(request.input) },
    ],
    schema: request.schema,
    name: request.name,
    ...(request.purpose !== undefined ? { purpose: request.purpose } : {}),
  });
}
