// A memory notice from the live connection reaches the memory panel's listener; other messages do not.
import { describe, expect, it } from 'vitest';
import { onMemoryChanged, receiveServerMessage } from './memory-changes';

describe('memory notices', () => {
  it('reach each listener until it stops, and nothing else does', () => {
    const heard: string[] = [];
    const stop = onMemoryChanged((notice) => heard.push(notice.chatMessageId));
    const notice = {
      type: 'memory-changed',
      sessionId: 's',
      chatMessageId: 'm',
      summary: true,
      profile: false,
    };
    expect(receiveServerMessage(notice)).toBe(true);
    expect(receiveServerMessage([{ type: 'content' }])).toBe(false);
    expect(receiveServerMessage('memory-changed')).toBe(false);
    expect(receiveServerMessage({ type: 'memory-changed' })).toBe(false);
    stop();
    receiveServerMessage(notice);
    expect(heard).toEqual(['m']);
  });
});
