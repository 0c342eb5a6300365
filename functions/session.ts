// POST /api/session/start: a new chat session owned by the caller.
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { z } from 'zod';
import { parseInput } from '../shared/chat/chat-message.js';
import { getDependencies } from '../shared/dependencies.js';
import { readJsonBody } from '../shared/http/json-body.js';
import { toProblemResponse } from '../shared/http/problem.js';
import { assertOwnUser } from '../shared/identity/caller.js';
import type { FunctionDefinition } from './definition.js';

const MAX_BODY_BYTES = 4 * 1024;

// Seed 000's clients name their user; the body may also be empty.
const startSessionBody = z
  .object(
    { userId: z.string({ error: 'must be a string' }).max(128).optional() },
    {
      error: 'the body must be a JSON object',
    },
  )
  .optional();

export async function startSession(
  request: HttpRequest,
  context: InvocationContext,
): Promise<HttpResponseInit> {
  try {
    const { identity, sessions } = await getDependencies();
    const caller = await identity.resolve(request.headers);
    const body = parseInput(
      startSessionBody,
      await readJsonBody(request, MAX_BODY_BYTES, { optional: true }),
      'session request',
    );
    assertOwnUser(caller, body?.userId);
    const session = await sessions.create(caller.userId);
    return { status: 201, headers: { 'cache-control': 'no-store' }, jsonBody: session };
  } catch (error) {
    return toProblemResponse(error, context, request.url);
  }
}

export const sessionFunctions: FunctionDefinition[] = [
  { kind: 'http', name: 'startSession', route: 'session/start', methods: ['POST'], handler: startSession },
];
