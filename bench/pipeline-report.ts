// The chat pipeline bench's printer: each section's figures as the lines of the report, and the whole run's
// results written to bench/results/.
import { mkdir, writeFile } from 'node:fs/promises';
import { format, resolveConfig } from 'prettier';
import { printAzureLatency, type AzureLatencyResults } from './azure-latency.js';
import type { measureCoalescing } from './coalescing.js';
import type { ConcurrencyRow } from './concurrency.js';
import type { measureTurnCost } from './conversation-cost.js';
import { round, type Percentiles } from './figures.js';
import type { integrity } from './pipeline-harness.js';
import { PLAN, QUICK, reply, REPLY_WORDS } from './pipeline-harness.js';
import type { measureRepeatedBatches } from './repeated-batches.js';
import { printTurnPrices } from './turn-price.js';

/** The local-runtime batch size the issue sets its targets at: p99 ≤ 1 s and ≤ 2× the direct baseline's. */
const TARGET_SESSIONS = PLAN.concurrency[1];
const RESULTS_FILE = QUICK ? 'bench/results/chat-pipeline-quick.json' : 'bench/results/chat-pipeline.json';

export type Results = {
  quick: boolean;
  machine: { cpus: number; node: string; note: string };
  model: { ttftMs: number; tokensPerSecond: number; where: string };
  azureLatency: AzureLatencyResults;
  concurrency: ConcurrencyRow[];
  coalescing: Awaited<ReturnType<typeof measureCoalescing>>;
  turnCost: Awaited<ReturnType<typeof measureTurnCost>>;
  repeatedBatches: Awaited<ReturnType<typeof measureRepeatedBatches>>;
  integrity: typeof integrity;
};

const ms = (value: number | undefined) => (value === undefined ? '—' : `${value.toFixed(1)} ms`);
const pct = (p: Percentiles | undefined) => (p ? `p50 ${ms(p.p50)}, p99 ${ms(p.p99)}` : '—');
const times = (value: number | null) => (value === null ? 'n/a (baseline adds ~0)' : `${value}×`);
const row = (label: string, value: string | number) => console.log(`    ${label.padEnd(58)} ${value}`);

export function printConcurrency(rows: ConcurrencyRow[]): void {
  console.log(
    `\n(a)(c) Time to first token added around the model: POST → first content − model alone at rest ` +
      `("${reply(REPLY_WORDS)}", one message per session, all posted at once)`,
  );
  for (const r of rows) {
    const batches = r.batches > 1 ? ` (${r.batches} batches, one after another)` : '';
    console.log(`  ${r.sessions} session${r.sessions > 1 ? 's' : ''} at once${batches}`);
    row('model alone at rest (interleaved with the batches)', pct(r.modelAloneMs));
    if (r.modelAtConcurrencyMs) row(`model alone, ${r.sessions} calls at once`, pct(r.modelAtConcurrencyMs));
    row('added: direct baseline (one HTTP function → SSE)', pct(r.addedMs.direct));
    row('added: pipeline, SSE client (opened when POST returned)', pct(r.addedMs.sse));
    if (r.addedMs.webSocket)
      row('added: pipeline, Web PubSub client (connected before)', pct(r.addedMs.webSocket));
    const ratios = r.addedRatioOverDirect;
    row(
      'pipeline added ÷ baseline added (SSE p50 / SSE p99 / WS p50)',
      `${times(ratios.sseP50)} / ${times(ratios.sseP99)} / ${times(ratios.webSocketP50)}`,
    );
    if (r.sessions === TARGET_SESSIONS) {
      const within = (limit: number) => (r.addedMs.sse.p99 <= limit ? 'yes' : 'no');
      row(
        'target: SSE added p99 ≤ 1 s / ≤ 2× the direct baseline p99',
        `${within(1000)} / ${within(2 * r.addedMs.direct.p99)}`,
      );
    }
    row('POST → message-start (queue, worker, prepareTurn)', pct(r.postToMessageStartMs));
    row(
      'runtime CPU per turn: pipeline (until idle) / direct',
      `${r.cpuMsPerTurn.pipeline} ms / ${r.cpuMsPerTurn.direct ?? '—'} ms`,
    );
    row(
      'runtime event-loop utilisation while streaming',
      `${(r.runtimeEventLoopUtilisation * 100).toFixed(0)} %`,
    );
    row('most turns streaming at once (seen by SSE clients)', r.peakTurnsStreaming);
    row('wall time (first POST → last message-end)', `${r.wallMs} ms`);
    row('SSE streams reopened with Last-Event-ID (ended before the turn)', r.sseReconnects);
    row(
      'tokens lost / turns duplicated / incomplete / replies missing',
      `${r.tokensLost} / ${r.turnsDuplicated} / ${r.turnsIncomplete} / ${r.assistantRepliesMissing}`,
    );
    for (const error of r.errors) row('  error events', error);
  }
}

