import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTelemetry, type InMemoryTelemetry } from '../../test/support/in-memory-telemetry.js';
import type { MessagePublisher, OutgoingMessage } from './message-publisher.js';
import { tracePublisher } from './traced-publisher.js';

function recordingPublisher() {
  const sent: { entity: string; messages: OutgoingMessage[] }[] = [];
  const publisher: MessagePublisher = {
    publish: (entity, messages) => {
      sent.push({
        entity,
        messages: Array.isArray(messages) ? [...messages] : [messages as OutgoingMessage],
      });
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  return { sent, publisher };
}

describe('the traced publisher', () => {
  let telemetry: InMemoryTelemetry;
  beforeEach(() => {
    telemetry = installInMemoryTelemetry();
  });
  afterEach(() => telemetry.uninstall());

  it("puts its send span's traceparent on every message, beside the message's own properties", async () => {
    const { sent, publisher } = recordingPublisher();
    await tracePublisher(publisher).publish('user-messages', [
      { body: { n: 1 }, messageId: 'a', applicationProperties: { kind: 'x' } },
      { body: { n: 2 }, messageId: 'b' },
    ]);
    const [span] = telemetry.spans.getFinishedSpans();
    expect(span?.name).toBe('send user-messages');
    expect(span?.attributes['messaging.destination.name']).toBe('user-messages');
    const traceparent = `00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`;
    expect(sent[0]?.messages.map((message) => message.applicationProperties)).toEqual([
      { kind: 'x', traceparent },
      { traceparent },
    ]);
    expect(sent[0]?.messages.map((message) => message.body)).toEqual([{ n: 1 }, { n: 2 }]);
  });
});

describe('the traced publisher without telemetry', () => {
  it('sends the messages as they are', async () => {
    const { sent, publisher } = recordingPublisher();
    const message = { body: {}, messageId: 'a' };
    await tracePublisher(publisher).publish('q', message);
    expect(sent[0]?.messages).toEqual([message]);
  });
});
