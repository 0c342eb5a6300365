// The turn's event log and live delivery, traced: each stored batch is a `turn_events.append` span and each
// Web PubSub send a `webpubsub send` span, with the batch's size and first seq (never the events' text).
import { setAttributes, SpanKind, withSpan } from '../telemetry/spans.js';
import type { ChatEvent } from './contracts.js';
import type { TurnEventSink } from './turn-event-sink.js';
import type { TurnEventStore } from './turn-event-store.js';

function batchAttributes(events: readonly ChatEvent[]) {
  return { 'chat.events.count': events.length, 'chat.events.first_seq': events[0]?.seq ?? 0 };
}

export function traceEventStore(store: TurnEventStore): TurnEventStore {
  return {
    append: (batch) =>
      withSpan('turn_events.append', { kind: SpanKind.CLIENT }, async (span) => {
        setAttributes(span, () => ({ 'db.system.name': 'azure.cosmosdb', ...batchAttributes(batch) }));
        const outcome = await store.append(batch);
        span.setAttribute('chat.events.outcome', outcome);
        return outcome;
      }),
    read: (sessionId, chatMessageId, afterSeq) => store.read(sessionId, chatMessageId, afterSeq),
  };
}

export function traceEventSink(sink: TurnEventSink): TurnEventSink {
  return {
    send: (turn, events) =>
      withSpan('webpubsub send', { kind: SpanKind.PRODUCER }, (span) => {
        setAttributes(span, () => ({
          'messaging.system': 'azure.webpubsub',
          'messaging.operation.type': 'send',
          ...batchAttributes(events),
        }));
        return sink.send(turn, events);
      }),
  };
}
