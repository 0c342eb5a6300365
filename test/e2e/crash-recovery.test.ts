// The crash test: clients chat while the built runtime is SIGKILLed at seeded random moments (mostly
// mid-answer) and restarted on the same data folder and port.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readCommittedAnswers,
  readDuplicateFacts,
  readMemoryTraces,
  readPersistedAnswers,
  sessionExists,
} from '../support/committed-answers.js';
import { buildRuntime, CrashableRuntime, sleep, StartFailure } from '../support/crashable-runtime.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  brief,
  followTurn,
  GaveUp,
  isTerminal,
  postMessage,
  Refused,
  replayTurn,
  startSession,
  time,
  type Backend,
  type FollowedTurn,
} from '../support/resilient-chat-client.js';
import { SeededRandom } from '../support/seeded-random.js';
import { assembleTurn, type StreamedEvent } from '../support/turn-assembly.js';

const SEED = Number(process.env.CRASH_TEST_SEED ?? '20250611');
const USERS = ['user_001', 'user_002', 'user_003'];
const SESSIONS = 5;
const TURNS_PER_SESSION = 4;
const TURNS = SESSIONS * TURNS_PER_SESSION;
/** An answer of 30-60 words takes the offline model about 1-2 s at this pace. */
const RUNTIME_SETTINGS = { OFFLINE_MODEL_TTFT_MS: '300', OFFLINE_MODEL_TOKENS_PER_SECOND: '40' };
/** No new 201, 202 or event anywhere for this long: the product is stuck, and the run ends. */
const QUIET_LIMIT_MS = 25_000;
/**
 * The run ends after this long with the runtime up, whatever happens (a passing run takes about a third of it);
 * restarts do not count, since a busy machine can take many seconds to bring the runtime back.
 */
const RUN_LIMIT_MS = 120_000;
/** A stored turn replays at once; only a turn whose end is missing keeps the stream open this long. */
/**
 * A turn that has text and no end, whose client received an event this recently, is streaming (its events come
 * about every 50 ms, in bursts when the machine is busy).
 */
const STREAMING_WINDOW_MS = 1000;
const REPLAY_TIMEOUT_MS = 5_000;

// --- The plan: every random choice is drawn from the seed before the run, so timing never changes it. ---

interface TurnPlan {
  words: number;
  /** Pause before posting, after the previous turn's 202: some turns are posted while the previous one streams. */
  delayMs: number;
}

interface KillPlan {
  /** The kill waits until this many turns have ended, so kills spread over the whole run. */
  afterEndedTurns: number;
  /** Then this long, counted from when the runtime was last started. */
  afterUpMs: number;
  /** Then, if set, until some answer is streaming (bounded), and `extraMs` more. */
  midAnswer: boolean;
  extraMs: number;
  /** How long the runtime stays down. */
  downMs: number;
}

interface Plan {
  sessions: { userId: string; startDelayMs: number; turns: TurnPlan[] }[];
  kills: KillPlan[];
}

function drawPlan(random: SeededRandom): Plan {
  const sessions = Array.from({ length: SESSIONS }, (_, s) => ({
    userId: USERS[s % USERS.length]!,
    startDelayMs: random.int(0, 400),
    turns: Array.from({ length: TURNS_PER_SESSION }, () => ({
      words: random.int(30, 60),
      delayMs: random.int(0, 1500),
    })),
  }));
  const killCount = random.int(3, 5);
  // One band of the run per kill, by turns ended; the last band ends with many turns still to come, so every
  // planned kill finds work to interrupt.
  const band = Math.floor((TURNS * 0.6) / killCount);
  const kills = Array.from({ length: killCount }, (_, k) => ({
    afterEndedTurns: random.int(k * band, (k + 1) * band - 1),
    afterUpMs: random.int(300, 2500),
    midAnswer: k === 0 || k === killCount - 1 || random.chance(0.75),
    extraMs: random.int(0, 150),
    downMs: random.int(100, 1200),
  }));
  return { sessions, kills };
}

// --- What the run records. ---

