// host.json as both hosts read it: the local runtime takes its Service Bus concurrency, and its time limits
// must outlast a chat turn the worker waits for (or the session would be released, or the worker killed, mid-turn)
// and keep a message locked as long as a function may run on it (a document's ingestion can take that long).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../shared/app/config.js';
import { readHostSettings } from './host-json.js';

const hostJson = JSON.parse(readFileSync(new URL('../host.json', import.meta.url), 'utf8')) as {
  functionTimeout: string;
  extensions: {
    serviceBus: { maxAutoLockRenewalDuration: string; maxConcurrentSessions: number };
    durableTask?: { storageProvider?: { maxQueuePollingInterval?: string } };
  };
};

/** hh:mm:ss(.fff) → milliseconds. */
function timeSpanMs(span: string): number {
  const [hours = '0', minutes = '0', seconds = '0'] = span.split(':');
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
}

describe('host.json', () => {
  it('is what the local runtime reads', async () => {
    const settings = await readHostSettings();
    expect(settings.serviceBus.maxConcurrentSessions).toBe(
      hostJson.extensions.serviceBus.maxConcurrentSessions,
    );
  });

  it("reads the task hub's maxQueuePollingInterval, which the Azure latency model waits on", async () => {
    const settings = await readHostSettings();
    const interval = hostJson.extensions.durableTask?.storageProvider?.maxQueuePollingInterval ?? '00:00:30';
    expect(settings.durableTask.maxQueuePollingIntervalMs).toBe(timeSpanMs(interval));
    const folder = await mkdtemp(join(tmpdir(), 'host-json-'));
    try {
      const file = join(folder, 'host.json');
      const polling = (interval: string) =>
        JSON.stringify({
          extensions: { durableTask: { storageProvider: { maxQueuePollingInterval: interval } } },
        });
      await writeFile(file, polling('00:00:30'));
      expect((await readHostSettings(file)).durableTask.maxQueuePollingIntervalMs).toBe(30_000);
      await writeFile(file, polling('1.00:00:01.5'));
      expect((await readHostSettings(file)).durableTask.maxQueuePollingIntervalMs).toBe(86_401_500);
      await writeFile(file, polling('200ms'));
      await expect(readHostSettings(file)).rejects.toThrow(/not a valid host.json/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('keeps the session lock and the function alive longer than the worker waits for a turn', () => {
    const { chat } = loadConfig({
      APP_ENV: 'local',
      COSMOS_ENDPOINT: 'https://localhost:8081/',
      WEBPUBSUB_CONNECTION_STRING: 'Endpoint=http://localhost;AccessKey=x;Version=1.0;',
      LLM_BASE_URL: 'http://localhost:1/v1',
      LLM_CHAT_MODEL: 'm',
      LLM_EMBEDDING_MODEL: 'e',
    });
    expect(timeSpanMs(hostJson.extensions.serviceBus.maxAutoLockRenewalDuration)).toBeGreaterThan(
      chat.turnWaitMs,
    );
    expect(timeSpanMs(hostJson.functionTimeout)).toBeGreaterThan(chat.turnWaitMs);
  });

  it('renews a message lock for as long as a function may run, so a long ingestion is not delivered twice', () => {
    // A lock that lapsed before the function ended would hand the message (a document being indexed) to another
    // instance while the first still works on it.
    expect(timeSpanMs(hostJson.extensions.serviceBus.maxAutoLockRenewalDuration)).toBeGreaterThanOrEqual(
      timeSpanMs(hostJson.functionTimeout),
    );
  });

  it('takes the host defaults where host.json sets nothing, and refuses a malformed one', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'host-json-'));
    try {
      const file = join(folder, 'host.json');
      await writeFile(file, JSON.stringify({ version: '2.0' }));
      expect(await readHostSettings(file)).toEqual({
        serviceBus: {},
        durableTask: { maxQueuePollingIntervalMs: 30_000, partitionCount: 4 },
      });
      await writeFile(
        file,
        JSON.stringify({ extensions: { serviceBus: { maxConcurrentSessions: 'many' } } }),
      );
      await expect(readHostSettings(file)).rejects.toThrow(/not a valid host.json/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
