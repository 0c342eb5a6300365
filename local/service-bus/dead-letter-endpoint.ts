// Local runtime only: GET /local/dead-letters lists every dead-lettered message with its reason, as the
// portal's Service Bus Explorer shows an entity's dead-letter queue in Azure.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpMount } from '../http/http-host.js';
import type { LocalServiceBus, MessageSource } from './local-service-bus.js';

const DEAD_LETTERS_PATH = '/local/dead-letters';

function entityPath(source: MessageSource): string {
  return 'queueName' in source
    ? source.queueName
    : `${source.topicName}/subscriptions/${source.subscriptionName}`;
}

export function createDeadLetterEndpoint(bus: LocalServiceBus, sources: readonly MessageSource[]): HttpMount {
  return {
    handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (path !== DEAD_LETTERS_PATH) return Promise.resolve(false);
      if (req.method !== 'GET') {
        res.writeHead(405, { allow: 'GET' }).end();
        return Promise.resolve(true);
      }
      const entities = sources.map((source) => ({
        entity: entityPath(source),
        deadLetters: bus.deadLetters(source).map((message) => ({
          messageId: message.messageId,
          sessionId: message.sessionId,
          deliveryCount: message.deliveryCount,
          enqueuedTimeUtc: message.enqueuedTimeUtc.toISOString(),
          deadLetterReason: message.deadLetterReason,
          deadLetterErrorDescription: message.deadLetterErrorDescription,
          body: message.body,
        })),
      }));
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ entities }));
      return Promise.resolve(true);
    },
  };
}
