// The data archive's job as a Durable orchestration: write it (retried; a try that died left nothing committed),
// or record that it failed; then sleep until it expires (a durable timer costs nothing while it waits) and delete it.
import * as df from 'durable-functions';
import { ACCOUNT_EXPORT_ACTIVITIES, type ExportJobInput } from './contracts.js';

const retry = (() => {
  const options = new df.RetryOptions(2_000, 4);
  options.backoffCoefficient = 2;
  return options;
})();

export function* accountExportOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, string, unknown> {
  const input = context.df.getInput<ExportJobInput>();
  try {
    yield context.df.callActivityWithRetry(ACCOUNT_EXPORT_ACTIVITIES.write, retry, input);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    yield context.df.callActivityWithRetry(ACCOUNT_EXPORT_ACTIVITIES.fail, retry, { ...input, reason });
  }
  yield context.df.createTimer(new Date(input.expiresAt));
  yield context.df.callActivityWithRetry(ACCOUNT_EXPORT_ACTIVITIES.expire, retry, input);
  return 'expired';
}
