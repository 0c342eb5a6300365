// The per-instance history the local driver replays, modelled on the Durable Task framework's events
// but holding only what replay needs: names, sequence numbers and results (never activity inputs).

export interface FailureInfo {
  /** The error's `name` (e.g. `Error`, `ValidationError`); becomes TaskFailedError.failureDetails.errorType. */
  name: string;
  message: string;
  stack?: string | undefined;
}

/** Kinds of work that consume a sequence number and are recorded when scheduled. */
export type ScheduledKind = 'activity' | 'timer';

export type HistoryEvent =
  /** Opens each episode; its timestamp is what `currentUtcDateTime` reads during that episode. */
  | { type: 'orchestratorStarted'; at: string }
  | { type: 'executionStarted' }
  | { type: 'taskScheduled'; seq: number; kind: ScheduledKind; name: string }
  | { type: 'taskCompleted'; seq: number; result?: unknown }
  | { type: 'taskFailed'; seq: number; failure: FailureInfo }
  | { type: 'timerFired'; seq: number }
  | { type: 'eventRaised'; name: string; data?: unknown };

export type TaskScheduledEvent = Extract<HistoryEvent, { type: 'taskScheduled' }>;

/**
 * The inbox's events minus results for work that already has one (in the history or earlier in the
 * inbox). A result can arrive twice around a restart (a timer re-armed after a restart); the
 * first is the outcome, so a replay never sees a second.
 */
export function withoutRepeatedResults(
  history: readonly HistoryEvent[],
  inbox: readonly HistoryEvent[],
): HistoryEvent[] {
  const settled = new Set<number>();
  for (const event of history) if (isResult(event)) settled.add(event.seq);
  return inbox.filter((event) => {
    if (!isResult(event)) return true;
    if (settled.has(event.seq)) return false;
    settled.add(event.seq);
    return true;
  });
}

function isResult(
  event: HistoryEvent,
): event is Extract<HistoryEvent, { type: 'taskCompleted' | 'taskFailed' | 'timerFired' }> {
  return event.type === 'taskCompleted' || event.type === 'taskFailed' || event.type === 'timerFired';
}

/** Describes anything thrown, keeping what an orchestrator's catch block can use. */
export function describeFailure(error: unknown): FailureInfo {
  if (error instanceof Error) {
    const info: FailureInfo = { name: error.name, message: error.message };
    if (error.stack !== undefined) info.stack = error.stack;
    return info;
  }
  return { name: 'Error', message: typeof error === 'string' ? error : safeStringify(error) };
}

/**
 * Every value crossing the durable boundary (inputs, results, event data, output, custom status) is
 * JSON in Azure. Round-tripping it here makes the local runtime show the same surprises (a Date arrives
 * as a string, a Map as {}) and isolates the history from later mutation by the caller.
 */
export function toDurableJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
