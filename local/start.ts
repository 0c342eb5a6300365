// `npm start`: runs the whole product locally and prints one line once it is ready.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../shared/settings/setting.js';
import { PartitionKeyChangedError } from './cosmos/local-cosmos.js';
import { createLogHandler } from './log.js';
import { PortInUseError } from './http/http-host.js';
import { DataFolderInUseError } from './persistence/data-folder-lock.js';
import { latencyLabel, startLocalRuntime } from './runtime.js';
import { parseLocalRuntimeSettings, readSettingsFile } from './settings.js';

/**
 * How long a stop waits for running work (an answer being streamed, a worker's step) to end cleanly. Past it the
 * process exits as a crash would, which a turn survives: its orchestration and queued message are stored, and the
 * next start replays it from its last stored step; exiting frees the port and the data folder at once.
 */
const STOP_GRACE_MS = 3_000;

function exitNow(reason: string): never {
  console.error(reason);
  process.exit(0);
}

async function main(): Promise<void> {
  const settings = await readSettingsFile('local.settings.json', process.env);
  const local = parseLocalRuntimeSettings(settings);
  const runtime = await startLocalRuntime({
    port: local.port,
    host: '127.0.0.1',
    dataDir: local.dataDir,
    settings,
    logHandler: createLogHandler(local.logLevel),
  });
  const { provider, connection } = runtime.config.llm;
  // The API is named because a server may answer one and not the other (e.g. no /responses route).
  const llm =
    provider === 'offline'
      ? `the offline model (a deterministic stand-in, not a real LLM) via ${connection.api}`
      : `${provider} (${connection.kind === 'azure-openai' ? connection.endpoint : connection.baseUrl}) via ${connection.api}`;
  const shownUrl = runtime.url.replace('127.0.0.1', 'localhost');
  const chat = existsSync(join(local.webRoot, 'index.html'))
    ? `${shownUrl}/`
    : `not built (npm run build:web)`;
  console.log(
    `Chat backend (local runtime) listening on ${shownUrl}/api — chat: ${chat}; health: ${shownUrl}/api/health; LLM: ${llm}; data: ${local.dataDir}`,
  );
  if (local.azureLatency !== undefined) console.log(`Latency: ${latencyLabel(local.azureLatency)}.`);

  let stoppingSince: number | undefined;
  const stop = (signal: string) => {
    // A second Ctrl+C does not wait for the grace period. The same one arrives twice under `npm start` (from the
    // terminal and passed on by its launcher): a repeat within a second is that one.
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince > 1_000) exitNow(`${signal} again: exiting now`);
      return;
    }
    stoppingSince = Date.now();
    console.error(
      `${signal}: stopping the local runtime (a running answer is given ${STOP_GRACE_MS / 1000} s, ` +
        'else it resumes at the next start)',
    );
    const grace = setTimeout(
      () =>
        exitNow(
          `Work still running after ${STOP_GRACE_MS / 1000} s: exiting now. The turn is durable: it resumes ` +
            'from its last stored step at the next start',
        ),
      STOP_GRACE_MS,
    );
    grace.unref();
    runtime.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  // What the user can fix gets one line (or one list) saying how; anything else keeps its stack.
  if (
    error instanceof ConfigError ||
    error instanceof DataFolderInUseError ||
    error instanceof PortInUseError ||
    error instanceof PartitionKeyChangedError
  )
    console.error(error.message);
  else console.error('The local runtime failed to start:', error);
  process.exit(1);
});
