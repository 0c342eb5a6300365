// One episode of an instance on the local durable driver: the messages it consumes appended to the history, the
// orchestrator replayed over it, and the outcome written onto the instance's record.
import { randomUUID } from 'node:crypto';
import type { LogHandler } from '@azure/functions';
import type * as df from 'durable-functions';
import { describeFailure, toDurableJson, type HistoryEvent } from './history.js';
import type { InstanceRecord } from './instance-store.js';
import { replayOrchestration, type ReplayOutcome } from './replay.js';
import type { TaskHubEvents } from './task-hub-events.js';

export interface Episode {
  instanceId: string;
  /** The orchestrator the record names, or undefined when none is registered by that name. */
  handler: df.OrchestrationHandler | undefined;
  now: Date;
  /** The messages the episode consumes, repeated results already left out. */
  events: HistoryEvent[];
  logHandler: LogHandler | undefined;
  /** Counts the history events the episode appends. */
  counts: TaskHubEvents;
}

/** Replays the instance over its history and the episode's messages; keeps the new history and custom status. */
export function replayEpisode(record: InstanceRecord, episode: Episode): ReplayOutcome {
  const { instanceId, handler, now, events } = episode;
  const previousLength = record.history.length;
  const history: HistoryEvent[] = [
    ...record.history,
    { type: 'orchestratorStarted', at: now.toISOString() },
    ...events,
  ];
  let outcome: ReplayOutcome;
  if (handler === undefined) {
    outcome = failedWith(new Error(`No orchestration named '${record.name}' is registered.`));
    record.history = history;
    episode.counts.historyEvents += history.length - previousLength;
  } else {
    const result = replayOrchestration({
      handler,
      name: record.name,
      instanceId,
      input: record.input,
      history,
      invocationId: randomUUID(),
      ...(episode.logHandler ? { logHandler: episode.logHandler } : {}),
    });
    outcome = result.outcome;
    // A resume that brought nothing new leaves the history as it was.
    if (events.length > 0 || result.scheduled.length > 0) {
      record.history = [...history, ...result.scheduled];
      episode.counts.historyEvents += record.history.length - previousLength;
    }
    try {
      record.customStatus = toDurableJson(result.customStatus) ?? null;
      if (outcome.status === 'completed')
        outcome = { ...outcome, output: toDurableJson(outcome.output) ?? null };
    } catch (error) {
      outcome = failedWith(error);
    }
  }
  return outcome;
}

/** Writes the episode's outcome onto the record: its runtime status, and its output or failure. */
export function recordOutcome(record: InstanceRecord, outcome: ReplayOutcome): void {
  switch (outcome.status) {
    case 'running':
      record.runtimeStatus = 'Running';
      break;
    case 'completed':
      record.runtimeStatus = 'Completed';
      record.output = outcome.output;
      break;
    case 'failed':
      record.runtimeStatus = 'Failed';
      record.failure = outcome.failure;
      // The extension reports a failed instance's output in this form.
      record.output = `Orchestrator function '${record.name}' failed: ${outcome.failure.message}`;
      break;
  }
}

function failedWith(error: unknown): ReplayOutcome {
  return { status: 'failed', failure: describeFailure(error), nonDeterministic: false };
}
