// A temporary chat's expiry job as a Durable orchestration: a durable timer waits out TEMPORARY_CHAT_TTL at no cost,
// then its activity deletes the chat everywhere (temporary-chat-expiry.ts).
import * as df from 'durable-functions';
import { EXPIRE_TEMPORARY_CHAT_ACTIVITY, type TemporaryChatExpiryInput } from './contracts/activities.js';

const retry = (() => {
  const options = new df.RetryOptions(5_000, 5);
  options.backoffCoefficient = 2;
  return options;
})();

export function* temporaryChatExpiryOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, string, unknown> {
  const input = context.df.getInput<TemporaryChatExpiryInput>();
  yield context.df.createTimer(new Date(input.expiresAt));
  const outcome = yield context.df.callActivityWithRetry(EXPIRE_TEMPORARY_CHAT_ACTIVITY, retry, input);
  return String(outcome);
}
