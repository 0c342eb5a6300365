// What the local durable driver did that a task hub bills for (Azure Storage transactions, Durable Task Scheduler
// actions), counted as it happens; bench/turn-price.ts turns the counts into transactions, actions and money.

export interface TaskHubEvents {
  /** Orchestrations started (startNew). */
  orchestrationStarts: number;
  /** Orchestrator episodes: each reads the instance's messages and history, replays and saves. */
  episodes: number;
  /** Messages the episodes consumed (start, activity results, timers, raised events). */
  messages: number;
  /** History events the episodes appended. */
  historyEvents: number;
  /** Activities scheduled, and their results delivered back (a retry inside one activity counts once). */
  activities: number;
  activityResults: number;
  /** Durable timers scheduled, and fired. */
  timers: number;
  timersFired: number;
  /** External events delivered to running instances. */
  eventsRaised: number;
  /** Instances that finished: completed, failed or terminated. */
  completions: number;
}

export function noTaskHubEvents(): TaskHubEvents {
  return {
    orchestrationStarts: 0,
    episodes: 0,
    messages: 0,
    historyEvents: 0,
    activities: 0,
    activityResults: 0,
    timers: 0,
    timersFired: 0,
    eventsRaised: 0,
    completions: 0,
  };
}
