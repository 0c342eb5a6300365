// GET /api/health: the state of every dependency, 200 when all are up and 503 otherwise.
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { getDependencies } from '../shared/dependencies.js';
import { checkHealth } from '../shared/health.js';
import { toProblemResponse } from '../shared/http/problem.js';
import type { FunctionDefinition } from './definition.js';

const HEALTH_BUDGET_MS = 2_000;

export async function health(_request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> {
  try {
    const dependencies = await getDependencies();
    const report = await checkHealth(dependencies.healthChecks(context), HEALTH_BUDGET_MS);
    return {
      status: report.status === 'ok' ? 200 : 503,
      headers: { 'cache-control': 'no-store' },
      jsonBody: { ...report, environment: dependencies.config.env },
    };
  } catch (error) {
    return toProblemResponse(error, context);
  }
}

export const healthFunctions: FunctionDefinition[] = [
  {
    kind: 'http',
    name: 'health',
    route: 'health',
    methods: ['GET'],
    usesDurableClient: true,
    handler: health,
  },
];