interface TurnRun {
  label: string;
  chatMessageId: string;
  text: string;
  words: number;
  postLog: string[];
  acceptedAtMs?: number;
  stream?: string;
  /** Live state, for the kill schedule and the watchdog. */
  lastSeq: number;
  /** Whether the client has text of this turn, and when it last received an event of it (run clock). */
  hasContent: boolean;
  lastEventAtMs: number;
  ended: boolean;
  followed?: FollowedTurn;
  /** Why the client stopped short: a refusal (4xx) or the end of the run. */
  stoppedShort?: string;
}

interface SessionRun {
  label: string;
  userId: string;
  sessionId?: string;
  createdAtMs?: number;
  log: string[];
  stoppedShort?: string;
  turns: TurnRun[];
}

interface KillRecord {
  atMs: number;
  midAnswer: boolean;
  /** The turns streaming at that moment, with the last seq their client had. */
  streaming: string[];
  upAgainAtMs?: number;
}

describe('the assembly rule of the streaming protocol', () => {
  it('joins content deltas in seq order and leaves out what a discard voids', () => {
    const events: StreamedEvent[] = [
      { type: 'message-start', seq: 1 },
      { type: 'content', seq: 2, delta: 'Hel' },
      { type: 'content', seq: 4, delta: 'wrld' },
      { type: 'content', seq: 3, delta: 'lo ' },
      { type: 'discard', seq: 5, fromSeq: 3, toSeq: 4 },
      { type: 'content', seq: 6, delta: 'lo world' },
      { type: 'message-end', seq: 7, finishReason: 'stop' },
    ];
    expect(assembleTurn(events)).toEqual({
      text: 'Hello world',
      reasoning: '',
      voided: [3, 4],
      problems: [],
    });
    expect(assembleTurn([{ type: 'discard', seq: 2, fromSeq: 2, toSeq: 3 }]).problems).toHaveLength(1);
  });
});

