// Each trigger of the table in a span: HTTP requests as server spans, Service Bus deliveries as consumer spans that
// continue the sender's trace (the chat turn) or link to it (the workers after a turn), activities inside the turn's
// trace from their input. Also the trigger-side metrics: queue wait, dead letters, turns by outcome and duration.
import type { HttpHandler, HttpResponse, HttpResponseInit, InvocationContext, Timer } from '@azure/functions';
import type { Context } from '@opentelemetry/api';
import type * as df from 'durable-functions';
import { TURN_ACTIVITIES } from '../shared/chat/contracts/activities.js';
import { CANCELLED_FINISH_REASON } from '../shared/chat/contracts/activities.js';
import { MAX_DELIVERY_COUNT } from '../shared/messaging/service-bus-entities.js';
import type { TurnTelemetry } from '../shared/telemetry/contracts.js';
import { recordDeadLetter, recordQueueWait, recordTurnEnd } from '../shared/telemetry/metrics.js';
import { contextFrom, hostParent, linkFrom, ROOT_CONTEXT } from '../shared/telemetry/propagation.js';
import {
  SpanKind,
  SpanStatusCode,
  withConversation,
  withSpan,
  withTurnStart,
} from '../shared/telemetry/spans.js';
import type {
  ActivityDefinition,
  FunctionDefinition,
  HttpFunctionDefinition,
  ServiceBusFunctionDefinition,
} from './definition.js';
import { deliveryCount } from './service-bus-delivery.js';

export function traceFunction(definition: FunctionDefinition): FunctionDefinition {
  switch (definition.kind) {
    case 'http':
      return { ...definition, handler: traceHttp(definition) };
    case 'serviceBus':
      return { ...definition, handler: traceServiceBus(definition) };
    case 'activity':
      return { ...definition, handler: traceActivity(definition) };
    case 'timer':
      return {
        ...definition,
        handler: (timer: Timer, context: InvocationContext) =>
          withSpan(`timer ${definition.name}`, { parent: fromHost(context, ROOT_CONTEXT) }, () =>
            definition.handler(timer, context),
          ),
      };
    // The orchestrator replays: its activities' spans stand for it.
    case 'orchestration':
      return definition;
  }
}

function fromHost(context: InvocationContext, fallback: Parameters<typeof hostParent>[2]) {
  return hostParent(
    context.traceContext?.traceParent ?? undefined,
    context.traceContext?.traceState ?? undefined,
    fallback,
  );
}

function traceHttp(definition: HttpFunctionDefinition): HttpHandler {
  const route = `/api/${definition.route}`;
  return (request, context) =>
    withSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        // Under the host's span in Azure; locally, under a caller's W3C traceparent header when it sends one.
        parent: fromHost(
          context,
          contextFrom({
            traceparent: request.headers.get('traceparent') ?? undefined,
            tracestate: request.headers.get('tracestate') ?? undefined,
          }),
        ),
        attributes: { 'http.request.method': request.method, 'http.route': route },
      },
      async (span) => {
        const response: HttpResponseInit | HttpResponse = await definition.handler(request, context);
        const status = response.status ?? 200;
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        return response;
      },
    );
}

/**
 * The chat worker continues the trace of the POST that queued its message (its turn is that request's work); the
 * other workers run in traces of their own, linked to the work that sent their message.
 */
function traceServiceBus(definition: ServiceBusFunctionDefinition): ServiceBusFunctionDefinition['handler'] {
  const { source } = definition;
  const destination = 'queueName' in source ? source.queueName : source.topicName;
  const attributes = {
    'messaging.system': 'servicebus',
    'messaging.operation.type': 'process',
    'messaging.destination.name': destination,
    ...('subscriptionName' in source
      ? { 'messaging.destination.subscription.name': source.subscriptionName }
      : {}),
  };
  return async (message, context) => {
    const metadata = context.triggerMetadata ?? {};
    const carrier = record(metadata['applicationProperties']);
    const enqueuedText = metadata['enqueuedTimeUtc'];
    // The host writes the enqueued time without a zone: it is UTC.
    const enqueued =
      typeof enqueuedText === 'string'
        ? Date.parse(/(Z|[+-]\d\d:\d\d)$/i.test(enqueuedText) ? enqueuedText : `${enqueuedText}Z`)
        : NaN;
    if (Number.isFinite(enqueued)) recordQueueWait(destination, (Date.now() - enqueued) / 1000);
    const continues = definition.continuesTrace === true;
    await withSpan(
      `process ${destination}`,
      {
        kind: SpanKind.CONSUMER,
        parent: continues ? contextFrom(carrier) : fromHost(context, ROOT_CONTEXT),
        ...(continues ? {} : { links: linkFrom(carrier) }),
        attributes: { ...attributes, 'messaging.message.delivery_count': deliveryCount(context) },
      },
      async () => {
        try {
          await withConversation(sessionOf(message), () => definition.handler(message, context));
        } catch (error) {
          // The broker dead-letters a message its last allowed delivery failed on.
          if (deliveryCount(context) >= MAX_DELIVERY_COUNT) recordDeadLetter(destination);
          throw error;
        }
      },
    );
  };
}

function traceActivity(definition: ActivityDefinition): df.ActivityHandler {
  return (input: unknown, context: InvocationContext) => {
    const telemetry = record(record(input)?.['telemetry']);
    return traceStep(
      definition.name,
      input,
      telemetry ? contextFrom(telemetry) : fromHost(context, ROOT_CONTEXT),
      () => Promise.resolve(definition.handler(input, context)),
    );
  };
}

/**
 * A turn's step in its span, with the turn's metrics it ends: an activity's, or round 0 run by the chat worker itself
 * (CHAT_FIRST_ROUND=worker), under the worker's span (`parent` undefined: the active span).
 */
export function traceStep<T>(
  name: string,
  input: unknown,
  parent: Context | undefined,
  step: () => Promise<T>,
): Promise<T> {
  const value = record(input) ?? {};
  const telemetry = record(value['telemetry']) as Partial<TurnTelemetry> | undefined;
  const postedAt = Date.parse(telemetry?.turnPostedAt ?? '');
  // Round 0 streams the turn's first model call: what came before it is what the pipeline added.
  const message = record(value['message']);
  const firstRound = name === TURN_ACTIVITIES.llmStep && value['round'] === 0 && message !== undefined;
  return withSpan(
    `activity ${name}`,
    { ...(parent ? { parent } : {}), attributes: { 'chat.activity.name': name } },
    async () => {
      const run = () => withConversation(sessionOf(input), step);
      const output = await (firstRound ? withTurnStart(postedAt, run) : run());
      const turnSeconds = Number.isFinite(postedAt) ? (Date.now() - postedAt) / 1000 : undefined;
      if (name === TURN_ACTIVITIES.fail) recordTurnEnd('failed', turnSeconds);
      const result = record(output);
      if (name === TURN_ACTIVITIES.llmStep && result?.['outcome'] === 'answered')
        recordTurnEnd(
          result['finishReason'] === CANCELLED_FINISH_REASON ? 'cancelled' : 'completed',
          turnSeconds,
        );
      return output;
    },
  );
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The chat session a message or an activity input belongs to: `gen_ai.conversation.id` of its model calls. */
function sessionOf(value: unknown): string | undefined {
  const sessionId = record(value)?.['sessionId'];
  return typeof sessionId === 'string' ? sessionId : undefined;
}
