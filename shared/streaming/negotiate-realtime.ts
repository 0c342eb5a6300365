// GET /api/realtime/negotiate's use-case: a Web PubSub client URL that follows one of the caller's own sessions.
// Another user's session is reported exactly like an unknown one (404), so a session id reveals nothing.
import { requireSession } from '../conversation/require-session.js';
import type { SessionStore } from '../conversation/session-store.js';
import type { Caller } from '../identity/caller.js';
import type { ClientAccessIssuer } from './client-access.js';
import type { ClientAccess } from './contracts.js';

export interface NegotiateRealtimeServices {
  sessions: SessionStore;
  clientAccess: ClientAccessIssuer;
}

export async function negotiateRealtime(
  services: NegotiateRealtimeServices,
  caller: Caller,
  sessionId: string,
): Promise<ClientAccess> {
  await requireSession(services.sessions, caller, sessionId);
  return services.clientAccess.issue({ userId: caller.userId, sessionId });
}
