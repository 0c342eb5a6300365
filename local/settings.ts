// Settings of the local runtime itself (port, data folder, log level, CORS, the offline model's pace), as rows like
// the app's, and the local.settings.json file that Functions Core Tools also reads: its Values apply unless the
// environment sets the same name.
import { readFile } from 'node:fs/promises';
import type { LogLevel } from '@azure/functions';
import { z } from 'zod';
import { parseCorsOrigins } from './http/cors.js';
import {
  choiceSetting,
  ConfigError,
  defineSettings,
  intSetting,
  readSettings,
  settingsOf,
  SettingProblems,
  textSetting,
  type Environment,
  type SettingRow,
} from '../shared/settings/setting.js';

const localOnly = { kind: 'never', reason: 'Local runtime only.' } as const;
const offlineOnly = {
  kind: 'never',
  reason: 'The offline stand-in model exists only in the local runtime.',
} as const;

/** The names people write for each level (Functions, npm, log4j, syslog habits), matched without case. */
const LOG_LEVEL_SPELLINGS: Readonly<Record<string, LogLevel>> = {
  trace: 'trace',
  verbose: 'trace',
  debug: 'debug',
  information: 'information',
  info: 'information',
  warning: 'warning',
  warn: 'warning',
  error: 'error',
  err: 'error',
  critical: 'critical',
  fatal: 'critical',
  none: 'none',
  off: 'none',
  silent: 'none',
};

/** The least severe level printed: the Functions host's names, or their common spellings. */
function logLevelSetting(): SettingRow<LogLevel> {
  return {
    help:
      'Local runtime: least severe log level printed: trace, debug, information (default: one line per turn ' +
      'and per background job), warning, error, critical or none; info, warn, off and the like work too.',
    sample: 'information',
    applies: 'local-only',
    azure: localOnly,
    defaultText: 'information',
    schema: z
      .string()
      .optional()
      .transform((text, context): LogLevel => {
        if (text === undefined) return 'information';
        const level = LOG_LEVEL_SPELLINGS[text.toLowerCase()];
        if (level !== undefined) return level;
        context.addIssue({
          code: 'custom',
          message: 'must be trace, debug, information (info), warning (warn), error, critical or none (off)',
        });
        return z.NEVER;
      }),
  };
}

export const localRuntimeSettings = defineSettings({
  PORT: intSetting({
    default: 7071,
    max: 65_535,
    error: 'must be a port number',
    help: 'Local runtime: HTTP port (default 7071, the Functions host default; 0 picks a free one).',
    applies: 'local-only',
    azure: localOnly,
  }),
  LOCAL_DATA_DIR: textSetting({
    default: '.local-data',
    help: 'Local runtime: folder where Cosmos DB data, queued messages and orchestrations are kept across restarts.',
    applies: 'local-only',
    azure: localOnly,
  }),
  LOG_LEVEL: logLevelSetting(),
  LOCAL_WEB_ROOT: textSetting({
    default: 'dist/web',
    help:
      'Local runtime: folder of the built web client served at / (`npm start` builds it there when web/ changed); ' +
      'relative to the working folder.',
    applies: 'local-only',
    azure: { kind: 'never', reason: 'In Azure the web client is a Static Web App of its own.' },
  }),
  CORS_ALLOWED_ORIGINS: textSetting({
    default: '',
    pattern: [
      /^(\*|https?:\/\/[^\s/,]+\/?)(\s*,\s*(\*|https?:\/\/[^\s/,]+\/?))*$/,
      'must be origins such as http://localhost:5173, separated by commas, or *',
    ],
    help:
      'Local runtime: browser origins allowed to call the API, comma-separated (e.g. http://localhost:5173), or * ' +
      "for any; empty = none. In Azure the function app's CORS does this (infra parameter corsAllowedOrigins).",
    applies: 'local-only',
    azure: {
      kind: 'never',
      reason: "In Azure the function app's CORS setting does this: set infra's corsAllowedOrigins parameter.",
    },
  }),
  LOCAL_ALLOWED_HOSTS: textSetting({
    default: '',
    pattern: [
      /^[A-Za-z0-9.-]+(\s*,\s*[A-Za-z0-9.-]+)*$/,
      'must be host names such as devbox.internal, separated by commas (no scheme or port)',
    ],
    help:
      'Local runtime: host names, comma-separated, that requests may name in their Host header besides localhost, ' +
      '127.0.0.1 and [::1] (any other is refused with 403, so a web page cannot reach the runtime by DNS rebinding).',
    applies: 'local-only',
    azure: localOnly,
  }),
  OFFLINE_MODEL_TTFT_MS: intSetting({
    default: 200,
    help: 'Local runtime: the offline model waits this long before its first token.',
    applies: 'local-only',
    azure: offlineOnly,
  }),
  OFFLINE_MODEL_TOKENS_PER_SECOND: intSetting({
    default: 60,
    help: 'Local runtime: the offline model streams at this rate (0 = as fast as possible).',
    applies: 'local-only',
    azure: offlineOnly,
  }),
  LOCAL_COSMOS_THREAD: choiceSetting(['worker', 'caller'], {
    default: 'worker',
    help:
      'Local runtime: where the local Cosmos DB server runs: "worker" (default) a worker thread of its own, off ' +
      "the app's event loop; \"caller\" the app's thread, which starts about a second sooner (the test suite's " +
      'in-process runtimes use it).',
    applies: 'local-only',
    azure: localOnly,
  }),
  LOCAL_AZURE_LATENCY: choiceSetting(['off', 'azure'], {
    default: 'off',
    help:
      'Local runtime: "azure" makes the local Service Bus, task hub, Web PubSub and Cosmos DB answer as late as ' +
      'their Azure counterparts do for an app in the same region (seeded draws; docs/latency-model.md gives ' +
      'the figures and their sources); "off" (default) answers at once.',
    applies: 'local-only',
    azure: { kind: 'never', reason: 'In Azure the services have their own latency.' },
  }),
  LOCAL_AZURE_LATENCY_SEED: intSetting({
    default: 1,
    max: 2_147_483_647,
    help: 'Local runtime, LOCAL_AZURE_LATENCY=azure: the seed of every latency draw (same seed, same draws).',
    applies: 'local-only',
    azure: localOnly,
  }),
  LOCAL_AZURE_TASK_HUB: choiceSetting(['azure-storage', 'durable-task-scheduler'], {
    default: 'azure-storage',
    help:
      'Local runtime, LOCAL_AZURE_LATENCY=azure: the task-hub backend whose dispatch is imitated: ' +
      '"azure-storage" (default: queues polled at host.json\'s maxQueuePollingInterval) or ' +
      '"durable-task-scheduler" (work pushed over a gRPC stream).',
    applies: 'local-only',
    azure: { kind: 'never', reason: "In Azure host.json's durableTask.storageProvider chooses the backend." },
  }),
});

