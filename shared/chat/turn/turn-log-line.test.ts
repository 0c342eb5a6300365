import { describe, expect, it } from 'vitest';
import { turnLogLine } from './turn-log-line.js';

describe('turnLogLine', () => {
  it('names the session, the turn, how it ended, its tokens and its duration', () => {
    expect(
      turnLogLine({
        sessionId: 'sess_1',
        chatMessageId: 'msg_1',
        finishReason: 'stop',
        usage: { promptTokens: 812, completionTokens: 64, totalTokens: 876, cachedPromptTokens: 512 },
        rounds: 2,
        postedAt: '2026-01-01T10:00:00.000Z',
        endedAt: new Date('2026-01-01T10:00:02.345Z'),
      }),
    ).toBe(
      'Turn ended: session sess_1, turn msg_1, finish stop, tokens 812 in, 64 out, 512 cached, ' +
        '2.3 s since posted, 2 model rounds',
    );
  });

  it('leaves out reasoning and cached tokens the provider reported as 0', () => {
    const line = turnLogLine({
      sessionId: 's',
      chatMessageId: 'm',
      finishReason: 'stop',
      usage: {
        promptTokens: 10,
        completionTokens: 2,
        totalTokens: 12,
        reasoningTokens: 0,
        cachedPromptTokens: 0,
      },
      rounds: 1,
      postedAt: '2026-01-01T10:00:00.000Z',
      endedAt: new Date('2026-01-01T10:00:01.000Z'),
    });
    expect(line).toContain('tokens 10 in, 2 out, 1.0 s since posted');
  });

  it('says so when the provider reported no usage or the posting time is unreadable', () => {
    const line = turnLogLine({
      sessionId: 's',
      chatMessageId: 'm',
      finishReason: 'error',
      usage: undefined,
      rounds: 1,
      postedAt: 'not a date',
      endedAt: new Date(),
    });
    expect(line).toContain('tokens not reported');
    expect(line).toContain('duration unknown');
    expect(line).toContain('1 model round');
  });
});
