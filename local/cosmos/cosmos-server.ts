// The local Cosmos DB server itself, on whichever thread calls serveLocalCosmos: @vercel/cosmosdb-server's account
// and handlers over loopback HTTPS, TTL expiry as in Azure, every write journalled and on disk before its answer.
// It imports neither the Cosmos SDK nor the certificate maker, so its worker thread starts light.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { isIPv6 } from 'node:net';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { EventLoopUtilization } from 'node:perf_hooks';

import { accountJournalRecordSchema, toJournalRecord, toReplayedChange } from './account-journal.js';
import { accountSnapshotSchema, restoreSnapshot, snapshotPieces } from './account-snapshot.js';
import { ContainerIndexes } from './container-indexes.js';
import {
  createAccount,
  findContainer,
  type CosmosAccount,
  type StoredResource,
} from './cosmosdb-server-internals.js';
import { observeAccount, replayChange } from './cosmosdb-server-observer.js';
import { loadRouter, type RouteParams } from './cosmosdb-server-router.js';
import { ExpirySweeper } from './expiry-sweeper.js';
import { createAzureLatencyModel, type AzureLatencyOptions } from '../latency/azure-latency.js';
import { cosmosLatencyOperation } from './cosmos-latency.js';
import { isSearchQuery, runSearchQuery } from './search-functions.js';
import { withAtomicBatch } from './atomic-batch.js';
import { withPatchConditions } from './patch-conditions.js';
import { createRequestListener, type RequestHooks } from './request-listener.js';
import type { SelfSignedCertificate } from './self-signed-certificate.js';
import { CorruptDataFileError } from '../persistence/data-file.js';
import { threadCpuMs } from '../thread-cpu.js';
import {
  SnapshotJournal,
  type OpenedSnapshotJournal,
  type SnapshotJournalStats,
} from '../persistence/snapshot-journal.js';
import type { AccountSnapshot } from './account-snapshot.js';
import type { AccountJournalRecord } from './account-journal.js';

export const DATA_FILE_KIND = 'local Cosmos DB data';
/** How often expired items are swept even when nothing reads them. */
const TTL_SWEEP_INTERVAL_MS = 1000;

export interface LocalCosmosOptions {
  /** The snapshot file; its journals sit beside it (`<dataFile>.<n>.journal`). Undefined = memory only. */
  dataFile?: string | undefined;
  /** Default '127.0.0.1'. The port is a free one. */
  host?: string;
  /** No longer used: every write is on disk before it is acknowledged. Accepted so older callers still compile. */
  flushDelayMs?: number;
  /**
   * The clock TTL expiry is judged by, in epoch ms (tests move it forward instead of sleeping). A function cannot
   * cross to another thread: with a clock of its own, the server runs on the caller's thread.
   */
  now?: () => number;
  /**
   * Where the server runs: 'worker' (default) a worker thread of its own, off the app's event loop; 'caller' the
   * caller's thread, which starts in milliseconds instead of about a second (a clock of its own implies it).
   */
  thread?: 'worker' | 'caller';
  /** When the journal is compacted into a new snapshot (defaults: 4 MiB and 1 × the snapshot's size). */
  compaction?: { minJournalBytes?: number; journalToSnapshotRatio?: number };
  /**
   * Test-only (off by default, never on in the local runtime): answer queries that use Cosmos DB's search functions
   * (VectorDistance, FullTextScore, RRF) with search-functions.ts, so a test can run the Azure query path against
   * this server. Without it such a query fails here as the package's engine cannot parse it.
   */
  searchFunctions?: boolean;
  /** Answer each request as late as Azure Cosmos DB would (a timer per request, no CPU); absent, at once. */
  latency?: AzureLatencyOptions | undefined;
}

/** Requests the server answered since start (or resetStats), for benchmarks. */
export interface LocalCosmosStats {
  requests: number;
  /** Bytes of request bodies received. */
  requestBytes: number;
  /** Bytes of response bodies sent. */
  responseBytes: number;
  /** Requests by operation, `<resource>.<verb>`: `item.create`, `item.upsert`, `item.read`, `item.query`, ... */
  byOperation: Record<string, number>;
  /** Requests and bytes (request and response bodies) by container and operation: `turn-events item.create`. */
  byContainer: Record<string, { requests: number; bytes: number; requestUnits: number }>;
  /** What Azure Cosmos DB would have charged for them (request-charge.ts), as answered in x-ms-request-charge. */
  requestUnits: number;
}

