// (b) of the chat pipeline bench: content events per 1,000 tokens with coalescing and without, and the latency
// coalescing adds to each word, turn for turn on two runtimes.
import { randomUUID } from 'node:crypto';
import { SessionEvents, type TurnTrace } from './chat-clients.js';
import { mean, percentile, round, sumOf } from './figures.js';
import { check, idle, newUser, PLAN, reply, TURN_TIMEOUT_MS, type Target } from './pipeline-harness.js';

async function coalescingTurn(target: Target, words: number): Promise<TurnTrace> {
  const userId = newUser('coalescing');
  const sessionId = await target.api.startSession(userId);
  const events = await SessionEvents.connect(target.api, userId, sessionId);
  try {
    const chatMessageId = randomUUID();
    const trace = events.trace(chatMessageId);
    await target.api.postChat(userId, sessionId, chatMessageId, reply(words));
    await trace.finished(TURN_TIMEOUT_MS, `${target.name} turn`);
    check(trace, words);
    await idle(target);
    return trace;
  } finally {
    events.stop();
  }
}

/** Each word's arrival relative to the turn's first content event. */
function relativeArrivals(trace: TurnTrace): number[] {
  const first = trace.firstContentAt ?? Number.NaN;
  return trace.wordArrivals.map((at) => at - first);
}

export async function measureCoalescing(coalesced: Target, uncoalesced: Target) {
  const { rounds, words } = PLAN.coalescing;
  const turns = { coalesced: [] as TurnTrace[], uncoalesced: [] as TurnTrace[] };
  for (let r = 0; r < rounds; r += 1) {
    // ABBA order, so a drift in machine load weighs on both alike.
    if (r % 2 === 0) {
      turns.coalesced.push(await coalescingTurn(coalesced, words));
      turns.uncoalesced.push(await coalescingTurn(uncoalesced, words));
    } else {
      turns.uncoalesced.push(await coalescingTurn(uncoalesced, words));
      turns.coalesced.push(await coalescingTurn(coalesced, words));
    }
  }
  const perThousand = (traces: TurnTrace[], tokens: (trace: TurnTrace) => number) =>
    round((sumOf(traces, (t) => t.contentEvents) / sumOf(traces, tokens)) * 1000);
  const messages = (traces: TurnTrace[]) => ({
    contentEventsPer1000Tokens: perThousand(traces, (t) => t.wordArrivals.length),
    contentEventsPer1000ModelTokens: perThousand(traces, (t) => t.completionTokens ?? Number.NaN),
  });
  const differences = turns.coalesced.flatMap((trace, r) => {
    const other = turns.uncoalesced[r];
    if (!other) return [];
    const later = relativeArrivals(other);
    return relativeArrivals(trace).flatMap((at, i) => (later[i] === undefined ? [] : [at - later[i]]));
  });
  const settings = ({ runtime }: Target) => ({
    flushIntervalMs: runtime.ready.flushIntervalMs,
    flushMaxChars: runtime.ready.flushMaxChars,
  });
  return {
    turnsEach: rounds,
    replyWords: words,
    coalesced: { settings: settings(coalesced), ...messages(turns.coalesced) },
    uncoalesced: { settings: settings(uncoalesced), ...messages(turns.uncoalesced) },
    addedWordLatencyMs: {
      words: differences.length,
      mean: round(mean(differences)),
      p99: round(percentile(differences, 99)),
    },
  };
}
