// The shape of the one table of function definitions (functions/table.ts), which the Functions host registers
// (functions/register.ts) and the local runtime mounts (local/functions-host.ts). A new trigger kind lands in
// three exhaustive switches over `kind`: this union, register.ts and local/functions-host.ts.
import type { HttpHandler, HttpMethod, InvocationContext, Timer } from '@azure/functions';
import type * as df from 'durable-functions';
import type { App } from '../shared/app/app.js';
import type { EndpointDeclaration } from '../shared/http/endpoint.js';

/**
 * An HTTP function. JSON endpoints are declared with `endpoint()` and made into one of these by
 * `httpFunction()` (functions/endpoint.ts); an endpoint that is not JSON (MCP's Streamable HTTP, say) gives its
 * own handler, which receives the same HttpRequest and may answer with a streamed body.
 */
export interface HttpFunctionDefinition {
  kind: 'http';
  name: string;
  /** Route under /api, in the host's template syntax: `stream/{sessionId}/{chatMessageId}`. */
  route: string;
  methods: HttpMethod[];
  /** The handler calls `app.orchestrations(context)`: bind a durable client input. */
  usesDurableClient?: boolean;
  handler: HttpHandler;
  /** What a client needs to know of it: every endpoint of the table has one (docs/api.md is generated from it). */
  declaration?: EndpointDeclaration<App>;
}

/** A queue, or a topic subscription (each consumer of a topic has its own). */
export type ServiceBusSource = { queueName: string } | { topicName: string; subscriptionName: string };

/** A Service Bus trigger; an error it throws makes the message be delivered again, then dead-lettered. */
export interface ServiceBusFunctionDefinition {
  kind: 'serviceBus';
  name: string;
  source: ServiceBusSource;
  isSessionsEnabled: boolean;
  usesDurableClient?: boolean;
  /** Its work is part of the sender's (the chat turn is the POST's): its span continues that trace, not links it. */
  continuesTrace?: boolean;
  handler: (message: unknown, context: InvocationContext) => Promise<void>;
}

/** A timer trigger: the Functions host runs it on its schedule; the local runtime every `localIntervalMs`. */
export interface TimerFunctionDefinition {
  kind: 'timer';
  name: string;
  /** NCRONTAB, six fields with seconds first: `0 0 * * * *` is at the start of every hour. */
  schedule: string;
  /** How often the local runtime runs it (it reads no schedule). */
  localIntervalMs: number;
  handler: (timer: Timer, context: InvocationContext) => Promise<void>;
}

export interface OrchestrationDefinition {
  kind: 'orchestration';
  name: string;
  handler: df.OrchestrationHandler;
}

export interface ActivityDefinition {
  kind: 'activity';
  name: string;
  /** The activity calls `app.orchestrations(context)` (it purges other instances): bind a durable client input. */
  usesDurableClient?: boolean;
  handler: df.ActivityHandler;
}

export type FunctionDefinition =
  | HttpFunctionDefinition
  | ServiceBusFunctionDefinition
  | TimerFunctionDefinition
  | OrchestrationDefinition
  | ActivityDefinition;
