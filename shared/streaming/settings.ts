// How a turn's events are coalesced, how long an idle or unstarted SSE stream stays open, how many one user may
// hold, and how long a stream ticket opens one (STREAM_*, SSE_*).
import { defineSettings, intSetting, type SettingValues } from '../settings/setting.js';

const tuning = { kind: 'default' } as const;

export const streamingSettings = defineSettings({
  STREAM_FLUSH_INTERVAL_MS: intSetting({
    default: 50,
    help: 'Text deltas are coalesced into one event for at most this long (the first delta of a turn is sent at once).',
    azure: tuning,
  }),
  STREAM_FLUSH_MAX_CHARS: intSetting({
    default: 256,
    min: 1,
    help: 'A coalesced text event is sent as soon as it holds this many characters.',
    azure: tuning,
  }),
  SSE_IDLE_TIMEOUT_MS: intSetting({
    default: 120_000,
    help: 'An SSE stream that receives no event for this long ends; the client reconnects with Last-Event-ID.',
    azure: tuning,
  }),
  SSE_START_TIMEOUT_MS: intSetting({
    default: 30_000,
    min: 1_000,
    help:
      'An SSE stream of a turn that has no event yet (never posted, or still queued) ends after this long with a ' +
      '`stream-closed` event (reason `not-started`); a client that still expects the turn opens it again.',
    azure: tuning,
  }),
  STREAMS_PER_USER: intSetting({
    default: 20,
    help:
      "SSE streams (GET /api/stream and useChat's resume) one user may hold open at once, per app instance; one " +
      'more is refused with 429 until one ends. 0 = no cap.',
    azure: tuning,
  }),
  STREAM_TICKET_TTL_SECONDS: intSetting({
    default: 900,
    min: 10,
    max: 24 * 60 * 60,
    help:
      "How long the ticket in POST /api/chat's stream URL opens that turn's stream (a browser's EventSource " +
      'reconnects with it); a re-post of the same message gets a fresh one.',
    azure: tuning,
  }),
});

export interface StreamingConfig {
  flushIntervalMs: number;
  flushMaxChars: number;
  sseIdleTimeoutMs: number;
  sseStartTimeoutMs: number;
  /** 0: no cap. */
  streamsPerUser: number;
  ticketTtlSeconds: number;
}

export function streamingConfig(values: SettingValues<typeof streamingSettings>): StreamingConfig {
  return {
    flushIntervalMs: values.STREAM_FLUSH_INTERVAL_MS,
    flushMaxChars: values.STREAM_FLUSH_MAX_CHARS,
    sseIdleTimeoutMs: values.SSE_IDLE_TIMEOUT_MS,
    sseStartTimeoutMs: values.SSE_START_TIMEOUT_MS,
    streamsPerUser: values.STREAMS_PER_USER,
    ticketTtlSeconds: values.STREAM_TICKET_TTL_SECONDS,
  };
}