describe('crash recovery of the running product', () => {
  let entry: string;
  let folder: string;
  let runtime: CrashableRuntime | undefined;

  beforeAll(async () => {
    entry = buildRuntime();
    folder = await mkdtemp(join(tmpdir(), 'chat-crash-'));
  });
  afterAll(async () => {
    await runtime?.kill();
    await rm(folder, { recursive: true, force: true });
  });

  it('finishes every answer, exactly once and as streamed, through SIGKILLs at random moments', async () => {
    const random = new SeededRandom(SEED);
    const plan = drawPlan(random);
    const dataDir = join(folder, 'data');
    const crashable = new CrashableRuntime({ entry, cwd: folder, dataDir, settings: RUNTIME_SETTINGS });
    runtime = crashable;
    const run = new AbortController();
    const runProblems: string[] = [];
    const kills: KillRecord[] = [];
    let lastProgressAtMs = 0;
    const progress = () => (lastProgressAtMs = crashable.now());

    const sessions: SessionRun[] = plan.sessions.map((sessionPlan, s) => ({
      label: `s${s + 1}`,
      userId: sessionPlan.userId,
      log: [],
      turns: sessionPlan.turns.map((turnPlan, t) => ({
        label: `s${s + 1}t${t + 1}`,
        chatMessageId: randomUUID(),
        text: `reply with ${turnPlan.words} words (turn ${t + 1} of session ${s + 1})`,
        words: turnPlan.words,
        postLog: [],
        lastSeq: 0,
        hasContent: false,
        lastEventAtMs: -Infinity,
        ended: false,
      })),
    }));
    const turns = sessions.flatMap((session) => session.turns);
    const endedTurns = () => turns.filter((turn) => turn.ended).length;
    const allEnded = () => endedTurns() === TURNS;
    /** Turns whose text is arriving right now. */
    const streamingNow = () =>
      turns.filter(
        (turn) =>
          !turn.ended && turn.hasContent && crashable.now() - turn.lastEventAtMs < STREAMING_WINDOW_MS,
      );

    await crashable.start();
    const backend: Backend = { url: () => crashable.url, now: () => crashable.now(), signal: run.signal };

    // Planned restarts and restarts after the runtime ended on its own share one path.
    let restarting: Promise<void> | undefined;
    let downMs = 0;
    const restart = (): Promise<void> =>
      (restarting ??= (async () => {
        const downSince = crashable.now();
        try {
          await startAgain();
        } finally {
          downMs += crashable.now() - downSince;
        }
      })().finally(() => (restarting = undefined)));
    async function startAgain(): Promise<void> {
      for (let attempt = 1; !crashable.up && !run.signal.aborted; attempt++) {
        try {
          await crashable.start();
          // The quiet limit counts from here: a slow start on a busy machine is no sign of a stuck product.
          progress();
        } catch (error) {
          if (!(error instanceof StartFailure)) throw error;
          runProblems.push(`restart ${attempt} at ${time(crashable.now())} failed: ${error.message}`);
          if (attempt === 5) run.abort();
          else await sleep(1000);
        }
      }
    }

    const until = async (condition: () => boolean, limitMs = Infinity) => {
      const deadline = Date.now() + limitMs;
      while (!condition() && !run.signal.aborted && Date.now() < deadline) await sleep(20);
    };

    async function crashOnSchedule(): Promise<void> {
      let upSince = crashable.now();
      for (const kill of plan.kills) {
        await until(() => endedTurns() >= kill.afterEndedTurns);
        await sleep(Math.max(0, upSince + kill.afterUpMs - crashable.now()));
        if (kill.midAnswer) await until(() => streamingNow().length > 0 || allEnded(), 15_000);
        await sleep(kill.extraMs);
        if (allEnded() || run.signal.aborted) return;
        const record: KillRecord = {
          atMs: crashable.now(),
          midAnswer: kill.midAnswer,
          streaming: streamingNow().map((turn) => `${turn.label}@${turn.lastSeq}`),
        };
        kills.push(record);
        await (restarting ?? Promise.resolve());
        await crashable.kill();
        await sleep(kill.downMs);
        await restart();
        record.upAgainAtMs = upSince = crashable.now();
      }
    }

    async function keepRunning(): Promise<void> {
      while (!run.signal.aborted) {
        if (
          !crashable.up &&
          restarting === undefined &&
          kills.every((kill) => kill.upAgainAtMs !== undefined)
        )
          await restart();
        await sleep(100);
      }
    }

    async function watch(): Promise<void> {
      while (!run.signal.aborted) {
        const now = crashable.now();
        if (now - lastProgressAtMs > QUIET_LIMIT_MS) {
          runProblems.push(`nothing happened for ${QUIET_LIMIT_MS / 1000} s: the run ended at ${time(now)}`);
          run.abort();
        } else if (now - downMs > RUN_LIMIT_MS) {
          runProblems.push(`the run reached its limit of ${RUN_LIMIT_MS / 1000} s`);
          run.abort();
        }
        await sleep(100);
      }
    }

    async function chat(session: SessionRun, sessionPlan: Plan['sessions'][number]): Promise<void> {
      await sleep(sessionPlan.startDelayMs);
      try {
        const started = await startSession(backend, session.userId, session.log);
        session.sessionId = started.sessionId;
        session.createdAtMs = started.atMs;
        progress();
      } catch (error) {
        session.stoppedShort = stoppedShort(error);
        for (const turn of session.turns) turn.ended = true;
        return;
      }
      const following: Promise<void>[] = [];
      for (const [t, turn] of session.turns.entries()) {
        await sleep(sessionPlan.turns[t]!.delayMs);
        try {
          const accepted = await postMessage(
            backend,
            session.userId,
            { sessionId: session.sessionId, chatMessageId: turn.chatMessageId, text: turn.text },
            turn.postLog,
          );
          turn.stream = accepted.stream;
          turn.acceptedAtMs = accepted.atMs;
          progress();
        } catch (error) {
          turn.stoppedShort = stoppedShort(error);
          turn.ended = true;
          continue;
        }
        following.push(
          followTurn(backend, session.userId, turn.stream, (event) => {
            progress();
            turn.lastSeq = Math.max(turn.lastSeq, event.seq);
            turn.lastEventAtMs = crashable.now();
            if (event.type === 'content') turn.hasContent = true;
          }).then((followed) => {
            turn.followed = followed;
            turn.ended = true;
            if (followed.refused !== undefined) turn.stoppedShort = `refused: ${followed.refused}`;
          }),
        );
      }
      await Promise.all(following);
    }

    const chats = Promise.all(sessions.map((session, s) => chat(session, plan.sessions[s]!)));
    const background = Promise.all([crashOnSchedule(), keepRunning(), watch()]);
    await chats;
    run.abort();
    await background;
    runProblems.push(
      ...crashable.unexpectedExits.map(
        (exit) =>
          `the runtime ended on its own at ${time(exit.atMs)} (${exit.code ?? exit.signal}):\n${indent(exit.stderrTail)}`,
      ),
    );

    // A client that joins late reads each turn from its first event, on the last runtime.
    if (!crashable.up)
      await crashable
        .start()
        .catch((error: unknown) => runProblems.push(`no runtime to replay from: ${String(error)}`));
    const replays = new Map(
      await Promise.all(
        sessions.flatMap((session) =>
          session.turns.map(async (turn) => {
            const replay =
              turn.stream === undefined || !crashable.up
                ? undefined
                : await replayTurn(crashable.url!, session.userId, turn.stream, REPLAY_TIMEOUT_MS);
            return [turn, replay] as const;
          }),
        ),
      ),
    );
    if ((await crashable.stop()) === 'killed') runProblems.push('the last runtime did not stop on SIGTERM');

    // What was committed, read from the data folder by a runtime started in this process.
    const reader = await startTestRuntime({ dataDir });
    const committed = new Map<SessionRun, Map<string, string[]>>();
    const persisted = new Map<SessionRun, Awaited<ReturnType<typeof readPersistedAnswers>>>();
    const stored = new Map<SessionRun, boolean>();
    const remembered = new Map<SessionRun, Awaited<ReturnType<typeof readMemoryTraces>>>();
    const duplicateFacts: string[] = [];
    try {
      // The history worker finishes what the killed runtimes left queued.
      await settle(reader);
      for (const session of sessions) {
        if (session.sessionId === undefined) continue;
        const database = reader.clients.database;
        stored.set(session, await sessionExists(database, session.userId, session.sessionId));
        committed.set(session, await readCommittedAnswers(reader, session.sessionId));
        persisted.set(session, await readPersistedAnswers(database, session.userId, session.sessionId));
        remembered.set(session, await readMemoryTraces(database, session.userId, session.sessionId));
      }
      for (const userId of USERS)
        for (const duplicate of await readDuplicateFacts(reader.clients.database, userId))
          duplicateFacts.push(`${userId} holds the active fact "${duplicate}" more than once`);
    } finally {
      await reader.stop();
    }

    // --- The verdict. ---
    const failures: string[] = [...duplicateFacts];
    const failedTurns: Problem[][] = [];
    for (const session of sessions) {
      if (session.stoppedShort !== undefined)
        failures.push(`${session.label} (${session.userId}): no session: ${session.stoppedShort}`);
      else if (stored.get(session) === false)
        failures.push(
          `${session.label} (${session.userId}): 201 at ${time(session.createdAtMs!)}, but the session is not stored after the run`,
        );
      // Long-term history holds every committed answer once, as committed, and counts every message.
      const history = persisted.get(session);
      if (history !== undefined && history.messageCount !== history.persistedCount)
        failures.push(
          `${session.label}: the history header counts ${history.messageCount} messages but ${history.persistedCount} were persisted`,
        );
      // Long-term memory took in each answered turn once: one summary counting them, one record of each turn's
      // profile changes.
      const answered = committed.get(session)?.size ?? 0;
      const memory = remembered.get(session);
      if (
        memory !== undefined &&
        answered > 0 &&
        (memory.exchanges !== answered || memory.consolidations !== answered)
      )
        failures.push(
          `${session.label}: long-term memory took in ${memory.exchanges ?? 0} exchange(s) in its summary and recorded ${memory.consolidations} turn(s) of profile changes for ${answered} answered turn(s)`,
        );
      for (const turn of session.turns) {
        const answers = committed.get(session)?.get(turn.chatMessageId) ?? [];
        const kept = history?.answers.get(turn.chatMessageId) ?? [];
        if (answers.length > 0 && JSON.stringify(kept) !== JSON.stringify(answers))
          failures.push(
            `${turn.label}: long-term history holds ${kept.length} answer(s) ${kept.map(quote).join(', ')} for the committed ${answers.map(quote).join(', ')}`,
          );
        const problems = judgeTurn(turn, replays.get(turn), answers);
        if (problems.length === 0) continue;
        failedTurns.push(problems);
        const timeline = [
          ...turn.postLog,
          turn.acceptedAtMs === undefined ? 'never accepted' : `${time(turn.acceptedAtMs)} 202`,
          ...(turn.followed?.log ?? []),
        ];
        failures.push(
          [
            `${turn.label} (${session.userId}, ${turn.chatMessageId.slice(0, 8)}, ${turn.words} words):`,
            ...problems.map((problem) => `  - ${problem.text}`),
            `  timeline: ${timeline.slice(-8).join('; ')}`,
          ].join('\n'),
        );
      }
    }

    const header = [
      `seed ${SEED} (CRASH_TEST_SEED), ${TURNS} turns in ${SESSIONS} sessions, run ${time(crashable.now())}`,
      `kills: ${kills.map(describeKill).join('; ') || 'none'}`,
    ];
    expect(
      failures.length + runProblems.length,
      [
        `${failedTurns.length} of ${TURNS} turns failed: ${tally(failedTurns) || '-'}`,
        ...header,
        ...runProblems,
        ...failures,
      ].join('\n'),
    ).toBe(0);
    // What the run went through, for the record: how often a crashed round was voided and streamed anew.
    const discarded = sessions
      .flatMap((session) => session.turns)
      .filter((turn) =>
        [...(turn.followed?.events.values() ?? [])].some((event) => event.type === 'discard'),
      );
    console.warn(`${header.join('\n')}\nturns that streamed a discard: ${discarded.length} of ${TURNS}`);
    // A passing verdict means something only if the run did crash the runtime, mid-answer too.
    expect(kills.length, header.join('\n')).toBeGreaterThanOrEqual(3);
    expect(
      kills.some((kill) => kill.streaming.length > 0),
      header.join('\n'),
    ).toBe(true);
  }, 420_000);
});

