// Timer triggers in the local runtime: each runs every `localIntervalMs` (the Functions host reads the schedule; here
// an interval stands for it), one run at a time, its failure logged and the next run kept.
import { randomUUID } from 'node:crypto';
import azureFunctions from '@azure/functions';
import type { LogHandler, Timer } from '@azure/functions';
import type { TimerFunctionDefinition } from '../../functions/definition.js';

// The package is CommonJS: Node's ESM loader only exposes its exports through the default import.
const { InvocationContext } = azureFunctions;

export interface LocalTimers {
  /** Runs the timer now (or waits for its run under way), as its interval would. */
  run(name: string): Promise<void>;
  stop(): Promise<void>;
}

export function startLocalTimers(
  definitions: readonly TimerFunctionDefinition[],
  logHandler: LogHandler,
): LocalTimers {
  const running = new Map<string, Promise<void>>();
  const run = (definition: TimerFunctionDefinition): Promise<void> => {
    const current = running.get(definition.name);
    if (current !== undefined) return current;
    const context = new InvocationContext({
      invocationId: randomUUID(),
      functionName: definition.name,
      logHandler,
    });
    const timer: Timer = {
      isPastDue: false,
      schedule: { adjustForDST: false },
      scheduleStatus: scheduleStatus(),
    };
    const started = definition
      .handler(timer, context)
      .catch((error: unknown) => context.error(`Timer ${definition.name} failed; it runs again later`, error))
      .finally(() => running.delete(definition.name));
    running.set(definition.name, started);
    return started;
  };
  const intervals = definitions.map((definition) => {
    const interval = setInterval(() => void run(definition), definition.localIntervalMs);
    interval.unref();
    return interval;
  });
  return {
    run(name) {
      const definition = definitions.find((candidate) => candidate.name === name);
      if (definition === undefined) return Promise.reject(new Error(`No timer function '${name}'.`));
      return run(definition);
    },
    async stop() {
      for (const interval of intervals) clearInterval(interval);
      await Promise.all(running.values());
    },
  };
}

function scheduleStatus(): Timer['scheduleStatus'] {
  const now = new Date().toISOString();
  return { last: now, next: now, lastUpdated: now };
}
