// The message publisher, traced: each publish is a `send {entity}` producer span, and every message carries that
// span's W3C trace context in its application properties, so its consumer continues or links the trace.
import { currentTraceCarrier } from '../telemetry/propagation.js';
import { SpanKind, withSpan } from '../telemetry/spans.js';
import type { MessagePublisher, OutgoingMessage } from './message-publisher.js';

export function tracePublisher(publisher: MessagePublisher): MessagePublisher {
  return {
    publish: (entity, messages) =>
      withSpan(
        `send ${entity}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'servicebus',
            'messaging.operation.type': 'send',
            'messaging.destination.name': entity,
          },
        },
        () => {
          const carrier = currentTraceCarrier();
          if (carrier === undefined) return publisher.publish(entity, messages);
          const properties: Record<string, string> = { traceparent: carrier.traceparent };
          if (carrier.tracestate !== undefined) properties['tracestate'] = carrier.tracestate;
          const withContext = (message: OutgoingMessage): OutgoingMessage => ({
            ...message,
            applicationProperties: { ...message.applicationProperties, ...properties },
          });
          return publisher.publish(
            entity,
            Array.isArray(messages)
              ? (messages as readonly OutgoingMessage[]).map(withContext)
              : withContext(messages as OutgoingMessage),
          );
        },
      ),
    close: () => publisher.close(),
  };
}
