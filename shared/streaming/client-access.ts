// The port that lets a user's client follow a session's live events: a client URL whose token names the user,
// joins the session's group as it connects, and may join or leave that group only (never send).
// Adapter: Web PubSub (adapters/web-pubsub-client-access.ts).
import type { ClientAccess } from './contracts.js';

export interface ClientAccessIssuer {
  /** A URL on which the client receives the live events of that session (the caller checked it is the user's). */
  issue(turn: { userId: string; sessionId: string }): Promise<ClientAccess>;
}
