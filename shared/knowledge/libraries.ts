// Which library a caller's documents go to and which they read: a librarian (a user, or a member of a group, that
// KNOWLEDGE_SHARED_LIBRARY names) fills the shared library every user can search; everyone else's documents stay
// in their private library, which only they can see, search and delete.
import { privateLibrary, SHARED_LIBRARY, type LibraryName } from './contracts.js';
import type { KnowledgeConfig } from './settings.js';

/** Who is asking: their user id and the groups their identity names (Entra ID group object ids). */
export interface LibraryCaller {
  userId: string;
  groups?: readonly string[];
}

/** Whether the caller's uploads go to the shared library. */
export function isLibrarian(caller: LibraryCaller, shared: KnowledgeConfig['sharedLibrary']): boolean {
  if (shared.users.includes(caller.userId)) return true;
  return (caller.groups ?? []).some((group) => shared.groups.includes(group));
}

/** The library the caller's uploads go to. */
export function uploadLibrary(caller: LibraryCaller, shared: KnowledgeConfig['sharedLibrary']): string {
  return isLibrarian(caller, shared) ? SHARED_LIBRARY : privateLibrary(caller.userId);
}

/** The library the API's `private` or `shared` names, for this caller. */
export function libraryOf(name: LibraryName, userId: string): string {
  return name === 'shared' ? SHARED_LIBRARY : privateLibrary(userId);
}

/** What the API calls a stored library. */
export function libraryName(library: string): LibraryName {
  return library === SHARED_LIBRARY ? 'shared' : 'private';
}
