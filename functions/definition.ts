// The shape of the one table of function definitions. The Functions host registers it with app.* and
// df.app.* (functions/index.ts); the local runtime mounts the same entries itself (local/runtime.ts).
import type { HttpHandler, HttpMethod, InvocationContext } from '@azure/functions';
import type * as df from 'durable-functions';

export interface HttpFunctionDefinition {
  kind: 'http';
  name: string;
  /** Route under /api, in the host's template syntax: `stream/{sessionId}/{chatMessageId}`. */
  route: string;
  methods: HttpMethod[];
  /** The handler calls `dependencies.orchestrations(context)`: bind a durable client input. */
  usesDurableClient?: boolean;
  handler: HttpHandler;
}

export type ServiceBusSource = { queueName: string } | { topicName: string; subscriptionName: string };

export interface ServiceBusFunctionDefinition {
  kind: 'serviceBus';
  name: string;
  source: ServiceBusSource;
  isSessionsEnabled: boolean;
  usesDurableClient?: boolean;
  handler: (message: unknown, context: InvocationContext) => Promise<void>;
}

export interface OrchestrationDefinition {
  kind: 'orchestration';
  name: string;
  handler: df.OrchestrationHandler;
}

export interface ActivityDefinition {
  kind: 'activity';
  name: string;
  handler: df.ActivityHandler;
}

export type FunctionDefinition =
  HttpFunctionDefinition | ServiceBusFunctionDefinition | OrchestrationDefinition | ActivityDefinition;
