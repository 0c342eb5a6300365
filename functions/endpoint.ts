// Declared HTTP endpoints of this app: `endpoint` infers an endpoint's types from its definition, and
// `httpFunction` makes it an entry of the function table, its handler bound to the process's app.
import { getApp, type App } from '../shared/app/app.js';
import {
  defineEndpoint,
  httpHandler,
  type EndpointAuth,
  type EndpointDefinition,
} from '../shared/http/endpoint.js';
import type { HttpFunctionDefinition } from './definition.js';

export const endpoint = defineEndpoint<App>();

export function httpFunction<P, Q, B, A extends EndpointAuth>(
  definition: EndpointDefinition<App, P, Q, B, A>,
): HttpFunctionDefinition {
  return {
    kind: 'http',
    name: definition.name,
    route: definition.route,
    methods: definition.methods,
    ...(definition.usesDurableClient === undefined
      ? {}
      : { usesDurableClient: definition.usesDurableClient }),
    handler: httpHandler(definition, getApp),
    declaration: {
      summary: definition.summary,
      auth: definition.auth,
      ...(definition.apiKeys === undefined ? {} : { apiKeys: definition.apiKeys }),
      ...(definition.errors === undefined ? {} : { errors: definition.errors }),
      ...(definition.params === undefined ? {} : { params: definition.params }),
      ...(definition.query === undefined ? {} : { query: definition.query }),
      ...(definition.body === undefined ? {} : { body: definition.body }),
      ...(definition.responses === undefined ? {} : { responses: definition.responses }),
      ...(definition.replies === undefined ? {} : { replies: definition.replies }),
      ...(definition.ticket === undefined ? {} : { ticketParameter: definition.ticket.queryParameter }),
    },
  };
}
