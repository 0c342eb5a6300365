import azureFunctions, { type InvocationContext } from '@azure/functions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TURN_ACTIVITIES } from '../shared/chat/contracts/activities.js';
import { MAX_DELIVERY_COUNT } from '../shared/messaging/service-bus-entities.js';
import { installInMemoryTelemetry, type InMemoryTelemetry } from '../test/support/in-memory-telemetry.js';
import type { ActivityDefinition, ServiceBusFunctionDefinition } from './definition.js';
import { traceFunction } from './traced-functions.js';

const { InvocationContext: Context } = azureFunctions;

const SENDER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

function deliveryContext(deliveryCount: number): InvocationContext {
  return new Context({
    invocationId: 'i',
    functionName: 'worker',
    triggerMetadata: {
      deliveryCount,
      enqueuedTimeUtc: new Date(Date.now() - 3_000).toISOString().replace(/Z$/, ''),
      applicationProperties: { traceparent: SENDER },
    },
  });
}

function worker(continuesTrace: boolean, fail = false): ServiceBusFunctionDefinition {
  const definition: ServiceBusFunctionDefinition = {
    kind: 'serviceBus',
    name: 'worker',
    source: { topicName: 'message-completed', subscriptionName: 'history' },
    isSessionsEnabled: true,
    continuesTrace,
    handler: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve()),
  };
  return traceFunction(definition) as ServiceBusFunctionDefinition;
}

function activity(name: string, output: unknown): ActivityDefinition {
  return traceFunction({
    kind: 'activity',
    name,
    handler: () => Promise.resolve(output),
  }) as ActivityDefinition;
}

describe('traced triggers', () => {
  let telemetry: InMemoryTelemetry;
  beforeEach(() => {
    telemetry = installInMemoryTelemetry();
  });
  afterEach(() => telemetry.uninstall());

  it("continues the sender's trace, or links to it from a trace of its own, and measures the queue wait", async () => {
    await worker(true).handler({}, deliveryContext(1));
    await worker(false).handler({}, deliveryContext(1));
    const [continued, linked] = telemetry.spans.getFinishedSpans();
    expect(continued?.name).toBe('process message-completed');
    expect(continued?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(continued?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(linked?.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(linked?.parentSpanContext).toBeUndefined();
    expect(linked?.links.map((link) => link.context.spanId)).toEqual(['b7ad6b7169203331']);
    const wait = (await telemetry.metricPoints()).find((point) => point.name === 'chat.queue.wait');
    expect(wait?.attributes).toEqual({ 'messaging.destination.name': 'message-completed' });
    expect((wait?.value as { count: number; min: number }).count).toBe(2);
    expect((wait?.value as { min: number }).min).toBeGreaterThanOrEqual(2.5);
  });

  it('counts a dead letter when the last allowed delivery fails, and only then', async () => {
    const failing = worker(false, true);
    await expect(failing.handler({}, deliveryContext(1))).rejects.toThrow('down');
    expect((await telemetry.metricPoints()).some((point) => point.name === 'chat.dead_letters')).toBe(false);
    await expect(failing.handler({}, deliveryContext(MAX_DELIVERY_COUNT))).rejects.toThrow('down');
    const dead = (await telemetry.metricPoints()).filter((point) => point.name === 'chat.dead_letters');
    expect(dead).toEqual([
      {
        name: 'chat.dead_letters',
        attributes: { 'messaging.destination.name': 'message-completed' },
        value: 1,
      },
    ]);
  });

  it('puts activities in the trace their input names, and counts turns by how they ended', async () => {
    const telemetryField = { traceparent: SENDER, turnPostedAt: new Date(Date.now() - 1_000).toISOString() };
    const context = new Context({ invocationId: 'a', functionName: 'llmStep' });
    await activity(TURN_ACTIVITIES.llmStep, { outcome: 'answered', finishReason: 'stop' }).handler(
      { sessionId: 's', round: 1, telemetry: telemetryField },
      context,
    );
    await activity(TURN_ACTIVITIES.llmStep, { outcome: 'answered', finishReason: 'cancelled' }).handler(
      { round: 0, telemetry: telemetryField },
      context,
    );
    await activity(TURN_ACTIVITIES.llmStep, { outcome: 'tools', finishReason: 'tool_calls' }).handler(
      { round: 0, telemetry: telemetryField },
      context,
    );
    await activity(TURN_ACTIVITIES.fail, null).handler({ telemetry: telemetryField }, context);
    const spans = telemetry.spans.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual([
      'activity llmStep',
      'activity llmStep',
      'activity llmStep',
      'activity failTurn',
    ]);
    for (const span of spans) expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    const points = await telemetry.metricPoints();
    const turns = points
      .filter((point) => point.name === 'chat.turns')
      .map((point) => [point.attributes['chat.turn.outcome'], point.value]);
    expect(turns.sort()).toEqual([
      ['cancelled', 1],
      ['completed', 1],
      ['failed', 1],
    ]);
    const durations = points.filter((point) => point.name === 'chat.turn.duration');
    for (const duration of durations)
      expect((duration.value as { min: number }).min).toBeGreaterThanOrEqual(0.9);
  });
});
