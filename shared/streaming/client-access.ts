// The port that lets a user's client connect to its live events: a client URL whose token names the user and
// grants no roles. Adapter: Web PubSub (adapters/web-pubsub-client-access.ts).
import type { ClientAccess } from './contracts.js';

export interface ClientAccessIssuer {
  /** A URL on which the user's client receives only what is sent to that user. */
  issue(userId: string): Promise<ClientAccess>;
}
