// The session start a new chat's choices make: only what was chosen is sent, and a temporary chat is in no project.
import { describe, expect, it } from 'vitest';
import { sessionStartOf } from './chat-choices';
import type { AssistantView } from './workspace-api';

const PIRATE: AssistantView = {
  assistantId: `asst-${'a'.repeat(32)}`,
  version: 2,
  name: 'Pirate',
  description: '',
  instructions: 'Answer like a pirate.',
  memory: 'user',
  starters: [],
  visibility: 'private',
  ownedByYou: true,
};
const PROJECT = `proj-${'b'.repeat(32)}`;

describe('sessionStartOf', () => {
  it('sends nothing for a plain new chat, so the catalogue default and full memory apply', () => {
    expect(sessionStartOf({ temporary: false }, undefined)).toEqual({});
  });

  it('names the model, the assistant and the project that were chosen', () => {
    expect(sessionStartOf({ model: 'deep', assistant: PIRATE, temporary: false }, PROJECT)).toEqual({
      model: 'deep',
      assistantId: PIRATE.assistantId,
      projectId: PROJECT,
    });
  });

  it('files a temporary chat in no project, as it is in no list', () => {
    expect(sessionStartOf({ temporary: true }, PROJECT)).toEqual({ temporary: true });
  });
});
