import { describe, expect, it } from 'vitest';
import { needsApproval } from './approval-policy.js';

describe('approval policy', () => {
  it.each([
    ['always', true, true],
    ['always', false, true],
    ['never', true, false],
    ['never', false, false],
    ['unless-read-only', true, false],
    ['unless-read-only', false, true],
  ] as const)('%s, read-only %s: needs approval %s', (policy, readOnly, expected) => {
    expect(needsApproval(policy, { readOnly })).toBe(expected);
  });
});
