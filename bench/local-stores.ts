// Per-write cost of the local stores as the data grows: write latency and event-loop blocking (p50/p99) with 1k and
// 20k items already stored, for the local Cosmos DB (through the real @azure/cosmos client) and the Durable instance
// store, plus compaction time. Prints figures; asserts nothing about speed. `npm run bench:stores`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import { createLocalCosmosClient, startLocalCosmos } from '../local/cosmos/local-cosmos.js';
import { FileInstanceStore } from '../local/durable/file-instance-store.js';
import type { InstanceRecord } from '../local/durable/instance-store.js';

const SIZES = (process.env.SIZES ?? '1000,20000').split(',').map(Number);
const WRITES = Number(process.env.WRITES ?? 400);
const PRELOAD_CONCURRENCY = 32;
const text = 'x'.repeat(800); // about 1 KB per item, like a chat message

interface Figures {
  p50: number;
  p99: number;
}

function percentiles(values: number[]): Figures {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

/** Runs `work` while measuring how long the event loop was blocked (ms, p50/p99/max of the loop's delay). */
async function withLoopDelay<T>(
  work: () => Promise<T>,
): Promise<{ result: T; loop: Figures & { max: number } }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const result = await work();
  histogram.disable();
  const ms = (ns: number) => ns / 1e6;
  return {
    result,
    loop: { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) },
  };
}

const fmt = (value: number) => value.toFixed(2).padStart(7);

async function benchCosmos(size: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-stores-'));
  const local = await startLocalCosmos({ dataFile: join(dir, 'cosmos.json') });
  const client = createLocalCosmosClient(local);
  try {
    const { database } = await client.databases.createIfNotExists({ id: 'bench' });
    const { container } = await database.containers.createIfNotExists({
      id: 'items',
      partitionKey: { paths: ['/pk'] },
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: PRELOAD_CONCURRENCY }, async () => {
        while (next < size) {
          const i = next++;
          await container.items.create({ id: `pre-${i}`, pk: `p${i % 200}`, text });
        }
      }),
    );
    await local.compact(); // start measuring from a compacted store, as after a restart

    const latencies: number[] = [];
    const { loop } = await withLoopDelay(async () => {
      for (let i = 0; i < WRITES; i++) {
        const started = performance.now();
        await container.items.upsert({ id: `w-${i}`, pk: `p${i % 200}`, text });
        latencies.push(performance.now() - started);
      }
    });
    const queries: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await container.items
        .query(
          { query: 'SELECT * FROM c WHERE c.pk = @pk', parameters: [{ name: '@pk', value: 'p7' }] },
          { partitionKey: 'p7' },
        )
        .fetchAll();
      queries.push(performance.now() - started);
    }
    const compaction = await withLoopDelay(() => local.compact());
    const journal = local.diagnostics().journal;
    const write = percentiles(latencies);
    const query = percentiles(queries);
    console.log(
      `cosmos  ${String(size).padStart(6)} items | upsert ms p50 ${fmt(write.p50)} p99 ${fmt(write.p99)} | ` +
        `loop delay ms p50 ${fmt(loop.p50)} p99 ${fmt(loop.p99)} max ${fmt(loop.max)} | ` +
        `partition query ms p50 ${fmt(query.p50)} p99 ${fmt(query.p99)} | ` +
        `compaction ${fmt(journal?.lastCompactionMs ?? 0)} ms (${((journal?.snapshotBytes ?? 0) / 1e6).toFixed(1)} MB, ` +
        `loop max ${fmt(compaction.loop.max)} ms) | fsyncs ${journal?.syncs ?? 0}`,
    );
  } finally {
    client.dispose();
    await local.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function instance(instanceId: string): InstanceRecord {
  const now = new Date().toISOString();
  return {
    instanceId,
    executionId: `${instanceId}-1`,
    name: 'chatTurn',
    input: { text },
    runtimeStatus: 'Completed',
    output: { reply: text },
    customStatus: null,
    createdTime: now,
    lastUpdatedTime: now,
    history: [
      { type: 'executionStarted' },
      { type: 'taskScheduled', seq: 0, kind: 'activity', name: 'step' },
    ],
    inbox: [],
  };
}

async function benchDurable(size: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-stores-'));
  const file = join(dir, 'durable.json');
  const store = await FileInstanceStore.open(file);
  try {
    for (let i = 0; i < size; i++) await store.put(instance(`pre-${i}`));
    await store.flush();
    await store.close();
    const reopened = await FileInstanceStore.open(file);
    const latencies: number[] = [];
    const { loop } = await withLoopDelay(async () => {
      for (let i = 0; i < WRITES; i++) {
        const started = performance.now();
        await reopened.put(instance(`new-${i}`)); // as startNew: put, then the flush() barrier
        await reopened.flush();
        latencies.push(performance.now() - started);
      }
    });
    const closing = performance.now();
    await reopened.close(); // compacts
    const compactionMs = performance.now() - closing;
    const write = percentiles(latencies);
    console.log(
      `durable ${String(size).padStart(6)} inst. | put+flush ms p50 ${fmt(write.p50)} p99 ${fmt(write.p99)} | ` +
        `loop delay ms p50 ${fmt(loop.p50)} p99 ${fmt(loop.p99)} max ${fmt(loop.max)} | ` +
        `compaction on close ${fmt(compactionMs)} ms (${(reopened.stats().snapshotBytes / 1e6).toFixed(1)} MB)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(`local stores: ${WRITES} sequential writes after preloading each size (Node ${process.version})`);
for (const size of SIZES) await benchCosmos(size);
for (const size of SIZES) await benchDurable(size);
