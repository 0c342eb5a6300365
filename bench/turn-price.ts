// What a turn costs in Azure without the model: the local services' counts of one turn (Cosmos DB request units,
// Service Bus operations, Web PubSub messages, task-hub work) turned into billed units and USD per 1,000 turns,
// and the task hub's idle polling per hour. Prices are pay-as-you-go USD: check your region before relying on them.
import { readHostSettings } from '../local/host-json.js';
import type { LocalStats } from '../local/local-stats.js';

/** A price from the environment (to put in your region's figure) or its default. */
function price(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a price in USD, not '${process.env[name]}'`);
  return value;
}

export const PRICES = {
  /** Cosmos DB serverless, per million RU consumed: https://azure.microsoft.com/pricing/details/cosmos-db/serverless/ */
  cosmosServerlessUsdPerMillionRu: price('COSMOS_USD_PER_MILLION_RU', 0.25),
  /**
   * Service Bus Standard, per million operations between 13 and 100 million a month (the first 13 million come with
   * the base charge of USD 0.0135 an hour): https://azure.microsoft.com/pricing/details/service-bus/
   */
  serviceBusStandardUsdPerMillionOperations: price('SERVICE_BUS_USD_PER_MILLION_OPERATIONS', 0.8),
  /**
   * Web PubSub Standard tier, per million messages beyond the million a unit includes each day (a unit is USD 1.61 a
   * day), each message counted per connection in 2 KB units: https://azure.microsoft.com/pricing/details/web-pubsub/
   */
  webPubSubStandardUsdPerMillionMessages: price('WEB_PUBSUB_USD_PER_MILLION_MESSAGES', 1),
  /** Azure Storage (general-purpose v2, LRS) queue operations per 10,000: https://azure.microsoft.com/pricing/details/storage/queues/ */
  storageQueueUsdPer10kTransactions: price('STORAGE_QUEUE_USD_PER_10K', 0.004),
  /** Azure Storage table transactions per 10,000: https://azure.microsoft.com/pricing/details/storage/tables/ */
  storageTableUsdPer10kTransactions: price('STORAGE_TABLE_USD_PER_10K', 0.00036),
  /**
   * Durable Task Scheduler, Consumption SKU, per million actions
   * (https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-billing
   * defines the action; the price is on https://azure.microsoft.com/pricing/details/functions/). Assumed: no
   * figure was at hand, so DTS_USD_PER_MILLION_ACTIONS should be set from the pricing page.
   */
  schedulerConsumptionUsdPerMillionActions: price('DTS_USD_PER_MILLION_ACTIONS', 0.75),
} as const;

/**
 * Azure Storage transactions per task-hub event with the Azure Storage provider (no extended sessions, messages
 * under 45 KB so no blobs), from how the provider keeps a task hub
 * (https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-azure-storage-provider): control
 * queues and a work-item queue, a History and an Instances table. The counts per event are assumed from that
 * design; nothing publishes them.
 */
export const STORAGE_TRANSACTIONS_PER_EVENT = {
  /** The client writes the Instances row and puts the start message on a control queue. */
  orchestrationStart: { queue: 1, table: 1 },
  /** A control-queue dequeue, the history read (one query), the history write (one batch), the Instances update. */
  episode: { queue: 1, table: 3 },
  /** Each consumed message is deleted from its control queue. */
  message: { queue: 1, table: 0 },
  /** Put on the work-item queue, dequeued, deleted; its result put on a control queue. */
  activity: { queue: 4, table: 0 },
  /** A timer or an external event is one more control-queue message. */
  timer: { queue: 1, table: 0 },
  eventRaised: { queue: 1, table: 0 },
} as const;

/** The counts of one turn, in the units each service bills. */
export interface TurnBill {
  cosmosRequestUnits: number;
  serviceBusOperations: number;
  webPubSubMessages: number;
  /** Delivered messages in 2 KB units: what Web PubSub bills. */
  webPubSubMessageUnits: number;
  storageQueueTransactions: number;
  storageTableTransactions: number;
  schedulerActions: number;
}

/** USD per 1,000 turns, each service, and in all with either task-hub backend. */
export interface TurnPrice extends TurnBill {
  usdPer1000Turns: {
    cosmos: number;
    serviceBus: number;
    webPubSub: number;
    /** The task hub on Azure Storage (queues and tables). */
    storage: number;
    /** The task hub on the Durable Task Scheduler, Consumption SKU. */
    scheduler: number;
    totalWithStorage: number;
    totalWithScheduler: number;
  };
}

/** What one turn's counters (reset before it), as GET /local/stats answers them, come to. */
export function turnBill(
  usage: Pick<LocalStats, 'cosmos' | 'serviceBus' | 'webPubSub' | 'taskHub'>,
): TurnBill {
  const bus = usage.serviceBus;
  const hub = usage.taskHub;
  const per = STORAGE_TRANSACTIONS_PER_EVENT;
  const transactions = (kind: 'queue' | 'table') =>
    hub.orchestrationStarts * per.orchestrationStart[kind] +
    hub.episodes * per.episode[kind] +
    hub.messages * per.message[kind] +
    hub.activities * per.activity[kind] +
    hub.timers * per.timer[kind] +
    hub.eventsRaised * per.eventRaised[kind];
  return {
    cosmosRequestUnits: usage.cosmos.requestUnits,
    serviceBusOperations: bus.operations,
    webPubSubMessages: usage.webPubSub.messages,
    webPubSubMessageUnits: usage.webPubSub.messageUnits,
    storageQueueTransactions: transactions('queue'),
    storageTableTransactions: transactions('table'),
    // The scheduler's billing page (a start one action, an activity two, a timer or an event one), as counted there.
    schedulerActions: hub.operations,
  };
}

export function turnPrice(bill: TurnBill): TurnPrice {
  const per1000 = (count: number, usd: number, per: number) => (count * 1000 * usd) / per;
  const cosmos = per1000(bill.cosmosRequestUnits, PRICES.cosmosServerlessUsdPerMillionRu, 1e6);
  const serviceBus = per1000(
    bill.serviceBusOperations,
    PRICES.serviceBusStandardUsdPerMillionOperations,
    1e6,
  );
  const webPubSub = per1000(bill.webPubSubMessageUnits, PRICES.webPubSubStandardUsdPerMillionMessages, 1e6);
  const storage =
    per1000(bill.storageQueueTransactions, PRICES.storageQueueUsdPer10kTransactions, 1e4) +
    per1000(bill.storageTableTransactions, PRICES.storageTableUsdPer10kTransactions, 1e4);
  const scheduler = per1000(bill.schedulerActions, PRICES.schedulerConsumptionUsdPerMillionActions, 1e6);
  const shared = cosmos + serviceBus + webPubSub;
  return {
    ...bill,
    usdPer1000Turns: {
      cosmos,
      serviceBus,
      webPubSub,
      storage,
      scheduler,
      totalWithStorage: shared + storage,
      totalWithScheduler: shared + scheduler,
    },
  };
}

/** The mean of several turns' prices, field by field. */
export function meanPrice(prices: readonly TurnPrice[]): TurnPrice {
  const n = Math.max(1, prices.length);
  const mean = (value: (p: TurnPrice) => number) => prices.reduce((sum, p) => sum + value(p), 0) / n;
  const usd = (key: keyof TurnPrice['usdPer1000Turns']) => mean((p) => p.usdPer1000Turns[key]);
  return {
    cosmosRequestUnits: mean((p) => p.cosmosRequestUnits),
    serviceBusOperations: mean((p) => p.serviceBusOperations),
    webPubSubMessages: mean((p) => p.webPubSubMessages),
    webPubSubMessageUnits: mean((p) => p.webPubSubMessageUnits),
    storageQueueTransactions: mean((p) => p.storageQueueTransactions),
    storageTableTransactions: mean((p) => p.storageTableTransactions),
    schedulerActions: mean((p) => p.schedulerActions),
    usdPer1000Turns: {
      cosmos: usd('cosmos'),
      serviceBus: usd('serviceBus'),
      webPubSub: usd('webPubSub'),
      storage: usd('storage'),
      scheduler: usd('scheduler'),
      totalWithStorage: usd('totalWithStorage'),
      totalWithScheduler: usd('totalWithScheduler'),
    },
  };
}

// ---- the task hub at rest ----

export interface TaskHubPolling {
  maxQueuePollingIntervalMs: number;
  partitionCount: number;
}

/**
 * What an idle task hub on Azure Storage costs an hour, per app instance: once backed off, each of its
 * `partitionCount` control queues and the work-item queue is polled every maxQueuePollingInterval
 * (https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-azure-storage-provider, "Queue
 * polling"). Blob lease renewals are left out. The Durable Task Scheduler pushes work: nothing is billed at rest.
 */
export function idlePollingPerHour(polling: TaskHubPolling) {
  const queues = polling.partitionCount + 1;
  const transactions = (queues * 3_600_000) / polling.maxQueuePollingIntervalMs;
  const usd = (transactions * PRICES.storageQueueUsdPer10kTransactions) / 1e4;
  return { queues, transactions, usd, usdPerMonth: usd * 730 };
}

/** host.json's polling settings, with the provider's defaults (30 s, 4 partitions) where it says nothing. */
export async function readTaskHubPolling(file?: string): Promise<TaskHubPolling> {
  return (await readHostSettings(file)).durableTask;
}

// ---- report ----

const cell = (value: string | number) => String(value).padStart(12);
const usd = (value: number) => `$${value.toFixed(4)}`;

/** The per-turn counts and USD per 1,000 turns of some labelled turns, then the last ÷ first ratio. */
export function printTurnPrices(
  title: string,
  rows: readonly { label: string; price: TurnPrice }[],
  polling?: TaskHubPolling,
): void {
  console.log(`    ${title}`);
  const header = [
    'turn',
    'Cosmos RU',
    'SB ops',
    'WPS msgs',
    'WPS units',
    'queue tx',
    'table tx',
    'DTS actions',
  ];
  const money = ['Cosmos', 'SB', 'WPS', 'Storage', 'DTS', 'all+Stor.', 'all+DTS'];
  console.log(`    ${[...header, ...money].map(cell).join('')}`);
  for (const { label, price } of rows) {
    const u = price.usdPer1000Turns;
    const counts = [
      price.cosmosRequestUnits,
      price.serviceBusOperations,
      price.webPubSubMessages,
      price.webPubSubMessageUnits,
      price.storageQueueTransactions,
      price.storageTableTransactions,
      price.schedulerActions,
    ].map((n) => Math.round(n * 10) / 10);
    const dollars = [
      u.cosmos,
      u.serviceBus,
      u.webPubSub,
      u.storage,
      u.scheduler,
      u.totalWithStorage,
      u.totalWithScheduler,
    ];
    console.log(`    ${[label, ...counts, ...dollars.map(usd)].map(cell).join('')}`);
  }
  const first = rows[0];
  const last = rows.at(-1);
  if (first && last && first !== last) {
    const over = (key: keyof TurnPrice['usdPer1000Turns']) => {
      const a = first.price.usdPer1000Turns[key];
      return a > 0 ? `${(last.price.usdPer1000Turns[key] / a).toFixed(2)}×` : 'n/a';
    };
    console.log(
      `    ${last.label} ÷ ${first.label} (flat is 1.00×): all with Storage ${over('totalWithStorage')}, ` +
        `with DTS ${over('totalWithScheduler')}; Cosmos ${over('cosmos')}, Service Bus ${over('serviceBus')}, ` +
        `Web PubSub ${over('webPubSub')}`,
    );
  }
  if (polling) {
    const idle = idlePollingPerHour(polling);
    console.log(
      `    Task hub on Azure Storage at rest (maxQueuePollingInterval ${polling.maxQueuePollingIntervalMs} ms, ` +
        `${polling.partitionCount} partitions): ${Math.round(idle.transactions)} queue polls an hour per instance, ` +
        `${usd(idle.usd)} an hour (${usd(idle.usdPerMonth)} a month); the Durable Task Scheduler bills nothing at rest`,
    );
    console.log(
      '    Prices: Cosmos DB serverless, Service Bus Standard (beyond the 13M operations included), Web PubSub ' +
        'Standard (beyond the 1M messages a unit includes a day), Storage GPv2 LRS queues and tables, DTS ' +
        'Consumption (assumed price); bench/turn-price.ts names each source and the variable that overrides it.',
    );
  }
}