/** One thing wrong with a turn: a short kind (for the tally) and the line that shows expected vs got. */
interface Problem {
  kind: string;
  text: string;
}

/** Everything wrong with one turn. */
function judgeTurn(
  turn: TurnRun,
  replay: { events: StreamedEvent[]; outcome: string } | undefined,
  committed: string[],
): Problem[] {
  const problems: Problem[] = [];
  const note = (kind: string, text: string) => problems.push({ kind, text });
  if (turn.stoppedShort !== undefined)
    note('client refused or stopped', `the client stopped short: ${turn.stoppedShort}`);
  const followed = turn.followed;
  if (turn.stream === undefined || followed === undefined) {
    if (committed.length > 0)
      note('answered unasked', `never 202'd, yet ${committed.length} answer(s) committed`);
    return problems;
  }
  const live = [...followed.events.values()].sort((a, b) => a.seq - b.seq);
  const terminals = live.filter(isTerminal);
  if (terminals.length === 0)
    note('no terminal event', `expected a terminal event, got none (last event: ${brief(live.at(-1))})`);
  else if (terminals.length > 1)
    note('several terminal events', `expected one terminal event, got ${terminals.map(brief).join(', ')}`);
  for (const terminal of terminals)
    if (terminal.type !== 'message-end')
      note(
        `ended with ${terminal.type} ${String(terminal.code)}`,
        `expected message-end, got ${brief(terminal)}`,
      );
  for (const anomaly of followed.anomalies) note('stream anomaly', anomaly);
  const missing = live.length > 0 ? gaps(live) : [];
  if (missing.length > 0) note('gap in the live stream', `the client never received seqs ${ranges(missing)}`);

  if (replay === undefined) note('no replay', 'no replay');
  else {
    if (replay.outcome !== 'ended')
      note('replay did not end', `the replay did not end cleanly: ${replay.outcome}`);
    const difference = firstDifference(live, replay.events);
    if (difference !== undefined)
      note(
        'live ≠ replay',
        `live ≠ replay: live ${live.length} events (${ranges(live.map((e) => e.seq))}), replay ${replay.events.length} (${ranges(replay.events.map((e) => e.seq))}); first difference: ${describeDifference(difference.live, difference.replay)}`,
      );
  }

  const shown = assembleTurn(live);
  for (const problem of shown.problems) note('protocol', problem);
  if (committed.length === 0)
    note(
      'no committed answer',
      `expected one committed answer, found none (the client shows ${quote(shown.text)})`,
    );
  else if (committed.length > 1)
    note('duplicate answers', `expected one committed answer, found ${committed.length}`);
  const answer = committed[0];
  if (answer !== undefined && answer !== shown.text)
    note('shown ≠ committed', `shown text ≠ committed answer: ${textDifference(shown.text, answer)}`);
  const words = answer?.split(/\s+/).filter(Boolean).length ?? 0;
  if (answer !== undefined && words !== turn.words)
    note(
      'incomplete answer',
      `the committed answer has ${words} words; the offline model answers with ${turn.words}`,
    );
  return problems;
}

