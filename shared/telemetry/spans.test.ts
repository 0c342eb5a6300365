import { INVALID_SPAN_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTelemetry, type InMemoryTelemetry } from '../../test/support/in-memory-telemetry.js';
import { contextFrom, currentTraceCarrier, hostParent, linkFrom, ROOT_CONTEXT } from './propagation.js';
import {
  activeConversation,
  setAttributes,
  takeTurnStart,
  traceMethods,
  withConversation,
  withSpan,
  withTurnStart,
} from './spans.js';

describe('with telemetry installed', () => {
  let telemetry: InMemoryTelemetry;
  beforeEach(() => {
    telemetry = installInMemoryTelemetry();
  });
  afterEach(() => telemetry.uninstall());

  const finished = () => telemetry.spans.getFinishedSpans();

  it('withSpan ends the span, nests spans opened inside it and returns what the body returns', async () => {
    const value = await withSpan('outer', {}, () =>
      withSpan('inner', { attributes: { n: 1 } }, () => Promise.resolve(42)),
    );
    expect(value).toBe(42);
    const [inner, outer] = finished();
    expect(inner?.name).toBe('inner');
    expect(inner?.attributes).toEqual({ n: 1 });
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
  });

  it('withSpan marks a failure with its status and error.type, and lets it through', async () => {
    class QuotaError extends Error {
      readonly code = 'quota_exceeded';
    }
    await expect(withSpan('failing', {}, () => Promise.reject(new QuotaError('over')))).rejects.toThrow(
      'over',
    );
    const [span] = finished();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'over' });
    expect(span?.attributes['error.type']).toBe('quota_exceeded');
    expect(span?.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('setAttributes builds them only for a span that records', async () => {
    let built = 0;
    await withSpan('recorded', {}, (span) => {
      setAttributes(span, () => ({ built: ++built }));
      return Promise.resolve();
    });
    // A span that is not sampled does not record.
    setAttributes(trace.wrapSpanContext(INVALID_SPAN_CONTEXT), () => ({ built: ++built }));
    expect(built).toBe(1);
  });

  it('carries the trace across a hop: the carrier names the active span, and a child of it joins its trace', async () => {
    const carrier = await withSpan('sender', {}, () => Promise.resolve(currentTraceCarrier()));
    const [sender] = finished();
    expect(carrier?.traceparent).toBe(
      `00-${sender?.spanContext().traceId}-${sender?.spanContext().spanId}-01`,
    );
    await withSpan('consumer', { parent: contextFrom(carrier) }, () => Promise.resolve());
    await withSpan('linked', { parent: ROOT_CONTEXT, links: linkFrom(carrier) }, () => Promise.resolve());
    const [, consumer, linked] = finished();
    expect(consumer?.spanContext().traceId).toBe(sender?.spanContext().traceId);
    expect(consumer?.parentSpanContext?.spanId).toBe(sender?.spanContext().spanId);
    expect(linked?.spanContext().traceId).not.toBe(sender?.spanContext().traceId);
    expect(linked?.links.map((link) => link.context.spanId)).toEqual([sender?.spanContext().spanId]);
  });

  it("takes the host's parent only when the host sampled it", () => {
    const sampled = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const fallback = contextFrom({ traceparent: '00-11111111111111111111111111111111-2222222222222222-01' });
    expect(trace.getSpanContext(hostParent(sampled, undefined, fallback))?.spanId).toBe('b7ad6b7169203331');
    expect(hostParent(sampled.replace(/01$/, '00'), undefined, fallback)).toBe(fallback);
    expect(hostParent(undefined, undefined, fallback)).toBe(fallback);
  });

  it('traceMethods spans the named methods only, and keeps each method on its object', async () => {
    class Store {
      private readonly items: string[] = [];
      put(item: string) {
        this.items.push(item);
        return Promise.resolve('written');
      }
      count() {
        return this.items.length;
      }
    }
    const store = traceMethods(new Store(), ['put'], 'memory.write', { 'chat.memory.kind': 'summary' });
    expect(await store.put('a')).toBe('written');
    expect(store.count()).toBe(1);
    expect(finished().map((span) => [span.name, span.attributes])).toEqual([
      ['memory.write', { 'chat.memory.kind': 'summary', 'chat.operation': 'put' }],
    ]);
  });

  it('hands the conversation and the turn start to the work inside, the turn start once', () => {
    withConversation('session-1', () => {
      expect(activeConversation()).toBe('session-1');
      withTurnStart(1_000, () => {
        expect(takeTurnStart()).toBe(1_000);
        expect(takeTurnStart()).toBeUndefined();
      });
    });
    expect(activeConversation()).toBeUndefined();
  });
});

describe('without telemetry', () => {
  it('runs the body, and has no trace context to carry', async () => {
    expect(await withSpan('nothing', {}, () => Promise.resolve(currentTraceCarrier()))).toBeUndefined();
    expect(linkFrom({ traceparent: 'not a traceparent' })).toEqual([]);
  });
});
