// The Web PubSub adapter of ClientAccessIssuer: a client URL whose token names the user and grants no roles, so the
// connection receives only what is sent to that user (and cannot join groups or send to them).
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { DependencyError } from '../../errors.js';
import type { ClientAccessIssuer } from '../client-access.js';

export const CLIENT_TOKEN_MINUTES = 60;

export function createWebPubSubClientAccess(
  webPubSub: WebPubSubServiceClient,
  now: () => Date = () => new Date(),
): ClientAccessIssuer {
  return {
    async issue(userId) {
      const issuedAt = now().getTime();
      try {
        const { url } = await webPubSub.getClientAccessToken({
          userId,
          roles: [],
          expirationTimeInMinutes: CLIENT_TOKEN_MINUTES,
        });
        return { url, expiresAt: new Date(issuedAt + CLIENT_TOKEN_MINUTES * 60_000).toISOString() };
      } catch (error) {
        throw new DependencyError('webPubSub', 'Could not issue a Web PubSub client token.', {
          cause: error,
        });
      }
    },
  };
}
