// (4) of the chat pipeline bench: the same batch of new sessions run again and again on one runtime, to show
// whether time, CPU or memory grow with what the runtime has already served.
import type OpenAI from 'openai';
import { percentile, ratio, round } from './figures.js';
import { PLAN, REPLY_WORDS, usage, type Target } from './pipeline-harness.js';
import { runBatch } from './session-batch.js';

export async function measureRepeatedBatches(target: Target, model: OpenAI) {
  const { batches, sessions } = PLAN.repeated;
  const rows = [];
  for (let b = 1; b <= batches; b += 1) {
    const samples = await runBatch(target, model, {
      label: `repeat${b}`,
      sessions,
      webPubSub: false,
      direct: false,
      directFirst: false,
    });
    const atRest = percentile(samples.modelAloneMs, 50);
    const after = await usage(target);
    rows.push({
      batch: b,
      wallMs: samples.wallMs,
      addedTtftP50Ms: round(percentile(samples.sseMs, 50) - atRest),
      addedTtftP99Ms: round(percentile(samples.sseMs, 99) - atRest),
      cpuMsPerTurn: samples.cpuMsPerTurn,
      runtimeRssMb: round(after.rssBytes / 2 ** 20, 0),
      tokensLost: samples.tokensLost,
      turnsDuplicated: samples.turnsDuplicated,
    });
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    batches,
    sessions,
    replyWords: REPLY_WORDS,
    rows,
    lastOverFirst: {
      wallMs: first && last ? ratio(last.wallMs, first.wallMs) : null,
      addedTtftP50: first && last ? ratio(last.addedTtftP50Ms, first.addedTtftP50Ms) : null,
    },
  };
}
