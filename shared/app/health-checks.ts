// The app's own health checks (Cosmos DB with every declared container, Web PubSub, the model, and the hot store's
// when it adds one), each answer cached for HEALTH_CACHE_MS; the platform adds its own beside them.
import type { Database } from '@azure/cosmos';
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { healthCache, type HealthCheck } from '../health.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { AppConfig } from './config.js';
import { cosmosContainers } from './cosmos-containers.js';

export interface HealthTargets {
  database: Database;
  webPubSub: WebPubSubServiceClient;
  llm: LlmGateway;
  /** The hot store's own checks: PING when Redis holds it, since a turn needs it as much as Cosmos DB. */
  hotStore: readonly HealthCheck[];
}

export function appHealthChecks(config: AppConfig, targets: HealthTargets): HealthCheck[] {
  const { database, webPubSub, llm } = targets;
  // Each check costs a request (eleven for Cosmos DB), so a poll within the cache time reuses the last answer.
  return [
    { name: 'cosmos', check: () => checkCosmos(database, config.cosmos.databaseId) },
    {
      name: 'webPubSub',
      check: async () => {
        await webPubSub.groupExists('health-probe');
        return `hub "${config.webPubSub.hub}" reachable`;
      },
    },
    {
      name: 'llm',
      check: async () => {
        // The probe lists the models and calls the route turns use (LLM_API) with a body every server refuses.
        const probe = await llm.probe();
        if (!probe.ok) throw new Error(probe.detail);
        // An anonymous caller learns that the model answers, not where it is.
        const api = config.llm.connection.api;
        return config.llm.provider === 'offline'
          ? `offline stand-in model reachable (${api})`
          : `${config.llm.provider} endpoint reachable (${api})`;
      },
    },
    ...targets.hotStore,
  ].map(healthCache(config.health.cacheMs));
}

/**
 * The database and every container the app declares: a container deleted (or never created) fails every request
 * that reaches it, so health must not call Cosmos DB up because the account and the database answer.
 */
async function checkCosmos(database: Database, databaseId: string): Promise<string> {
  await database.read();
  const reads = await Promise.allSettled(cosmosContainers.map(({ id }) => database.container(id).read()));
  const failed = cosmosContainers.flatMap(({ id }, index) => {
    const read = reads[index];
    return read?.status === 'rejected' ? [`"${id}" (${cosmosFailure(read.reason)})`] : [];
  });
  if (failed.length > 0)
    throw new Error(`database "${databaseId}": container ${failed.join(', ')} unreachable`);
  return `database "${databaseId}" and its ${cosmosContainers.length} containers reachable`;
}

function cosmosFailure(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 404) return 'not found';
  if (typeof code === 'number') return `status ${code}`;
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
}
