// What the local durable driver is built from: the orchestrators and activities it runs, its clock, logs and
// latency model, and (when opened) where it keeps instances and how long finished ones stay.
import type { LogHandler } from '@azure/functions';
import type * as df from 'durable-functions';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import type { InstanceStore } from './instance-store.js';

export interface DurableRegistry {
  orchestrations: ReadonlyMap<string, df.OrchestrationHandler>;
  activities: ReadonlyMap<string, df.ActivityHandler>;
}

export interface LocalDurableDriverOptions {
  store?: InstanceStore;
  /** The clock behind `currentUtcDateTime`, timers and status times. */
  now?: () => Date;
  /** Longest a durable timer sleeps before reading `now` again, so a test clock can move timers along. */
  timerResolutionMs?: number;
  /** Receives the logs of orchestrators, activities and the driver (the host's console format by default). */
  logHandler?: LogHandler;
  /**
   * Dispatches episodes and activities, and reads and writes instances, as late as the task hub would
   * (undefined: at once).
   */
  latency?: AzureLatencyModel | undefined;
}

export interface LocalDurableDriverOpenOptions extends LocalDurableDriverOptions {
  /** The JSON file instances are kept in across restarts; undefined = memory only (or `store`). */
  dataFile?: string | undefined;
  /** Finished instances last updated longer ago than this are purged (default 24 h; Infinity keeps them). */
  retentionMs?: number;
  /** How often the purge runs besides at open (default 60 s). */
  purgeIntervalMs?: number;
  /** History appends are saved at most this long after they happen (default 100 ms); starts and events at once. */
  flushDelayMs?: number;
}