/** "no committed answer ×5, live ≠ replay ×3": how many turns each kind of problem hit. */
function tally(problemsByTurn: Problem[][]): string {
  const counts = new Map<string, number>();
  for (const problems of problemsByTurn)
    for (const kind of new Set(problems.map((problem) => problem.kind)))
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, count]) => `${kind} ×${count}`)
    .join(', ');
}

function firstDifference(
  live: StreamedEvent[],
  replay: StreamedEvent[],
): { live: StreamedEvent | undefined; replay: StreamedEvent | undefined } | undefined {
  for (let i = 0; i < Math.max(live.length, replay.length); i++)
    if (!isDeepStrictEqual(live[i], replay[i])) return { live: live[i], replay: replay[i] };
  return undefined;
}

/** The two events in a line each; when their type and text agree, the fields that differ. */
function describeDifference(live: StreamedEvent | undefined, replay: StreamedEvent | undefined): string {
  if (live === undefined || replay === undefined || brief(live) !== brief(replay))
    return `live ${brief(live)} vs replay ${brief(replay)}`;
  const fields = [...new Set([...Object.keys(live), ...Object.keys(replay)])].filter(
    (field) => !isDeepStrictEqual(live[field], replay[field]),
  );
  const show = (value: unknown) => JSON.stringify(value)?.slice(0, 120) ?? 'absent';
  return `${brief(live)}: ${fields.map((field) => `${field} live ${show(live[field])} vs replay ${show(replay[field])}`).join('; ')}`;
}

