// GET /api/realtime/negotiate: the Web PubSub client URL through which the caller receives its own turns' events.
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { getDependencies } from '../shared/dependencies.js';
import { toProblemResponse } from '../shared/http/problem.js';
import { assertOwnUser } from '../shared/identity/caller.js';
import { negotiateClientAccess } from '../shared/streaming/client-access.js';
import type { FunctionDefinition } from './definition.js';

export async function negotiate(request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> {
  try {
    const { identity, webPubSub } = await getDependencies();
    const caller = await identity.resolve(request.headers);
    assertOwnUser(caller, request.query.get('userId'));
    const access = await negotiateClientAccess(webPubSub, caller.userId);
    return { status: 200, headers: { 'cache-control': 'no-store' }, jsonBody: access };
  } catch (error) {
    return toProblemResponse(error, context, request.url);
  }
}

export const realtimeFunctions: FunctionDefinition[] = [
  { kind: 'http', name: 'negotiate', route: 'realtime/negotiate', methods: ['GET'], handler: negotiate },
];
