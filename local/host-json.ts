// The host.json settings the local runtime honours, so it schedules work as the Functions host would: how many
// Service Bus sessions and messages one instance handles at once, and how long an idle task hub waits between polls.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export interface HostSettings {
  serviceBus: { maxConcurrentSessions?: number | undefined; maxConcurrentCalls?: number | undefined };
  /**
   * durableTask.storageProvider's maxQueuePollingInterval in ms and partitionCount (the Azure Storage provider's
   * defaults: 30 s, 4 control queues).
   */
  durableTask: { maxQueuePollingIntervalMs: number; partitionCount: number };
}

/** The Azure Storage provider's maxQueuePollingInterval when host.json leaves it out. */
export const DEFAULT_MAX_QUEUE_POLLING_INTERVAL_MS = 30_000;

/** The Azure Storage provider's partitionCount (control queues) when host.json leaves it out. */
export const DEFAULT_PARTITION_COUNT = 4;

/** A .NET TimeSpan as host.json writes it: [d.]hh:mm:ss[.fffffff]. */
const timeSpan = z
  .string()
  .regex(/^(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d{1,7})?$/, 'must be a time span such as 00:00:00.200')
  .transform((text) => {
    const [, days = '0.', hours = '0', minutes = '0', seconds = '0'] =
      /^(\d+\.)?(\d+):(\d+):([\d.]+)$/.exec(text) ?? [];
    return (
      (((Number.parseInt(days, 10) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds)) *
      1000
    );
  });

const hostJsonSchema = z.object({
  extensions: z
    .object({
      serviceBus: z
        .object({
          maxConcurrentSessions: z.number().int().positive().optional(),
          maxConcurrentCalls: z.number().int().positive().optional(),
        })
        .optional(),
      durableTask: z
        .object({
          storageProvider: z
            .object({
              maxQueuePollingInterval: timeSpan.optional(),
              partitionCount: z.number().int().positive().optional(),
            })
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

/** Reads the project's host.json (found above this module, in source and in dist/); absent → host defaults. */
export async function readHostSettings(path?: string): Promise<HostSettings> {
  const file = path ?? (await findHostJson());
  if (file === undefined) {
    return {
      serviceBus: {},
      durableTask: {
        maxQueuePollingIntervalMs: DEFAULT_MAX_QUEUE_POLLING_INTERVAL_MS,
        partitionCount: DEFAULT_PARTITION_COUNT,
      },
    };
  }
  const parsed = hostJsonSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a valid host.json: ${parsed.error.message}`);
  const provider = parsed.data.extensions?.durableTask?.storageProvider;
  return {
    serviceBus: { ...parsed.data.extensions?.serviceBus },
    durableTask: {
      maxQueuePollingIntervalMs: provider?.maxQueuePollingInterval ?? DEFAULT_MAX_QUEUE_POLLING_INTERVAL_MS,
      partitionCount: provider?.partitionCount ?? DEFAULT_PARTITION_COUNT,
    },
  };
}

async function findHostJson(): Promise<string | undefined> {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 4; level++) {
    const candidate = join(folder, 'host.json');
    try {
      await readFile(candidate);
      return candidate;
    } catch {
      folder = dirname(folder);
    }
  }
  return undefined;
}