export interface LocalRuntimeSettings {
  port: number;
  dataDir: string;
  /** The built web client's folder, served at `/`. */
  webRoot: string;
  logLevel: LogLevel;
  /** Origins (or '*') whose pages may call the API; empty = none. */
  corsAllowedOrigins: string[];
  /** Host names requests may name besides the loopback ones. */
  allowedHosts: string[];
  offlineModel: { ttftMs: number; tokensPerSecond: number };
  /** Where the local Cosmos DB server runs. */
  cosmosThread: 'worker' | 'caller';
  /** LOCAL_AZURE_LATENCY=azure: the model's seed and task hub (the poll interval is host.json's); off → undefined. */
  azureLatency: { seed: number; taskHub: 'azure-storage' | 'durable-task-scheduler' } | undefined;
}

export function parseLocalRuntimeSettings(env: Environment): LocalRuntimeSettings {
  const problems = new SettingProblems(settingsOf(localRuntimeSettings));
  const values = readSettings(localRuntimeSettings, env, problems);
  problems.throwIfAny();
  return {
    port: values.PORT,
    dataDir: values.LOCAL_DATA_DIR,
    webRoot: values.LOCAL_WEB_ROOT,
    logLevel: values.LOG_LEVEL,
    corsAllowedOrigins: parseCorsOrigins(values.CORS_ALLOWED_ORIGINS),
    allowedHosts: values.LOCAL_ALLOWED_HOSTS.split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
    offlineModel: {
      ttftMs: values.OFFLINE_MODEL_TTFT_MS,
      tokensPerSecond: values.OFFLINE_MODEL_TOKENS_PER_SECOND,
    },
    cosmosThread: values.LOCAL_COSMOS_THREAD,
    azureLatency:
      values.LOCAL_AZURE_LATENCY === 'azure'
        ? { seed: values.LOCAL_AZURE_LATENCY_SEED, taskHub: values.LOCAL_AZURE_TASK_HUB }
        : undefined,
  };
}

// Core Tools reads every value as text; numbers and booleans written without quotes are taken as their text.
const settingsFile = z.object({
  Values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).default({}),
});

/** The environment overlaid on local.settings.json's Values (the environment wins, as with Core Tools). */
export async function readSettingsFile(
  file: string,
  env: Environment,
): Promise<Record<string, string | undefined>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ...env };
    throw error;
  }
  let parsed: z.infer<typeof settingsFile>;
  try {
    parsed = settingsFile.parse(JSON.parse(text));
  } catch (error) {
    throw new ConfigError([
      {
        setting: file,
        problem: `is not a valid settings file (${error instanceof Error ? error.message.split('\n')[0] : 'unreadable'}); it must be JSON whose "Values" are strings (or numbers and booleans)`,
      },
    ]);
  }
  return { ...parsed.Values, ...env };
}
