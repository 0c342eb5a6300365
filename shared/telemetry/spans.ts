// The app's tracer and the one way every area opens a span: `withSpan` ends it, records a failure on it, and hands
// the body the span so attributes are computed only when it records. Context values carry what deeper spans need.
import {
  context,
  createContextKey,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';

/** The tracer's and the meter's name. */
export const INSTRUMENTATION_NAME = 'memory-chat';

export { SpanKind, SpanStatusCode };
export type { Span };

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The span's parent; default: the active span. */
  parent?: Context;
}

/** Runs `body` inside a new active span; a throw marks the span failed (with `error.type`) and goes on. */
export function withSpan<T>(
  name: string,
  options: SpanOptions,
  body: (span: Span) => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer(INSTRUMENTATION_NAME);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links ? { links: options.links } : {}),
    },
    parent,
    async (span) => {
      try {
        return await body(span);
      } catch (error) {
        markFailed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Records a failure on a span: its status, `error.type` (the error's class or code) and the exception. */
export function markFailed(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  const failure = error instanceof Error ? error : new Error(String(error));
  const code = (failure as { code?: unknown }).code;
  span.setAttribute('error.type', typeof code === 'string' ? code : failure.name);
  span.recordException(failure);
  span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
}

/** Sets attributes only when the span records: building them may cost something (sizes, JSON). */
export function setAttributes(span: Span, build: () => Attributes): void {
  if (span.isRecording()) span.setAttributes(build());
}

const CONVERSATION = createContextKey('memory-chat.conversation-id');
const TURN_POSTED_AT = createContextKey('memory-chat.turn-posted-at');

/** Runs `body` with the conversation (the chat session) that model calls inside it belong to. */
export function withConversation<T>(conversationId: string | undefined, body: () => T): T {
  if (conversationId === undefined) return body();
  return context.with(context.active().setValue(CONVERSATION, conversationId), body);
}

/** The conversation of the running work, for `gen_ai.conversation.id`. */
export function activeConversation(): string | undefined {
  const value = context.active().getValue(CONVERSATION);
  return typeof value === 'string' ? value : undefined;
}

/**
 * Runs `body` as the work that streams a turn's first model call, begun when the front door accepted the message
 * (epoch ms): the first model call inside measures what the pipeline added before it.
 */
export function withTurnStart<T>(postedAtMs: number | undefined, body: () => T): T {
  if (postedAtMs === undefined || !Number.isFinite(postedAtMs)) return body();
  return context.with(context.active().setValue(TURN_POSTED_AT, { postedAtMs, measured: false }), body);
}

/** The turn's acceptance time, once: the first model call that asks takes it, later ones get undefined. */
export function takeTurnStart(): number | undefined {
  const value = context.active().getValue(TURN_POSTED_AT) as
    { postedAtMs: number; measured: boolean } | undefined;
  if (value === undefined || value.measured) return undefined;
  value.measured = true;
  return value.postedAtMs;
}

/**
 * `target` with each of `methods` run inside a span named `name` (with `attributes` and `{prefix}.method`); the
 * other members are the target's own. For ports whose writes (not reads) are worth a span each.
 */
export function traceMethods<T extends object>(
  target: T,
  methods: readonly (keyof T & string)[],
  name: string,
  attributes: Attributes = {},
): T {
  const traced = new Set<string | symbol>(methods);
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!traced.has(property)) return method.bind(object);
      return (...args: unknown[]) =>
        withSpan(name, { attributes: { ...attributes, 'chat.operation': String(property) } }, () =>
          Promise.resolve(method.apply(object, args)),
        );
    },
  });
}
