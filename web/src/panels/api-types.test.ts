// What the sidebar says of a conversation's size.
import { describe, expect, it } from 'vitest';
import { messagesLabel } from './api-types';

describe("a conversation's count", () => {
  it('is singular for one message only', () => {
    expect(messagesLabel(0)).toBe('0 messages');
    expect(messagesLabel(1)).toBe('1 message');
    expect(messagesLabel(2)).toBe('2 messages');
  });
});
