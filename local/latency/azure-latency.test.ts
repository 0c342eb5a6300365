// The Azure latency model: its draws follow each operation's quantiles, repeat for the same seed whatever else is
// drawn in between, and the task hub's dispatch includes the Azure Storage provider's queue poll wait.
import { describe, expect, it } from 'vitest';
import {
  AZURE_LATENCY_QUANTILES,
  createAzureLatencyModel,
  TASK_HUB_QUANTILES,
  type AzureLatencyOperation,
  type AzureLatencyOptions,
} from './azure-latency.js';

const options: AzureLatencyOptions = { seed: 1, taskHub: 'azure-storage', maxQueuePollingIntervalMs: 200 };

function draws(
  model: { draw(operation: AzureLatencyOperation): number },
  operation: AzureLatencyOperation,
  count: number,
) {
  return Array.from({ length: count }, () => model.draw(operation));
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

describe('createAzureLatencyModel', () => {
  it('draws the same sequence per operation for the same seed, whatever is drawn in between', () => {
    const alone = createAzureLatencyModel(options);
    const interleaved = createAzureLatencyModel(options);
    const expected = draws(alone, 'cosmos.point-read', 50);
    const actual = Array.from({ length: 50 }, () => {
      interleaved.draw('service-bus.send');
      interleaved.draw('task-hub.activity-dispatch');
      return interleaved.draw('cosmos.point-read');
    });
    expect(actual).toEqual(expected);
  });

  it('draws another sequence for another seed, and another per operation', () => {
    const one = draws(createAzureLatencyModel(options), 'cosmos.write', 20);
    const two = draws(createAzureLatencyModel({ ...options, seed: 2 }), 'cosmos.write', 20);
    expect(two).not.toEqual(one);
    const sameQuantiles = createAzureLatencyModel(options);
    // Each operation has its own stream: two of them never replay the same uniforms.
    expect(draws(sameQuantiles, 'cosmos.batch', 20)).not.toEqual(draws(sameQuantiles, 'cosmos.query', 20));
  });

  it.each(Object.entries(AZURE_LATENCY_QUANTILES))(
    'fits %s to its p50 and p99',
    (operation, { p50, p99 }) => {
      const sample = draws(createAzureLatencyModel(options), operation as AzureLatencyOperation, 20_000);
      expect(quantile(sample, 0.5)).toBeGreaterThan(p50 * 0.9);
      expect(quantile(sample, 0.5)).toBeLessThan(p50 * 1.1);
      expect(quantile(sample, 0.99)).toBeGreaterThan(p99 * 0.8);
      expect(quantile(sample, 0.99)).toBeLessThan(p99 * 1.2);
      expect(Math.min(...sample)).toBeGreaterThan(0);
      expect(Math.max(...sample)).toBeLessThanOrEqual(3 * p99);
    },
  );

  it('adds a wait for the next queue poll, uniform up to maxQueuePollingInterval, with Azure Storage', () => {
    const storage = draws(createAzureLatencyModel(options), 'task-hub.orchestration-dispatch', 20_000);
    const { dispatch } = TASK_HUB_QUANTILES['azure-storage'];
    // The poll wait's median is half the interval; the message's own latency comes on top of it.
    expect(quantile(storage, 0.5)).toBeGreaterThan(100);
    expect(quantile(storage, 0.5)).toBeLessThan(100 + dispatch.p99);
    expect(Math.max(...storage)).toBeLessThanOrEqual(200 + 3 * dispatch.p99);
    const pollingOff = draws(
      createAzureLatencyModel({ ...options, maxQueuePollingIntervalMs: 0 }),
      'task-hub.activity-dispatch',
      20_000,
    );
    expect(quantile(pollingOff, 0.5)).toBeLessThan(dispatch.p50 * 1.1);
  });

  it('pushes dispatch within a few ms with the Durable Task Scheduler, whatever the poll interval', () => {
    const model = createAzureLatencyModel({
      ...options,
      taskHub: 'durable-task-scheduler',
      maxQueuePollingIntervalMs: 30_000,
    });
    const sample = draws(model, 'task-hub.activity-dispatch', 20_000);
    const { dispatch } = TASK_HUB_QUANTILES['durable-task-scheduler'];
    expect(quantile(sample, 0.5)).toBeLessThan(dispatch.p50 * 1.1);
    expect(quantile(sample, 0.99)).toBeLessThan(dispatch.p99 * 1.2);
  });

  it('keeps its options as plain data a worker thread can receive', () => {
    const model = createAzureLatencyModel(options);
    expect(structuredClone(model.options)).toEqual(options);
  });

  it('waits one draw on a timer', async () => {
    const model = createAzureLatencyModel(options);
    await expect(model.delay('cosmos.point-read')).resolves.toBeUndefined();
  });

  it.each([
    [{ seed: 1.5 }, /seed/],
    [{ maxQueuePollingIntervalMs: -1 }, /maxQueuePollingIntervalMs/],
    [{ maxQueuePollingIntervalMs: Number.NaN }, /maxQueuePollingIntervalMs/],
    [{ taskHub: 'netherite' as AzureLatencyOptions['taskHub'] }, /taskHub/],
  ])('refuses %o', (change, message) => {
    expect(() => createAzureLatencyModel({ ...options, ...change })).toThrow(message);
  });
});
