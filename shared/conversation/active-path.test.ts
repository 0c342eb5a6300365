// Working memory along a branch path: the leaf, the branch a turn takes from it, what a commit does to the window
// (the turn's path only, the rest kept off the path), a move to another path, and when a digest fits a path.
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../errors.js';
import { forkBranch, gapsAfter } from './branch-path.js';
import {
  activeLeaf,
  continuationFrom,
  foundTurn,
  movePath,
  placeTurn,
  type PathState,
} from './active-path.js';
import { MAX_PATH_GAPS, type TurnBranch } from './branches.js';
import type { ConversationMessage } from './messages.js';

const main = (parent: string | null, gaps: TurnBranch['gaps'] = []): TurnBranch => ({
  parentChatMessageId: parent,
  branchId: 'main',
  gaps,
});

function turn(id: string, first: number, branch?: TurnBranch, text = `text of ${id}`): ConversationMessage[] {
  const messages: ConversationMessage[] = [
    {
      messageId: `${id}_user`,
      chatMessageId: id,
      role: 'user',
      content: text,
      timestamp: 't',
      ordinal: first,
    },
    {
      messageId: `${id}_assistant`,
      chatMessageId: id,
      role: 'assistant',
      content: `answer of ${id}`,
      timestamp: 't',
      ordinal: first + 1,
    },
  ];
  return branch ? messages.map((message) => ({ ...message, branch })) : messages;
}

/** Turn messages not committed yet: no ordinal, no branch. */
function fresh(id: string): ConversationMessage[] {
  return turn(id, 0).map(({ ordinal: _ordinal, ...message }) => message);
}

const BIG = Number.POSITIVE_INFINITY;

