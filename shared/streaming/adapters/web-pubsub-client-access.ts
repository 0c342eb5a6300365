// The Web PubSub adapter of ClientAccessIssuer: a client URL whose token names the user, joins the session's group
// as the connection opens (`webpubsub.group`) and allows joining and leaving that group alone (a client that left
// can come back), never any other group and never sending: a client of one session sees nothing of another.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { DependencyError } from '../../errors.js';
import type { ClientAccessIssuer } from '../client-access.js';
import { sessionGroup } from '../contracts.js';

export const CLIENT_TOKEN_MINUTES = 60;

export function createWebPubSubClientAccess(
  webPubSub: WebPubSubServiceClient,
  now: () => Date = () => new Date(),
): ClientAccessIssuer {
  return {
    async issue({ userId, sessionId }) {
      const issuedAt = now().getTime();
      const group = sessionGroup(sessionId);
      try {
        const { url } = await webPubSub.getClientAccessToken({
          userId,
          groups: [group],
          roles: [`webpubsub.joinLeaveGroup.${group}`],
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
