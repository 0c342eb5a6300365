// Who the page calls the API as: a React context holding the signed-in identity. The provider (the dev-user
// picker locally, Entra ID sign-in on Azure) sets it; everything that calls the API reads it with useIdentity().
import { createContext, createElement, useContext, useMemo, useState } from 'react';
import type { ReactNode } from 'react';

/**
 * The identity the page acts as.
 * - `userId`: the caller's id, as the API's `/users/{userId}/...` paths name it.
 * - `headers()`: the headers that authenticate one request; async so a provider can refresh a token first.
 */
export interface Identity {
  readonly userId: string;
  headers(): Promise<Record<string, string>>;
}

/** The header the local runtime's dev mode (and App Service authentication) reads the caller from. */
export const DEV_PRINCIPAL_HEADER = 'x-ms-client-principal-id';

/** The dev users the local runtime knows (its dev mode admits exactly these). */
export const DEV_USER_IDS: readonly string[] = ['user_001', 'user_002', 'user_003'];

export function devIdentity(userId: string): Identity {
  return { userId, headers: () => Promise.resolve({ [DEV_PRINCIPAL_HEADER]: userId }) };
}

interface IdentityState {
  readonly identity: Identity | undefined;
  /** Replaces the identity (a sign-in, a sign-out with undefined, another dev user picked). */
  readonly setIdentity: (identity: Identity | undefined) => void;
}

const IdentityContext = createContext<IdentityState | undefined>(undefined);

export function IdentityProvider(props: { initial?: Identity; children?: ReactNode }): ReactNode {
  const [identity, setIdentity] = useState<Identity | undefined>(props.initial);
  const value = useMemo(() => ({ identity, setIdentity }), [identity]);
  return createElement(IdentityContext.Provider, { value }, props.children);
}

/** The current identity (undefined before sign-in) and the setter the sign-in components use. */
export function useIdentityState(): IdentityState {
  const state = useContext(IdentityContext);
  if (state === undefined) throw new Error('useIdentity needs an <IdentityProvider> above it.');
  return state;
}

/** The signed-in identity, or undefined while nobody is signed in. */
export function useIdentity(): Identity | undefined {
  return useIdentityState().identity;
}

/** The dev user from ?user= (so a test or a bookmark can pick one), else the last one picked, else the first. */
export function initialDevUser(search: string, stored: string | null): string {
  const fromQuery = new URLSearchParams(search).get('user');
  if (fromQuery !== null && DEV_USER_IDS.includes(fromQuery)) return fromQuery;
  if (stored !== null && DEV_USER_IDS.includes(stored)) return stored;
  return DEV_USER_IDS[0] ?? 'user_001';
}
