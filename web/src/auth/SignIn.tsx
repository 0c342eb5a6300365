// The header's sign-in control, for whichever identity mode the deployment uses: a picker of the dev users
// locally, Entra ID sign-in (MSAL), or App Service authentication's login; it sets the page's identity.
import { useEffect, useId, useState } from 'react';
import type { ReactNode } from 'react';
import { appServiceLoginUrl, appServiceLogoutUrl, appServiceUser } from './app-service-sign-in';
import { DEV_USER_KEY, loadClientConfig } from './client-config';
import type { ClientConfig, DevUser } from './client-config';
import { startEntraSession } from './entra-sign-in';
import type { EntraSession } from './entra-sign-in';
import { DEV_USER_IDS, devIdentity, initialDevUser, useIdentityState } from './identity';

type State =
  | { kind: 'loading' }
  | { kind: 'failed'; message: string }
  | { kind: 'dev'; users: DevUser[] }
  | { kind: 'entra'; session: EntraSession }
  | { kind: 'app-service'; config: NonNullable<ClientConfig['appService']>; name: string | undefined };

/** `apiBase`: where /api lives, '' on the page's own origin. */
export function SignIn(props: { apiBase?: string }): ReactNode {
  const apiBase = props.apiBase ?? '';
  const { identity, setIdentity } = useIdentityState();
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    let current = true;
    const settle = (next: State) => {
      if (current) setState(next);
    };
    void (async () => {
      try {
        const config = await loadClientConfig(apiBase);
        if (config.authMode === 'dev') {
          const users = config.devUsers ?? DEV_USER_IDS.map((userId) => ({ userId, name: userId }));
          if (current) setIdentity(devIdentity(pickDevUser(users)));
          settle({ kind: 'dev', users });
          return;
        }
        if (config.authMode === 'entra') {
          const clientId = config.entra?.clientId;
          if (config.entra === undefined || clientId === undefined) {
            settle({
              kind: 'failed',
              message:
                'Entra ID sign-in is not set up: AUTH_ENTRA_AUDIENCE names no app registration client id.',
            });
            return;
          }
          const session = await startEntraSession({ ...config.entra, clientId });
          if (current && session.identity !== undefined) setIdentity(session.identity);
          settle({ kind: 'entra', session });
          return;
        }
        const appService = config.appService ?? {
          loginUrl: '/.auth/login/aad',
          logoutUrl: '/.auth/logout',
          meUrl: '/.auth/me',
        };
        const user = await appServiceUser(appService.meUrl);
        if (current && user !== undefined) setIdentity(user.identity);
        settle({ kind: 'app-service', config: appService, name: user?.name });
      } catch (error) {
        settle({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
      }
    })();
    return () => {
      current = false;
    };
  }, [setIdentity, apiBase]);

  switch (state.kind) {
    case 'loading':
      return <span className="muted text-sm">Signing in…</span>;
    case 'failed':
      return (
        <span className="alert text-sm" role="alert">
          {state.message}
        </span>
      );
    case 'dev':
      return (
        <DevUserPicker
          users={state.users}
          userId={identity?.userId}
          onPick={(userId) => {
            window.localStorage.setItem(DEV_USER_KEY, userId);
            setIdentity(devIdentity(userId));
          }}
        />
      );
    case 'entra':
      return state.session.identity === undefined ? (
        <button type="button" className="btn btn-primary" onClick={() => void state.session.signIn()}>
          Sign in
        </button>
      ) : (
        <span className="flex min-w-0 items-center gap-1.5 text-sm">
          <span className="hidden truncate sm:inline">{state.session.name ?? 'Signed in'}</span>
          <button
            type="button"
            className="btn btn-quiet btn-small"
            onClick={() => void state.session.signOut()}
          >
            Sign out
          </button>
        </span>
      );
    case 'app-service':
      return state.name === undefined ? (
        <a
          className="flex min-w-0 items-center gap-1.5 text-sm"
          href={appServiceLoginUrl(state.config.loginUrl)}
        >
          Sign in
        </a>
      ) : (
        <span className="flex min-w-0 items-center gap-1.5 text-sm">
          <span className="hidden truncate sm:inline">{state.name}</span>
          <a href={appServiceLogoutUrl(state.config.logoutUrl)}>Sign out</a>
        </span>
      );
  }
}

/** Locally: which dev user the page acts as (the runtime's dev mode admits exactly these). */
export function DevUserPicker(props: {
  users: DevUser[];
  userId: string | undefined;
  onPick: (userId: string) => void;
}): ReactNode {
  const id = useId();
  return (
    <span className="flex min-w-0 items-center gap-1.5 text-sm">
      <label htmlFor={id} className="max-sm:sr-only">
        Dev user
      </label>
      <select
        id={id}
        className="w-full max-w-[7.5rem] truncate sm:max-w-[12rem]"
        value={props.userId ?? ''}
        onChange={(event) => props.onPick(event.target.value)}
      >
        {props.userId === undefined ? <option value="">Pick a user</option> : null}
        {props.users.map((user) => (
          <option key={user.userId} value={user.userId}>
            {user.name} ({user.userId})
          </option>
        ))}
      </select>
    </span>
  );
}

/** The dev user from ?user= (a test or a bookmark picks one), else the one picked last time, else the first. */
function pickDevUser(users: readonly DevUser[]): string {
  const known = (userId: string | null) => users.some((user) => user.userId === userId);
  const fromQuery = new URLSearchParams(window.location.search).get('user');
  if (known(fromQuery) && fromQuery !== null) return fromQuery;
  const stored = window.localStorage.getItem(DEV_USER_KEY);
  if (known(stored) && stored !== null) return stored;
  return users[0]?.userId ?? initialDevUser(window.location.search, stored);
}
