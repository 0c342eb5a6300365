// The app's metrics: the GenAI conventions' client metrics and our own (turns, the time the pipeline adds to the
// first token, queue wait, dead letters). Instruments follow the global meter provider, set up or not.
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
} from '@opentelemetry/api';
import { INSTRUMENTATION_NAME } from './spans.js';

/** The GenAI conventions' advice for durations in seconds and for token counts. */
const SECONDS_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

export type TurnOutcome = 'completed' | 'failed' | 'cancelled';

interface Instruments {
  operationDuration: Histogram;
  tokenUsage: Histogram;
  timeToFirstChunk: Histogram;
  turnDuration: Histogram;
  firstTokenAdded: Histogram;
  queueWait: Histogram;
  turns: Counter;
  deadLetters: Counter;
}

// The metrics API has no proxy meter: instruments made before the provider is set would stay no-ops.
let cached: { provider: MeterProvider; instruments: Instruments } | undefined;

function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (cached?.provider === provider) return cached.instruments;
  const meter = provider.getMeter(INSTRUMENTATION_NAME);
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, {
      unit: 's',
      description,
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
  const made: Instruments = {
    operationDuration: seconds('gen_ai.client.operation.duration', 'GenAI operation duration.'),
    tokenUsage: meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Number of input and output tokens used.',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    timeToFirstChunk: seconds(
      'gen_ai.client.operation.time_to_first_chunk',
      'Time from the request until the first chunk of a streamed answer.',
    ),
    turnDuration: seconds('chat.turn.duration', 'From the POST of a message until its turn ended.'),
    firstTokenAdded: seconds(
      'chat.turn.first_token.added',
      "Time the pipeline adds before the model's first token: from the POST until the turn's first model call.",
    ),
    queueWait: seconds(
      'chat.queue.wait',
      'How long a message waited on Service Bus before its worker took it.',
    ),
    turns: meter.createCounter('chat.turns', { unit: '{turn}', description: 'Turns ended, by outcome.' }),
    deadLetters: meter.createCounter('chat.dead_letters', {
      unit: '{message}',
      description:
        'Messages a worker failed on for the last allowed delivery: Service Bus dead-letters them.',
    }),
  };
  cached = { provider, instruments: made };
  return made;
}

/** The attributes every GenAI client metric carries. */
export interface ModelMetricAttributes {
  operation: 'chat' | 'embeddings';
  provider: string;
  requestModel: string;
  responseModel?: string | undefined;
}

function modelAttributes(call: ModelMetricAttributes, errorType?: string): Attributes {
  return {
    'gen_ai.operation.name': call.operation,
    'gen_ai.provider.name': call.provider,
    'gen_ai.request.model': call.requestModel,
    ...(call.responseModel !== undefined ? { 'gen_ai.response.model': call.responseModel } : {}),
    ...(errorType !== undefined ? { 'error.type': errorType } : {}),
  };
}

export function recordModelCall(
  call: ModelMetricAttributes,
  outcome: { seconds: number; errorType?: string; inputTokens?: number; outputTokens?: number },
): void {
  const { operationDuration, tokenUsage } = instruments();
  operationDuration.record(outcome.seconds, modelAttributes(call, outcome.errorType));
  const attributes = modelAttributes(call);
  if (outcome.inputTokens !== undefined)
    tokenUsage.record(outcome.inputTokens, { ...attributes, 'gen_ai.token.type': 'input' });
  if (outcome.outputTokens !== undefined)
    tokenUsage.record(outcome.outputTokens, { ...attributes, 'gen_ai.token.type': 'output' });
}

export function recordTimeToFirstChunk(call: ModelMetricAttributes, seconds: number): void {
  instruments().timeToFirstChunk.record(seconds, modelAttributes(call));
}

export function recordFirstTokenAdded(seconds: number): void {
  instruments().firstTokenAdded.record(Math.max(0, seconds));
}

export function recordTurnEnd(outcome: TurnOutcome, seconds: number | undefined): void {
  const { turns, turnDuration } = instruments();
  turns.add(1, { 'chat.turn.outcome': outcome });
  if (seconds !== undefined) turnDuration.record(Math.max(0, seconds), { 'chat.turn.outcome': outcome });
}

export function recordQueueWait(destination: string, seconds: number): void {
  instruments().queueWait.record(Math.max(0, seconds), { 'messaging.destination.name': destination });
}

export function recordDeadLetter(destination: string): void {
  instruments().deadLetters.add(1, { 'messaging.destination.name': destination });
}
