// ERASE_USAGE_RECORDS=keep-anonymised end to end: "delete all my data" keeps each record of model calls for the
// operator's figures, under a one-way hash, and nothing left names the user or their conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { USAGE_CONTAINER } from '../../shared/usage/contracts.js';
import { ChatClient, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

describe('usage records on erase, kept anonymised', { timeout: 180_000 }, () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime({ settings: { ERASE_USAGE_RECORDS: 'keep-anonymised' } });
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
  }, 120_000);
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  const usageItems = async () =>
    (
      await runtime.clients.database
        .container(USAGE_CONTAINER)
        .items.query<Record<string, unknown>>('SELECT * FROM c')
        .fetchAll()
    ).resources;

  it('keeps the figures of each record and nothing that leads back to the user', async () => {
    const sessionId = await alice.startSession();
    const turn = await alice.send(sessionId, 'Hello there.');
    expect((await live.waitForTerminal(turn)).at(-1)).toMatchObject({ type: 'message-end' });
    await settle(runtime);
    const records = (await usageItems()).filter(
      (item) => item.type === 'usage' && item.userId === 'user_001',
    );
    expect(records.length).toBeGreaterThan(0);

    const erase = () =>
      fetch(`${runtime.url}/api/account/users/user_001/data`, { method: 'DELETE', headers: alice.headers() });
    expect((await erase()).status).toBe(204);
    // Again: the same copies, not a second set.
    expect((await erase()).status).toBe(204);

    const after = await usageItems();
    const text = JSON.stringify(after);
    expect(text).not.toContain('user_001');
    expect(text).not.toContain(sessionId);
    expect(text).not.toContain(turn);
    const kept = after.filter((item) => item.type === 'usage');
    expect(kept).toHaveLength(records.length);
    expect(new Set(kept.map((item) => item.userId)).size).toBe(1);
    expect(String(kept[0]?.userId)).toMatch(/^erased:[0-9a-f]{32}$/);
    // The figures themselves are those of the records that were erased.
    expect(kept.map((item) => JSON.stringify(item.jobs)).sort()).toEqual(
      records.map((item) => JSON.stringify(item.jobs)).sort(),
    );
    // Counters (per month, per conversation) are the user's, not figures of calls: they go.
    expect(after.filter((item) => item.type !== 'usage')).toEqual([]);
  });
});
