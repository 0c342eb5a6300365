// The librarian rule: the users and groups KNOWLEDGE_SHARED_LIBRARY names upload to the shared library, everyone
// else to their private one.
import { describe, expect, it } from 'vitest';
import { privateLibrary, SHARED_LIBRARY } from './contracts.js';
import { isLibrarian, libraryName, libraryOf, uploadLibrary } from './libraries.js';

const shared = { users: ['user_003'], groups: ['librarians'] };

describe('libraries', () => {
  it('makes a librarian of a named user or a member of a named group', () => {
    expect(isLibrarian({ userId: 'user_003' }, shared)).toBe(true);
    expect(isLibrarian({ userId: 'user_001', groups: ['staff', 'librarians'] }, shared)).toBe(true);
    expect(isLibrarian({ userId: 'user_001', groups: ['staff'] }, shared)).toBe(false);
    expect(isLibrarian({ userId: 'user_001' }, { users: [], groups: [] })).toBe(false);
  });

  it("sends a librarian's uploads to the shared library and anyone else's to their own", () => {
    expect(uploadLibrary({ userId: 'user_003' }, shared)).toBe(SHARED_LIBRARY);
    expect(uploadLibrary({ userId: 'user_001' }, shared)).toBe(privateLibrary('user_001'));
  });

  it('maps the API names to libraries and back', () => {
    expect(libraryOf('private', 'user_001')).toBe(privateLibrary('user_001'));
    expect(libraryOf('shared', 'user_001')).toBe(SHARED_LIBRARY);
    expect(libraryName(SHARED_LIBRARY)).toBe('shared');
    expect(libraryName(privateLibrary('user_001'))).toBe('private');
  });
});
