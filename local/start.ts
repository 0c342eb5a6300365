// `npm start`: runs the whole product locally and prints one line once it is ready.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../shared/settings/setting.js';
import { PartitionKeyChangedError } from './cosmos/local-cosmos.js';
import { createLogHandler } from './log.js';
import { PortInUseError } from './http/http-host.js';
import { DataFolderInUseError } from './persistence/data-folder-lock.js';
import { startLocalRuntime } from './runtime.js';
import { parseLocalRuntimeSettings, readSettingsFile } from './settings.js';

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

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: stopping the local runtime`);
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
