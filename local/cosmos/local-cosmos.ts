// The local runtime's Cosmos DB: the server of cosmos-server.ts on a worker thread of its own (off the app's event
// loop), commanded through messages, with a fresh self-signed certificate the client's agent trusts, and only it.
import https from 'node:https';
import { Worker, type MessagePort } from 'node:worker_threads';

import { CosmosClient } from '@azure/cosmos';

import {
  DATA_FILE_KIND,
  serveLocalCosmos,
  type LocalCosmosDiagnostics,
  type LocalCosmosOptions,
  type LocalCosmosServer,
  type LocalCosmosStats,
} from './cosmos-server.js';
import {
  createSelfSignedCertificate,
  loopbackAltNames,
  type SelfSignedCertificate,
} from './self-signed-certificate.js';
import { WorkerCalls, type SyncCallPort, type TransferredError } from './thread-calls.js';
import { CorruptDataFileError } from '../persistence/data-file.js';

export { PartitionKeyChangedError, provisionCosmos } from './provision-cosmos.js';
export { CorruptDataFileError } from '../persistence/data-file.js';
export type { LocalCosmosDiagnostics, LocalCosmosOptions, LocalCosmosStats } from './cosmos-server.js';

/** The server, wherever it runs, with an agent the client reaches it through. */
export interface LocalCosmos extends Omit<LocalCosmosServer, 'certPem'> {
  /** Trusts this server's certificate, and only it. */
  agent: https.Agent;
}

/** Starts the server on a worker thread (on the caller's when asked, or given a clock) and an agent that trusts it. */
export async function startLocalCosmos(options: LocalCosmosOptions = {}): Promise<LocalCosmos> {
  // Made here, not in the worker: the certificate maker is slow to load, and this thread loads it anyway.
  const certificate = await createSelfSignedCertificate({
    subjectAltNames: loopbackAltNames(options.host ?? '127.0.0.1'),
  });
  const server =
    options.now === undefined && options.thread !== 'caller'
      ? await startCosmosWorker(options, certificate)
      : await serveLocalCosmos(options, certificate);
  const agent = new https.Agent({ ca: server.certPem, keepAlive: true, timeout: 5 * 60_000 });
  let stopping: Promise<void> | undefined;
  return {
    endpoint: server.endpoint,
    key: server.key,
    agent,
    flush: () => server.flush(),
    compact: () => server.compact(),
    stats: () => server.stats(),
    resetStats: () => server.resetStats(),
    diagnostics: () => server.diagnostics(),
    stop() {
      stopping ??= server.stop().finally(() => agent.destroy());
      return stopping;
    },
  };
}

/** What a Cosmos worker thread is started with (its workerData). */
export interface CosmosWorkerData {
  options: Omit<LocalCosmosOptions, 'now'>;
  certificate: SelfSignedCertificate;
  calls: SyncCallPort;
}

export type CosmosWorkerReady =
  | { type: 'ready'; endpoint: string; key: string; certPem: string }
  | { type: 'failed'; error: TransferredError };

/** The server on a worker thread of its own: its commands go through messages, its readings are synchronous. */
async function startCosmosWorker(
  options: LocalCosmosOptions,
  certificate: SelfSignedCertificate,
): Promise<LocalCosmosServer> {
  const calls = new WorkerCalls(rebuildError);
  const { now: _clock, ...threadOptions } = options;
  const data: CosmosWorkerData = { options: threadOptions, certificate, calls: calls.workerPort };
  const started = startWorkerThread(data, [calls.workerPort.port]);
  calls.attach(started);
  let stopped = false;
  // Only the listeners added here come off: the worker's own (which keep its port referenced) stay.
  const listeners: { error?: (error: Error) => void; exit?: (code: number) => void } = {};
  const ready = await new Promise<CosmosWorkerReady>((resolveReady, reject) => {
    listeners.error = reject;
    listeners.exit = (code) => reject(new Error(`the local Cosmos DB thread exited (${code}) as it started`));
    started.once('error', listeners.error);
    started.once('exit', listeners.exit);
    started.once('message', (message: CosmosWorkerReady) => resolveReady(message));
  }).finally(() => {
    if (listeners.error) started.off('error', listeners.error);
    if (listeners.exit) started.off('exit', listeners.exit);
  });
  if (ready.type === 'failed') {
    calls.close();
    await started.terminate();
    throw rebuildError(ready.error);
  }
  started.on('message', (message: unknown) => calls.receive(message));
  // A failure of the thread fails every request and command from now on; it is reported, never swallowed.
  started.on('error', (error) => {
    console.error('local Cosmos DB: the server thread failed', error);
    calls.fail(error);
  });
  started.on('exit', (code) => {
    if (!stopped) console.error(`local Cosmos DB: the server thread exited (${code})`);
    calls.fail(new Error(`the local Cosmos DB thread has exited (${code})`));
  });
  let stopping: Promise<void> | undefined;
  return {
    endpoint: ready.endpoint,
    key: ready.key,
    certPem: ready.certPem,
    flush: () => calls.call('flush'),
    compact: () => calls.call('compact'),
    stats: () => calls.callSync<LocalCosmosStats>('stats'),
    resetStats: () => calls.callSync<void>('resetStats'),
    diagnostics: () => ({
      ...calls.callSync<LocalCosmosDiagnostics>('diagnostics'),
      thread: 'worker',
      eventLoop: started.performance.eventLoopUtilization(),
    }),
    stop() {
      stopping ??= (async () => {
        try {
          await calls.call('stop');
        } finally {
          stopped = true;
          calls.close();
          await started.terminate();
        }
      })();
      return stopping;
    },
  };
}

function startWorkerThread(data: CosmosWorkerData, transferList: MessagePort[]): Worker {
  // Compiled, the worker is the .js beside this file. From the sources (tests, tsx) it is the .ts, which the new
  // thread can only load once tsx's loader is registered in it (a loader is per thread).
  return import.meta.url.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(
          new URL('./cosmos-worker.ts', import.meta.url).href,
        )}); });`,
        { eval: true, workerData: data, transferList },
      )
    : new Worker(new URL('./cosmos-worker.js', import.meta.url), { workerData: data, transferList });
}

/** The worker's error as the caller would have seen it on its own thread (a corrupt data file keeps its class). */
function rebuildError(transferred: TransferredError): Error {
  const error =
    transferred.name === 'CorruptDataFileError' && transferred.file !== undefined
      ? new CorruptDataFileError(transferred.file, DATA_FILE_KIND, '')
      : new Error();
  error.message = transferred.message;
  if (transferred.stack !== undefined) error.stack = transferred.stack;
  return error;
}

/** The real @azure/cosmos client, pointed at the local server and trusting its certificate only. */
export function createLocalCosmosClient(local: LocalCosmos): CosmosClient {
  return new CosmosClient({ endpoint: local.endpoint, key: local.key, agent: local.agent });
}
