// How the local runtime hosts each kind of function definition, in place of the Functions host: HTTP
// functions go to the HTTP host, Service Bus triggers to the in-process broker, timers to an interval each,
// orchestrations and activities to the Durable driver.
import type * as df from 'durable-functions';
import type {
  FunctionDefinition,
  HttpFunctionDefinition,
  ServiceBusFunctionDefinition,
  TimerFunctionDefinition,
} from '../functions/definition.js';

export interface LocalFunctions {
  http: HttpFunctionDefinition[];
  serviceBus: ServiceBusFunctionDefinition[];
  timers: TimerFunctionDefinition[];
  orchestrations: Map<string, df.OrchestrationHandler>;
  activities: Map<string, df.ActivityHandler>;
}

export function sortFunctions(definitions: readonly FunctionDefinition[]): LocalFunctions {
  const sorted: LocalFunctions = {
    http: [],
    serviceBus: [],
    timers: [],
    orchestrations: new Map(),
    activities: new Map(),
  };
  for (const definition of definitions) {
    switch (definition.kind) {
      case 'http':
        sorted.http.push(definition);
        break;
      case 'serviceBus':
        sorted.serviceBus.push(definition);
        break;
      case 'timer':
        sorted.timers.push(definition);
        break;
      case 'orchestration':
        sorted.orchestrations.set(definition.name, definition.handler);
        break;
      case 'activity':
        sorted.activities.set(definition.name, definition.handler);
        break;
      default:
        unknownKind(definition);
    }
  }
  return sorted;
}

function unknownKind(definition: never): never {
  throw new Error(`The local runtime cannot host the function definition ${JSON.stringify(definition)}.`);
}