function printCoalescing(c: Results['coalescing']): void {
  const settings = (s: { flushIntervalMs: number; flushMaxChars: number }) =>
    `(flush ${s.flushIntervalMs} ms / ${s.flushMaxChars} chars)`;
  console.log(`\n(b) Coalescing: "${reply(c.replyWords)}", ${c.turnsEach} turn(s) per runtime, interleaved`);
  console.log('    content events per 1,000 tokens (tokens = words; per 1,000 model tokens in brackets)');
  const perThousand = (m: { contentEventsPer1000Tokens: number; contentEventsPer1000ModelTokens: number }) =>
    `${m.contentEventsPer1000Tokens} (${m.contentEventsPer1000ModelTokens})`;
  row(`  coalescing ${settings(c.coalesced.settings)}`, perThousand(c.coalesced));
  row(`  no coalescing ${settings(c.uncoalesced.settings)}`, perThousand(c.uncoalesced));
  const saved = c.uncoalesced.contentEventsPer1000Tokens / c.coalesced.contentEventsPer1000Tokens;
  row('  events saved by coalescing', `${saved.toFixed(1)}× fewer`);
  console.log(
    `    latency coalescing adds to each word (coalescing − none, ${c.addedWordLatencyMs.words} words)`,
  );
  row('  per-word difference', `mean ${ms(c.addedWordLatencyMs.mean)}, p99 ${ms(c.addedWordLatencyMs.p99)}`);
}