/** What the server did inside, for tests and benchmarks. */
export interface LocalCosmosDiagnostics {
  /** Documents queries were run over: with a partition key, only that partition's. */
  queryDocumentsScanned: number;
  /** Expiry schedule entries looked at: grows with expiries, never with the number of stored items. */
  expiryEntriesExamined: number;
  /** The data file's journal; undefined when memory only. */
  journal: SnapshotJournalStats | undefined;
  /** Answers held back by the Azure latency model (0 without it). */
  latencyWaits: number;
  /** TLS connections the server has accepted: each a handshake, so a client that reuses its sockets keeps it low. */
  connections: number;
  /** Where the server runs: its own worker thread, or the caller's (when given a clock, `now`). */
  thread: 'worker' | 'caller';
  /** CPU time (user + system) of the thread the server runs on, where the system tells it (Linux). */
  threadCpuMs: number | undefined;
  /** The server thread's event loop (worker only), as performance.eventLoopUtilization() reads it. */
  eventLoop?: EventLoopUtilization;
}

/** The server as the thread that runs it holds it (startLocalCosmos adds the client's agent). */
export interface LocalCosmosServer {
  /** https://127.0.0.1:PORT/ */
  endpoint: string;
  /** The account key the client must use. */
  key: string;
  /** The server's self-signed certificate, for the client's agent to trust. */
  certPem: string;
  /** Resolves once every change so far is on disk (an acknowledged write already is). */
  flush(): Promise<void>;
  /** Writes a snapshot and starts a new journal now (it also happens by itself as the journal grows). */
  compact(): Promise<void>;
  stats(): LocalCosmosStats;
  resetStats(): void;
  diagnostics(): LocalCosmosDiagnostics;
  /** Closes the server, compacts and closes the data files. */
  stop(): Promise<void>;
}

/** Serves the account on the calling thread (cosmos-worker.ts calls it on its own), with the given certificate. */
export async function serveLocalCosmos(
  options: LocalCosmosOptions,
  certificate: SelfSignedCertificate,
): Promise<LocalCosmosServer> {
  const host = options.host ?? '127.0.0.1';
  const dataFile = options.dataFile === undefined ? undefined : resolve(options.dataFile);

  // Read the files before listening, so corrupt data stops start-up before anything can write over it.
  const opened: OpenedSnapshotJournal<AccountSnapshot, AccountJournalRecord> | undefined =
    dataFile === undefined
      ? undefined
      : await SnapshotJournal.open({
          file: dataFile,
          what: DATA_FILE_KIND,
          stateSchema: accountSnapshotSchema,
          recordSchema: accountJournalRecordSchema,
          ...options.compaction,
          onBackgroundError: (error) =>
            console.error(
              `local Cosmos DB: compacting ${dataFile} failed; the journal keeps everything`,
              error,
            ),
        });
  const journal = opened?.journal;

  // The account is set once the server listens: it advertises the server's own endpoint, port included.
  const live: LiveAccount = {};
  const indexes = new ContainerIndexes();
  const sweeper = new ExpirySweeper(options.now ?? Date.now, indexes);
  const counters = { stats: emptyStats(), queryDocumentsScanned: 0, latencyWaits: 0, connections: 0 };
  const server = https.createServer(
    { cert: certificate.certPem, key: certificate.keyPem, keepAlive: true },
    createRequestListener(() => live.account, withAtomicBatch(withPatchConditions(loadRouter())), {
      ...requestHooks(live, sweeper, journal, counters.stats),
      ...(options.latency === undefined
        ? {}
        : latencyHook(options.latency, () => (counters.latencyWaits += 1))),
    }),
  );
  // The client's agent keeps idle sockets without a limit; a server that closed them after Node's default 5 s
  // would race a request the client starts on one at that moment (ECONNRESET on a write, under load). The
  // client's idle sockets are closed first instead (the agent's timeout below).
  server.on('secureConnection', () => (counters.connections += 1));
  server.keepAliveTimeout = 10 * 60_000;
  server.headersTimeout = 10 * 60_000 + 1_000;

  let port: number;
  try {
    port = await listen(server, 0, host);
  } catch (error) {
    await journal?.close({ compact: false });
    throw error;
  }
  const advertisedHost = advertisedHostFor(host);
  const account = createAccount(advertisedHost, port);
  let journalling = false;
  observeAccount(account, {
    changed(change) {
      indexes.changed(change);
      // A failed append is retried by compaction; the response that waits for it reports a failure meanwhile.
      if (journalling && journal) journal.append(toJournalRecord(change)).catch(() => undefined);
    },
    partitionItems: (containerRid, header) => indexes.partitionItems(containerRid, header),
    queried(documentCount) {
      counters.queryDocumentsScanned += documentCount;
    },
    ...(options.searchFunctions === true
      ? {
          answerQuery: (
            query: { query: string; parameters?: unknown },
            documents: readonly StoredResource[],
          ) =>
            isSearchQuery(query.query)
              ? runSearchQuery(query.query, searchParameters(query.parameters), documents)
              : undefined,
        }
      : {}),
  });
  try {
    if (opened && dataFile !== undefined) loadInto(account, opened, dataFile);
  } catch (error) {
    await closeServer(server);
    await journal?.close({ compact: false });
    throw error;
  }
  journalling = true;
  sweeper.sweepAccount(account); // items that expired while the server was down (journalled like any delete)
  journal?.start(() => snapshotPieces(account, new Date()));
  live.account = account;

  const sweepTimer = setInterval(() => sweeper.sweepAccount(account), TTL_SWEEP_INTERVAL_MS);
  sweepTimer.unref();

  let stopping: Promise<void> | undefined;

  return {
    endpoint: `https://${advertisedHost}:${port}/`,
    // The package does not check request signatures; the client still needs a well-formed key to sign with.
    key: randomBytes(64).toString('base64'),
    certPem: certificate.certPem,
    flush: () => journal?.durable() ?? Promise.resolve(),
    compact: () => journal?.compact() ?? Promise.resolve(),
    stats: () => structuredClone(counters.stats),
    resetStats() {
      Object.assign(counters.stats, emptyStats());
    },
    diagnostics: () => ({
      queryDocumentsScanned: counters.queryDocumentsScanned,
      expiryEntriesExamined: indexes.expiryEntriesExamined,
      journal: journal?.stats(),
      latencyWaits: counters.latencyWaits,
      connections: counters.connections,
      thread: 'caller',
      threadCpuMs: threadCpuMs(),
    }),
    stop() {
      stopping ??= (async () => {
        clearInterval(sweepTimer);
        await closeServer(server);
        await journal?.close();
      })();
      return stopping;
    },
  };
}

