// The development identities of the local runtime (the seed's hard-coded users). A caller names one with
// x-ms-client-principal-id, the header App Service authentication sets in Azure; config.ts refuses this
// mode outside the local runtime.
import { UnauthenticatedError } from '../errors.js';
import { readAppServicePrincipal } from './app-service-principal.js';
import type { Caller } from './caller.js';

export const DEV_USERS: readonly { userId: string; name: string; email: string }[] = Object.freeze([
  { userId: 'user_001', name: 'Alice Johnson', email: 'alice@example.com' },
  { userId: 'user_002', name: 'Bob Smith', email: 'bob@example.com' },
  { userId: 'user_003', name: 'Carol White', email: 'carol@example.com' },
]);

const devUserList = DEV_USERS.map((user) => `${user.userId} (${user.name})`).join(', ');

export function resolveDevCaller(headers: Headers): Caller {
  const { userId, groups } = readAppServicePrincipal(headers);
  if (userId === undefined)
    throw new UnauthenticatedError(
      `No dev identity: send the header "x-ms-client-principal-id: user_001" ` +
        `(or ${DEV_USERS.slice(1)
          .map((user) => user.userId)
          .join(', ')}).`,
    );
  const user = DEV_USERS.find((candidate) => candidate.userId === userId);
  if (user === undefined)
    throw new UnauthenticatedError(
      `Unknown dev user in x-ms-client-principal-id: the dev users are ${devUserList}.`,
    );
  // Groups come from a principal blob when a developer sends one (to try what a group grants, locally).
  return {
    userId: user.userId,
    name: user.name,
    identityProvider: 'dev',
    ...(groups.length > 0 ? { groups } : {}),
  };
}