export function printTurnCost(t: Results['turnCost']): void {
  console.log(
    `\n(3) Cost of one turn along one conversation of ${t.turns} turns (fast model; each turn measured ` +
      `from its POST until the runtime is idle again, background work included; ${t.wallMs} ms in all)`,
  );
  const header = [
    'turn',
    'wall ms',
    'cosmos req',
    'cosmos bytes',
    'WPS sends',
    'WPS bytes',
    'replays',
    'activities',
    'CPU ms',
  ];
  console.log(`    ${header.map((h) => h.padStart(13)).join('')}`);
  for (const c of [...t.costs, t.windows.first, t.windows.last]) {
    const cells = [
      'label' in c ? `mean ${String(c.label)}` : c.turn,
      c.wallMs,
      c.cosmosRequests,
      round(c.cosmosRequestBytes + c.cosmosResponseBytes),
      c.webPubSubSends,
      c.webPubSubSendBytes,
      c.durableReplays,
      c.durableActivities,
      c.cpuMs,
    ];
    console.log(`    ${cells.map((cell) => String(cell).padStart(13)).join('')}`);
  }
  for (const r of [t.lastOverFirst, t.windows.lastOverFirst])
    row(
      `turn ${r.turns}: Cosmos requests / bytes / wall / WPS sends / replays / CPU`,
      [r.cosmosRequests, r.cosmosBytes, r.wallMs, r.webPubSubSends, r.durableReplays, r.cpuMs]
        .map(times)
        .join(' / '),
    );
  console.log('    Cosmos requests (bytes, request units) by container and operation');
  const places = [...new Set(t.costs.flatMap((c) => Object.keys(c.cosmosByContainer)))].sort();
  for (const place of places) {
    row(
      `  ${place}`,
      t.costs
        .map((c) => {
          const entry = c.cosmosByContainer[place];
          return `t${c.turn}: ${entry?.requests ?? 0} (${entry?.bytes ?? 0} B, ${round(entry?.requestUnits ?? 0)} RU)`;
        })
        .join('  '),
    );
  }
  console.log('    Cosmos requests by operation');
  const operations = [...new Set(t.costs.flatMap((c) => Object.keys(c.cosmosByOperation)))].sort();
  for (const operation of operations) {
    row(
      `  ${operation}`,
      t.costs.map((c) => `t${c.turn}: ${c.cosmosByOperation[operation] ?? 0}`).join('  '),
    );
  }
  for (const c of t.costs) {
    const { serviceBus, taskHub } = c.billed ?? {};
    row(`  turn ${c.turn}: Service Bus operations`, JSON.stringify(serviceBus));
    row(`  turn ${c.turn}: task-hub events`, JSON.stringify(taskHub));
  }
  printTurnPrices(
    'Azure cost of one turn without the model, per 1,000 turns (USD, pay-as-you-go; check your region):',
    t.costs.map((c) => ({ label: `turn ${c.turn}`, price: c.price })),
  );
  printTurnPrices(
    `The same, averaged over turns ${t.windows.first.label} and ${t.windows.last.label}:`,
    [t.windows.first, t.windows.last].map((w) => ({ label: w.label, price: w.price })),
    t.taskHubPolling,
  );
}

function printRepeated(r: Results['repeatedBatches']): void {
  console.log(
    `\n(4) The same batch (${r.sessions} new sessions, one message each) ${r.batches} times on one runtime`,
  );
  for (const b of r.rows) {
    row(
      `  batch ${b.batch}`,
      `wall ${b.wallMs} ms, added TTFT p50 ${ms(b.addedTtftP50Ms)} (p99 ${ms(b.addedTtftP99Ms)}), ` +
        `CPU ${b.cpuMsPerTurn} ms/turn, RSS ${b.runtimeRssMb} MB, lost ${b.tokensLost}, dup ${b.turnsDuplicated}`,
    );
  }
  row(
    'last ÷ first: wall time / added TTFT p50',
    `${times(r.lastOverFirst.wallMs)} / ${times(r.lastOverFirst.addedTtftP50)}`,
  );
}

export function printReport(r: Results): void {
  console.log(
    `\nChat turn core benchmark${r.quick ? ' (BENCH_QUICK: smoke sizes)' : ''}: offline model at TTFT ` +
      `${r.model.ttftMs} ms and ${r.model.tokensPerSecond} tokens/s (${r.model.where}); ` +
      `${r.machine.cpus} CPUs, Node ${r.machine.node}`,
  );
  console.log(`  ${r.machine.note}`);
  printAzureLatency(r.azureLatency);
  printConcurrency(r.concurrency);
  printCoalescing(r.coalescing);
  printTurnCost(r.turnCost);
  printRepeated(r.repeatedBatches);
  const i = r.integrity;
  console.log(`\nIntegrity over all ${i.turnsChecked} turn streams (Web PubSub and SSE)`);
  row('tokens lost / extra', `${i.tokensLost} / ${i.tokensExtra}`);
  row('turns duplicated / failed', `${i.turnsDuplicated} / ${i.turnsFailed}`);
  row('rejections left unhandled in a runtime (npm start exits)', i.runtimeUnhandledRejections);
}

export async function writeResults(results: Results): Promise<void> {
  await mkdir('bench/results', { recursive: true });
  const options = (await resolveConfig(RESULTS_FILE)) ?? {};
  await writeFile(RESULTS_FILE, await format(JSON.stringify(results), { ...options, parser: 'json' }));
  console.log(`\nWritten to ${RESULTS_FILE}`);
}