/** A query's parameters as the request carried them: `[{ name, value }]`. */
function searchParameters(parameters: unknown): { name: string; value: unknown }[] {
  if (!Array.isArray(parameters)) return [];
  return parameters.filter(
    (parameter): parameter is { name: string; value: unknown } =>
      typeof parameter === 'object' &&
      parameter !== null &&
      typeof (parameter as { name?: unknown }).name === 'string',
  );
}

interface LiveAccount {
  account?: CosmosAccount;
}

function emptyStats(): LocalCosmosStats {
  return {
    requests: 0,
    requestBytes: 0,
    responseBytes: 0,
    byOperation: {},
    byContainer: {},
    requestUnits: 0,
  };
}

/** Expired items go before a request sees their container; every response waits for the journal. */
function requestHooks(
  live: LiveAccount,
  sweeper: ExpirySweeper,
  journal: SnapshotJournal<AccountJournalRecord> | undefined,
  stats: LocalCosmosStats,
): RequestHooks {
  const containerOf = (params: RouteParams) =>
    live.account && params.dbId !== undefined && params.collId !== undefined
      ? findContainer(live.account, params.dbId, params.collId)
      : undefined;
  return {
    beforeHandle(params) {
      const container = containerOf(params);
      if (container) sweeper.sweepContainer(container);
    },
    durable: () => journal?.durable() ?? Promise.resolve(),
    served(operation, requestBytes, responseBytes, container, requestUnits) {
      stats.requests++;
      stats.requestUnits += requestUnits;
      stats.requestBytes += requestBytes;
      stats.responseBytes += responseBytes;
      stats.byOperation[operation] = (stats.byOperation[operation] ?? 0) + 1;
      const key = `${container ?? '-'} ${operation}`;
      const entry = (stats.byContainer[key] ??= { requests: 0, bytes: 0, requestUnits: 0 });
      entry.requests += 1;
      entry.requestUnits += requestUnits;
      entry.bytes += requestBytes + responseBytes;
    },
  };
}

/** Each answer waits a draw of its operation's latency (point read, write, query, batch or metadata). */
function latencyHook(options: AzureLatencyOptions, waited: () => void): Pick<RequestHooks, 'delay'> {
  const model = createAzureLatencyModel(options);
  return {
    delay: async (req) => {
      await model.delay(cosmosLatencyOperation(req));
      waited();
    },
  };
}

function advertisedHostFor(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return isIPv6(host) ? `[${host}]` : host;
}

function listen(server: https.Server, port: number, host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}

/** The snapshot, then the journalled changes since it, in order. */
function loadInto(
  account: CosmosAccount,
  opened: OpenedSnapshotJournal<AccountSnapshot, AccountJournalRecord>,
  dataFile: string,
): void {
  try {
    if (opened.state) restoreSnapshot(account, opened.state);
    for (const record of opened.records) replayChange(account, toReplayedChange(record));
  } catch (error) {
    throw new CorruptDataFileError(
      dataFile,
      DATA_FILE_KIND,
      `its contents are inconsistent (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

function closeServer(server: https.Server): Promise<void> {
  return new Promise((resolveClose, reject) => {
    server.close((error) => (error ? reject(error) : resolveClose()));
    // Idle keep-alive sockets would hold close() open; requests under way get a moment to finish.
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 1000).unref();
  });
}
