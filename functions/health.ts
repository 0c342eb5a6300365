// GET /api/health: the state of every dependency, 200 when all are up and 503 otherwise.
import type { z } from 'zod';
import { checkHealth, healthAnswerSchema } from '../shared/health.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const HEALTH_BUDGET_MS = 2_000;

export const healthEndpoint = endpoint({
  name: 'health',
  route: 'health',
  methods: ['GET'],
  summary: 'The state of every dependency: 200 when all answer, 503 otherwise.',
  auth: 'anonymous',
  responses: { 200: 'every dependency answers', 503: '`failing` names the dependencies that do not' },
  replies: { 200: healthAnswerSchema, 503: healthAnswerSchema },
  usesDurableClient: true,
  async handle({ app, context }) {
    const report = await checkHealth(app.healthChecks(context), HEALTH_BUDGET_MS);
    return {
      status: report.status === 'ok' ? 200 : 503,
      body: { ...report, environment: app.config.env } satisfies z.input<typeof healthAnswerSchema>,
    };
  },
});

export const healthFunctions: FunctionDefinition[] = [httpFunction(healthEndpoint)];
