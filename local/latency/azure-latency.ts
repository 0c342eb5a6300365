// A seeded model of the latency each Azure service adds to a call made from an app in the same region, so the local
// runtime can answer its stand-ins' calls as late as Azure would. The sources of every figure: docs/latency-model.md.
import { setTimeout as sleep } from 'node:timers/promises';

export type AzureLatencyOperation =
  | 'cosmos.point-read'
  | 'cosmos.write'
  | 'cosmos.query'
  | 'cosmos.batch'
  | 'cosmos.metadata'
  | 'service-bus.send'
  | 'service-bus.delivery'
  | 'task-hub.orchestration-dispatch'
  | 'task-hub.activity-dispatch'
  | 'task-hub.table'
  | 'web-pubsub.rest'
  | 'web-pubsub.delivery'
  | 'model.first-token';

/** Plain data (structured-cloneable: it is passed to a worker thread). */
export interface AzureLatencyOptions {
  seed: number;
  taskHub: 'azure-storage' | 'durable-task-scheduler';
  maxQueuePollingIntervalMs: number;
}

export interface AzureLatencyModel {
  readonly options: AzureLatencyOptions;
  /** One draw in ms from the operation's seeded distribution. */
  draw(operation: AzureLatencyOperation): number;
  /** Waits one draw (a timer: it costs no CPU). */
  delay(operation: AzureLatencyOperation): Promise<void>;
}

/** A log-normal distribution given by two of its quantiles, in milliseconds. */
export interface LatencyQuantiles {
  p50: number;
  p99: number;
}

/** Every operation's distribution; the task hub's depend on the backend imitated. */
export const AZURE_LATENCY_QUANTILES: {
  readonly [operation in Exclude<AzureLatencyOperation, `task-hub.${string}`>]: LatencyQuantiles;
} = {
  'cosmos.point-read': { p50: 4, p99: 10 },
  'cosmos.write': { p50: 6, p99: 15 },
  'cosmos.query': { p50: 8, p99: 30 },
  'cosmos.batch': { p50: 8, p99: 25 },
  'cosmos.metadata': { p50: 5, p99: 20 },
  'service-bus.send': { p50: 8, p99: 40 },
  'service-bus.delivery': { p50: 10, p99: 50 },
  'web-pubsub.rest': { p50: 15, p99: 60 },
  'web-pubsub.delivery': { p50: 10, p99: 40 },
  'model.first-token': { p50: 400, p99: 1500 },
};

/** The task hub's queue message (Azure Storage) or gRPC push (Durable Task Scheduler), before any poll wait. */
export const TASK_HUB_QUANTILES: {
  readonly [hub in AzureLatencyOptions['taskHub']]: {
    readonly dispatch: LatencyQuantiles;
    readonly table: LatencyQuantiles;
  };
} = {
  'azure-storage': { dispatch: { p50: 10, p99: 50 }, table: { p50: 10, p99: 50 } },
  'durable-task-scheduler': { dispatch: { p50: 3, p99: 15 }, table: { p50: 3, p99: 15 } },
};

/** The standard normal's 99th percentile: a log-normal's sigma is ln(p99 / p50) / Z99. */
const Z99 = 2.326_347_874;

/** No draw exceeds this many times its p99, so one freak draw cannot stall a run (the log-normal's tail is open). */
const TAIL_CAP = 3;

/** mulberry32: a small, fast, well-mixed 32-bit PRNG whose whole state is one number, so streams are reproducible. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d_2b_79_f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** FNV-1a of the operation's name, mixed with the seed: each operation has its own stream, whatever else is drawn. */
function streamSeed(seed: number, operation: string): number {
  let hash = 0x81_1c_9d_c5 ^ (seed >>> 0);
  for (let index = 0; index < operation.length; index++) {
    hash = Math.imul(hash ^ operation.charCodeAt(index), 0x01_00_01_93);
  }
  return hash >>> 0;
}

/** One log-normal draw from two uniforms (Box–Muller), capped at TAIL_CAP × p99. */
function logNormal(quantiles: LatencyQuantiles, random: () => number): number {
  const sigma = Math.log(quantiles.p99 / quantiles.p50) / Z99;
  const u1 = 1 - random(); // (0, 1]: the logarithm stays finite
  const u2 = random();
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.min(quantiles.p50 * Math.exp(sigma * normal), TAIL_CAP * quantiles.p99);
}

/** Checks the options at start-up: a model with a negative poll interval or a fractional seed is a mistake. */
function validate(options: AzureLatencyOptions): void {
  if (!Number.isSafeInteger(options.seed))
    throw new RangeError(`seed must be an integer, not ${options.seed}`);
  if (options.taskHub !== 'azure-storage' && options.taskHub !== 'durable-task-scheduler') {
    throw new RangeError(
      `taskHub must be azure-storage or durable-task-scheduler, not ${String(options.taskHub)}`,
    );
  }
  if (!Number.isFinite(options.maxQueuePollingIntervalMs) || options.maxQueuePollingIntervalMs < 0) {
    throw new RangeError(
      `maxQueuePollingIntervalMs must be a finite number ≥ 0, not ${options.maxQueuePollingIntervalMs}`,
    );
  }
}

export function createAzureLatencyModel(options: AzureLatencyOptions): AzureLatencyModel {
  validate(options);
  const frozen: AzureLatencyOptions = Object.freeze({ ...options });
  const streams = new Map<AzureLatencyOperation, () => number>();
  const streamOf = (operation: AzureLatencyOperation): (() => number) => {
    let stream = streams.get(operation);
    if (stream === undefined) {
      stream = mulberry32(streamSeed(frozen.seed, operation));
      streams.set(operation, stream);
    }
    return stream;
  };
  const hub = TASK_HUB_QUANTILES[frozen.taskHub];

  const draw = (operation: AzureLatencyOperation): number => {
    const random = streamOf(operation);
    switch (operation) {
      case 'task-hub.orchestration-dispatch':
      case 'task-hub.activity-dispatch': {
        // Azure Storage: the message waits for the worker's next poll of its queue, which an idle hub has backed off
        // to maxQueuePollingInterval; the arrival falls anywhere in that interval. The scheduler pushes at once.
        const pollWait = frozen.taskHub === 'azure-storage' ? random() * frozen.maxQueuePollingIntervalMs : 0;
        return pollWait + logNormal(hub.dispatch, random);
      }
      case 'task-hub.table':
        return logNormal(hub.table, random);
      default:
        return logNormal(AZURE_LATENCY_QUANTILES[operation], random);
    }
  };

  return {
    options: frozen,
    draw,
    delay: async (operation) => {
      await sleep(draw(operation));
    },
  };
}
