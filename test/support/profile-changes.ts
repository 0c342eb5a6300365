// A profile's facts and one turn's message, for the tests of deciding, applying and withdrawing profile changes:
// an earlier statement the facts come from, and the source and moment of the turn being consolidated.
import type { FactSource, ProfileFact } from '../../shared/memory/contracts.js';
import type { ApplyContext } from '../../shared/memory/profile-apply.js';

export const userId = 'user_001';
export const earlier: FactSource = {
  sessionId: 's0',
  chatMessageId: 'c0',
  messageId: 'c0_user',
  at: '2026-11-01T09:00:00.000Z',
};
export const source: FactSource = {
  sessionId: 's1',
  chatMessageId: 'c1',
  messageId: 'c1_user',
  at: '2026-11-22T10:00:00.000Z',
};
export const decidedAt = '2026-11-22T10:00:05.000Z';
export const context: ApplyContext = { userId, source, decidedAt };

export function fact(id: string, statement: string, extra: Partial<ProfileFact> = {}): ProfileFact {
  return {
    id,
    kind: 'fact',
    userId,
    category: 'interests',
    statement,
    status: 'active',
    validFrom: earlier.at,
    provenance: [earlier],
    createdAt: earlier.at,
    updatedAt: earlier.at,
    ...extra,
  };
}