describe('the active path of working memory', () => {
  it('takes the leaf from the path, or from the newest turn of a window written before branches', () => {
    const old: PathState = { messages: [...turn('a', 0), ...turn('b', 2)], messageCount: 4 };
    expect(activeLeaf(old)).toEqual({ chatMessageId: 'b', branch: main('a'), lastOrdinal: 3 });
    // The worker had not stored the newest turn when the window was rebuilt: the main line still reaches it.
    expect(activeLeaf({ ...old, messageCount: 6 })?.lastOrdinal).toBe(5);
    const named: PathState = {
      ...old,
      path: { leafChatMessageId: 'a', branch: main(null) },
    };
    expect(activeLeaf(named)).toEqual({ chatMessageId: 'a', branch: main(null), lastOrdinal: 1 });
    expect(activeLeaf({ messages: [], messageCount: 0 })).toBeUndefined();
  });

  it('continues the newest turn with no gap, and skips what other branches committed since an older leaf', () => {
    const leaf = { chatMessageId: 'b', branch: main('a'), lastOrdinal: 3 };
    expect(continuationFrom(leaf, 4)).toEqual(main('b'));
    expect(continuationFrom(leaf, 10)).toEqual(main('b', [{ from: 4, to: 10 }]));
    expect(continuationFrom(undefined, 0)).toEqual(main(null));
    // A gap that ends where the new one starts grows instead of adding one.
    expect(gapsAfter([{ from: 2, to: 4 }], 1, 8)).toEqual([{ from: 2, to: 8 }]);
    const full = Array.from({ length: MAX_PATH_GAPS }, (_, i) => ({ from: i * 3, to: i * 3 + 1 }));
    expect(() => gapsAfter(full, MAX_PATH_GAPS * 3, MAX_PATH_GAPS * 3 + 5)).toThrow(ConflictError);
  });

  it('commits a continuation on the leaf: both messages take the branch and the next ordinals', () => {
    const state: PathState = { messages: [...turn('a', 0, main(null))], messageCount: 2 };
    const placed = placeTurn(state, fresh('b'), undefined, BIG);
    expect(placed.kind).toBe('placed');
    if (placed.kind !== 'placed') return;
    expect(placed.branch).toEqual(main('a'));
    expect(placed.state.messages.slice(2).map((m) => [m.ordinal, m.branch])).toEqual([
      [2, main('a')],
      [3, main('a')],
    ]);
    expect(placed.state.path).toEqual({ leafChatMessageId: 'b', branch: main('a'), lastOrdinal: 3 });
    expect(placed.state.messageCount).toBe(4);
    // A retried commit adds nothing.
    expect(placeTurn(placed.state, fresh('b'), undefined, BIG)).toEqual({ kind: 'unchanged' });
  });

  it('places a fork after its parent with a gap over the replaced turns, and refuses when the parent is not the leaf', () => {
    // a (0,1) → b (2,3) → c (4,5); c is regenerated as d: its parent b must be the leaf (the step moved there).
    const onB: PathState = {
      messages: [...turn('a', 0, main(null)), ...turn('b', 2, main('a'))],
      messageCount: 6,
      path: { leafChatMessageId: 'b', branch: main('a'), lastOrdinal: 3 },
      offPath: turn('c', 4, main('b')),
    };
    const decided = forkBranch({
      fork: { replaces: 'c', origin: 'regenerate' },
      newChatMessageId: 'd',
      replaced: main('b'),
      parent: { branch: main('a'), lastOrdinal: 3 },
      firstOrdinal: 6,
    });
    const placed = placeTurn(onB, fresh('d'), decided, BIG);
    if (placed.kind !== 'placed') throw new Error(placed.kind);
    const expected: TurnBranch = {
      parentChatMessageId: 'b',
      branchId: 'd',
      alternativeOf: 'c',
      origin: 'regenerate',
      gaps: [{ from: 4, to: 6 }],
    };
    expect(placed.branch).toEqual(expected);
    expect(placed.state.messages.map((m) => m.chatMessageId)).toEqual(['a', 'a', 'b', 'b', 'd', 'd']);
    expect(placed.state.offPath?.map((m) => m.messageId)).toEqual(['c_user', 'c_assistant']);
    // Another commit came first (the messages take 8 and 9): the gap reaches them too.
    const later = placeTurn({ ...onB, messageCount: 8 }, fresh('d'), decided, BIG);
    expect(later.kind === 'placed' && later.branch.gaps).toEqual([{ from: 4, to: 8 }]);
    // The user switched to c's branch meanwhile: the commit must move back to b first.
    const onC: PathState = { ...onB, path: { leafChatMessageId: 'c', branch: main('b'), lastOrdinal: 5 } };
    expect(placeTurn(onC, fresh('d'), decided, BIG)).toEqual({
      kind: 'parent-moved',
      parentChatMessageId: 'b',
    });
  });

  it('places a fork of the first turn alone on its path, keeping the rest off it', () => {
    const state: PathState = {
      messages: [...turn('a', 0, main(null)), ...turn('b', 2, main('a'))],
      messageCount: 4,
    };
    const decided = forkBranch({
      fork: { replaces: 'a', origin: 'edit' },
      newChatMessageId: 'e',
      replaced: main(null),
      parent: undefined,
      firstOrdinal: 4,
    });
    const placed = placeTurn(state, fresh('e'), decided, BIG);
    if (placed.kind !== 'placed') throw new Error(placed.kind);
    expect(placed.branch).toMatchObject({
      parentChatMessageId: null,
      branchId: 'e',
      gaps: [{ from: 0, to: 4 }],
    });
    expect(placed.state.messages.map((m) => m.chatMessageId)).toEqual(['e', 'e']);
    expect(placed.state.offPath?.map((m) => m.chatMessageId)).toEqual(['a', 'a', 'b', 'b']);
  });

  it('keeps the window and the off-path messages within their byte budget, newest whole turns first', () => {
    const long = (id: string, first: number) => turn(id, first, main(null), 'x'.repeat(400));
    const state: PathState = {
      messages: [...long('a', 0), ...long('b', 2), ...long('c', 4)],
      messageCount: 6,
    };
    const oneTurn = JSON.stringify(long('a', 0)).length + 200;
    const decided = forkBranch({
      fork: { replaces: 'a', origin: 'edit' },
      newChatMessageId: 'e',
      replaced: main(null),
      parent: undefined,
      firstOrdinal: 6,
    });
    const placed = placeTurn(state, fresh('e'), decided, oneTurn);
    if (placed.kind !== 'placed') throw new Error(placed.kind);
    expect(placed.state.offPath?.map((m) => m.chatMessageId)).toEqual(['c', 'c']);
  });

  it('moves to another path: its window, and what leaves it kept off the path unless history has it', () => {
    const state: PathState = {
      messages: [
        ...turn('a', 0, main(null)),
        ...turn('d', 6, { ...main('a'), branchId: 'd', gaps: [{ from: 2, to: 6 }] }),
      ],
      messageCount: 8,
      offPath: [...turn('b', 2, main('a')), ...turn('c', 4, main('b'))],
    };
    const leaf = { chatMessageId: 'c', branch: main('b'), lastOrdinal: 5 };
    const window = [...turn('a', 0, main(null)), ...turn('b', 2, main('a')), ...turn('c', 4, main('b'))];
    const moved = movePath(state, leaf, window, BIG);
    expect(moved.path).toEqual({ leafChatMessageId: 'c', branch: main('b'), lastOrdinal: 5 });
    expect(moved.messages).toBe(window);
    expect(moved.offPath?.map((m) => m.chatMessageId)).toEqual(['d', 'd']);
    expect(movePath(state, leaf, window, BIG, 8).offPath).toEqual([]);
  });

  it('finds a turn before branches on the main line, after the turn before it', () => {
    const [user, assistant] = turn('b', 2) as [
      ConversationMessage & { ordinal: number },
      ConversationMessage & { ordinal: number },
    ];
    expect(foundTurn([assistant, user], 'a')).toEqual({
      chatMessageId: 'b',
      messages: [user, assistant],
      firstOrdinal: 2,
      lastOrdinal: 3,
      branch: main('a'),
    });
    expect(foundTurn([assistant], 'a')).toBeUndefined();
  });
});
