// The closed id formats: every legitimate id passes, in its canonical spelling, and nothing that could become a
// dot segment, a path separator or a query in a URL does.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalId,
  chatMessageIdSchema,
  factIdSchema,
  ID_FORMATS,
  idSchema,
  isId,
  type IdKind,
} from './ids.js';
import { newFactId } from './memory/consolidate-turn.js';

/** What no id of any kind may be: dot segments (plain and encoded), separators, queries, fragments, controls. */
const HOSTILE = [
  '',
  '.',
  '..',
  '%2e',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '../x',
  'a/b',
  'a\\b',
  'a?b',
  'a#b',
  'a b',
  'a\u0000',
  'a\nb',
  ' user_001',
  'user_001 ',
  'x'.repeat(2000),
];

const LEGIT: Record<IdKind, string[]> = {
  modelId: ['gpt-5.4-mini', 'llama3:8b', 'scripted-model'],
  assistantId: ['asst-0123456789abcdef0123456789abcdef'],
  projectId: ['proj-0123456789abcdef0123456789abcdef'],
  userId: [
    'user_001',
    'user_003',
    // An Entra ID object id, and App Service principal ids of other providers (digits; Apple's dotted form).
    '0f8fad5b-d9cb-469f-a165-70867728950e',
    '0F8FAD5B-D9CB-469F-A165-70867728950E',
    '108365420563874123456',
    '001234.0f8fad5bd9cb469fa16570867728950e.1234',
    'alice@example.com',
  ],
  // UUIDs, and the AI SDK's 16-character ids that useChat gives a chat and its messages.
  sessionId: [
    '0f8fad5b-d9cb-469f-a165-70867728950e',
    '0F8FAD5B-D9CB-469F-A165-70867728950E',
    'aB3dE6gH9jK2mN5p',
  ],
  chatMessageId: ['0f8fad5b-d9cb-469f-a165-70867728950e', 'Zx81qWe4Rt7yUi0o'],
  factId: [newFactId('0f8fad5b-d9cb-469f-a165-70867728950e', '0f8fad5b-d9cb-469f-a165-70867728950f', 3)],
  documentId: ['0123456789abcdef0123456789abcdef'],
  // 128 random bits in base64url, as a share is given, and the extremes of the form.
  shareId: [randomBytes(16).toString('base64url'), 'AAAAAAAAAAAAAAAAAAAAAA', '-_-_-_-_-_-_-_-_-_-_-w'],
  // A user's server (random) and an operator's (its name).
  mcpServerId: [`mcp-${randomBytes(8).toString('hex')}`, 'mcp-op-github', 'mcp-op-jira_cloud-2'],
  // 128 random bits in hex, as POST /api/attachments gives them.
  attachmentId: [`att-${randomBytes(16).toString('hex')}`],
  // The id inside a personal API key, as the key's list shows it.
  apiKeyId: ['0123456789ab', 'ZZZZZZZZZZZZ', 'aB3dE6gH9jK2'],
};

describe('id formats', () => {
  it.each(Object.keys(ID_FORMATS) as IdKind[])(
    '%s admits its legitimate ids and refuses hostile ones',
    (kind) => {
      for (const id of LEGIT[kind]) expect(isId(kind, id), id).toBe(true);
      for (const id of HOSTILE) expect(isId(kind, id), JSON.stringify(id)).toBe(false);
      for (const id of HOSTILE) expect(idSchema(kind).safeParse(id).success, JSON.stringify(id)).toBe(false);
    },
  );

  it('keeps UUIDs in lower case and other ids as they are', () => {
    expect(chatMessageIdSchema.parse('0F8FAD5B-D9CB-469F-A165-70867728950E')).toBe(
      '0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    expect(canonicalId('userId', 'User_001')).toBe('User_001');
    expect(factIdSchema.parse('fact-0123456789abcdef')).toBe('fact-0123456789abcdef');
  });

  it('refuses ids of another kind and says what it expects', () => {
    expect(isId('factId', 'coffee')).toBe(false);
    expect(isId('factId', 'fact-0123456789ABCDEF')).toBe(false);
    expect(isId('documentId', '0123456789ABCDEF0123456789ABCDEF')).toBe(false);
    // 22 characters whose last one would carry bits beyond the 128.
    expect(isId('shareId', 'AAAAAAAAAAAAAAAAAAAAAB')).toBe(false);
    expect(isId('shareId', 'AAAAAAAAAAAAAAAAAAAAA')).toBe(false);
    expect(isId('sessionId', 'user_001')).toBe(false);
    // An AI SDK id has exactly 16 letters and digits, kept as spelled (it is case-sensitive).
    expect(isId('sessionId', 'aB3dE6gH9jK2mN5')).toBe(false);
    expect(isId('chatMessageId', 'aB3dE6gH9jK2mN5pq')).toBe(false);
    expect(isId('chatMessageId', 'aB3dE6gH9jK2mN5_')).toBe(false);
    expect(chatMessageIdSchema.parse('aB3dE6gH9jK2mN5p')).toBe('aB3dE6gH9jK2mN5p');
    const parsed = factIdSchema.safeParse('..');
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual([ID_FORMATS.factId.message]);
  });
});
