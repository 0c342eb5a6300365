// A turn frees its QUOTA_CONCURRENT_TURNS slot as it ends, before its end event is stored (so before any client can
// see it): answered, failed, or ended again by a rerun after a crash; a store failure there leaves it to the worker.
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryQuotaState } from '../../../test/support/in-memory-quota.js';
import {
  answerReply,
  Crash,
  input,
  ref,
  round0,
  ScriptedModel,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { quotaConfig, quotaSettings } from '../../quota/settings.js';
import { turnKey } from '../../quota/quota-state.js';
import { readSettings, SettingProblems, settingsOf } from '../../settings/setting.js';
import { isTerminalEvent } from '../../streaming/contracts.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import type { TurnServices } from './turn-services.js';

/** Records, at each release, whether the turn's end was already stored. */
class WatchedQuotaState extends MemoryQuotaState {
  readonly endStoredAtRelease: boolean[] = [];
  failReleases = false;
  constructor(private readonly fixture: TurnFixture) {
    super();
  }
  override releaseTurnSlot(userId: string, turn: string): Promise<void> {
    this.endStoredAtRelease.push(this.fixture.storedEvents().some(isTerminalEvent));
    if (this.failReleases) return Promise.reject(new Error('the quota store is down'));
    return super.releaseTurnSlot(userId, turn);
  }
}

const NOW = new Date('2026-11-21T10:00:05.000Z');
let t: TurnFixture;
let state: WatchedQuotaState;
let warnings: string[];

function services(limit = '1'): TurnServices {
  const problems = new SettingProblems(settingsOf(quotaSettings));
  const config = quotaConfig(readSettings(quotaSettings, { QUOTA_CONCURRENT_TURNS: limit }, problems));
  return {
    ...t.services(),
    quota: { config, state },
    log: { warn: (...args: unknown[]) => void warnings.push(args.map(String).join(' ')) },
  };
}

beforeEach(async () => {
  t = new TurnFixture();
  state = new WatchedQuotaState(t);
  warnings = [];
  await state.takeTurnSlot({ userId: ref.userId, turn: turnKey(ref), max: 1, leaseSeconds: 900, now: NOW });
});

describe("a turn's quota slot", () => {
  it('is freed by the answering round before message-end is stored', async () => {
    t.model = new ScriptedModel([answerReply]);
    expect((await llmStep(services(), round0)).outcome).toBe('answered');
    expect(state.endStoredAtRelease).toEqual([false]);
    expect(state.running(ref.userId, NOW)).toEqual([]);
    expect(t.storedEvents().at(-1)).toMatchObject({ type: 'message-end' });
  });

  it('is freed by a failed turn before its error event is stored', async () => {
    t.model = new ScriptedModel([{ reply: answerReply, crash: new Crash(2) }]);
    await expect(llmStep(services(), round0)).rejects.toThrow('died');
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    await failTurn(services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
    expect(state.endStoredAtRelease).toEqual([false]);
    expect(state.running(ref.userId, NOW)).toEqual([]);
    expect(t.storedEvents().at(-1)).toMatchObject({ type: 'error' });
  });

  it('is freed by the rerun that ends the stream of a turn committed just before a crash', async () => {
    t.model = new ScriptedModel([answerReply]);
    await llmStep(t.services(), round0);
    const all = t.storedEvents();
    for (const event of all.slice(all.length - 2)) t.events.stored.delete(event.seq);
    await llmStep(services(), round0);
    expect(state.endStoredAtRelease).toEqual([false]);
    expect(state.running(ref.userId, NOW)).toEqual([]);
  });

  it('is left to the chat worker when the quota store fails: the turn still ends', async () => {
    state.failReleases = true;
    t.model = new ScriptedModel([answerReply]);
    expect((await llmStep(services(), round0)).outcome).toBe('answered');
    expect(t.storedEvents().at(-1)).toMatchObject({ type: 'message-end' });
    expect(warnings).toEqual([expect.stringContaining('left to the chat worker')]);
  });

  it('is freed by the round that ends a turn admitted with a slot, though the limit is off by then', async () => {
    t.model = new ScriptedModel([answerReply]);
    expect((await llmStep(services('0'), { ...round0, quotaSlot: true })).outcome).toBe('answered');
    expect(state.running(ref.userId, NOW)).toEqual([]);
  });

  it('is freed by the failure of a turn admitted with a slot, though the limit is off by then', async () => {
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    const failed = {
      ...ref,
      userText: input.text,
      postedAt: input.postedAt,
      failure,
      quotaSlot: true as const,
    };
    await failTurn(services('0'), failed);
    expect(state.running(ref.userId, NOW)).toEqual([]);
  });

  it('is not looked for by a turn admitted without one while the limit is off', async () => {
    t.model = new ScriptedModel([answerReply]);
    expect((await llmStep(services('0'), round0)).outcome).toBe('answered');
    expect(state.endStoredAtRelease).toEqual([]);
  });
});