function gaps(events: StreamedEvent[]): number[] {
  const have = new Set(events.map((event) => event.seq));
  const last = Math.max(...have);
  return Array.from({ length: last }, (_, i) => i + 1).filter((seq) => !have.has(seq));
}

/** 1,2,3,5 → "1..3,5". */
function ranges(seqs: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < seqs.length;) {
    let j = i;
    while (j + 1 < seqs.length && seqs[j + 1] === seqs[j]! + 1) j++;
    parts.push(i === j ? `${seqs[i]}` : `${seqs[i]}..${seqs[j]}`);
    i = j + 1;
  }
  return parts.join(',') || 'none';
}

function textDifference(shown: string, committed: string): string {
  let at = 0;
  while (at < shown.length && shown[at] === committed[at]) at++;
  const around = (text: string) => quote(text.slice(Math.max(0, at - 12), at + 24));
  return `${shown.length} vs ${committed.length} characters, first difference at ${at}: shown ${around(shown)} vs committed ${around(committed)}`;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

function describeKill(kill: KillRecord): string {
  const what =
    kill.streaming.length > 0
      ? `mid-answer: ${kill.streaming.join(' ')}`
      : kill.midAnswer
        ? 'meant mid-answer, but no answer was streaming at that moment'
        : 'meant between answers';
  return `${time(kill.atMs)} (${what}; up again ${kill.upAgainAtMs === undefined ? 'never' : time(kill.upAgainAtMs)})`;
}

function stoppedShort(error: unknown): string {
  if (error instanceof Refused) return `refused ${error.message}`;
  if (error instanceof GaveUp) return error.message;
  throw error;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
