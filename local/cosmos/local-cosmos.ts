// The local runtime's Cosmos DB: @vercel/cosmosdb-server's account and handlers served in-process over loopback
// HTTPS, with the data kept in a JSON file across restarts and TTL expiry as in Azure. The real @azure/cosmos
// client talks to it, trusting its certificate through the client's own `agent` option only.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { isIPv6 } from 'node:net';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';

import { CosmosClient } from '@azure/cosmos';

import { ensureError } from '../../shared/errors.js';

import {
  accountSnapshotSchema,
  restoreSnapshot,
  takeSnapshot,
  type AccountSnapshot,
} from './account-snapshot.js';
import {
  createAccount,
  findContainer,
  loadRouter,
  type CosmosAccount,
  type RouteParams,
} from './cosmosdb-server-internals.js';
import { ExpirySweeper } from './expiry-sweeper.js';
import { FlushScheduler } from '../persistence/flush-scheduler.js';
import { createRequestListener, type RequestHooks } from './request-listener.js';
import { CosmosRequestStats, type CosmosStats } from './request-stats.js';
import { createSelfSignedCertificate, loopbackAltNames } from './self-signed-certificate.js';
import { CorruptDataFileError, readDataFile, writeDataFile } from '../persistence/data-file.js';

export { provisionCosmos } from './provision-cosmos.js';
export { CorruptDataFileError } from '../persistence/data-file.js';
export type { CosmosStats } from './request-stats.js';

const DATA_FILE_KIND = 'local Cosmos DB data';
/** How often expired items are swept even when nothing reads them. */
const TTL_SWEEP_INTERVAL_MS = 1000;

export interface LocalCosmosOptions {
  /** Where the data is kept; undefined = memory only. */
  dataFile?: string;
  /** Default '127.0.0.1'. The port is a free one. */
  host?: string;
  /** Writes are saved at most this long after they happen (default 200). */
  flushDelayMs?: number;
  /** The clock TTL expiry is judged by, in epoch ms (tests move it forward instead of sleeping). */
  now?: () => number;
}

export interface LocalCosmos {
  /** https://127.0.0.1:PORT/ */
  endpoint: string;
  /** The account key the client must use. */
  key: string;
  /** Trusts this server's certificate, and only it. */
  agent: https.Agent;
  /** Requests served and their bytes since start or the last resetStats(), for benchmarks. */
  stats(): CosmosStats;
  resetStats(): void;
  /** Save now. */
  flush(): Promise<void>;
  /** Save and close. */
  stop(): Promise<void>;
}

export async function startLocalCosmos(options: LocalCosmosOptions = {}): Promise<LocalCosmos> {
  const host = options.host ?? '127.0.0.1';
  const dataFile = options.dataFile === undefined ? undefined : resolve(options.dataFile);

  // Read the file before listening, so a corrupt file stops start-up before anything can write over it.
  const snapshot =
    dataFile === undefined ? undefined : await readDataFile(dataFile, accountSnapshotSchema, DATA_FILE_KIND);

  const certificate = await createSelfSignedCertificate({ subjectAltNames: loopbackAltNames(host) });
  // The account is set once the server listens: it advertises the server's own endpoint, port included.
  const live: LiveAccount = {};
  const sweeper = new ExpirySweeper(options.now ?? Date.now);
  const scheduler = new FlushScheduler(
    () =>
      dataFile !== undefined && live.account
        ? writeDataFile(dataFile, takeSnapshot(live.account, new Date()))
        : Promise.resolve(),
    options.flushDelayMs ?? 200,
    (error) => console.error(`local Cosmos DB: saving ${dataFile} failed; the next write retries`, error),
  );
  const requestStats = new CosmosRequestStats();
  const server = https.createServer(
    { cert: certificate.certPem, key: certificate.keyPem, keepAlive: true },
    createRequestListener(
      () => live.account,
      loadRouter(),
      expiryAndPersistenceHooks(live, sweeper, scheduler),
      requestStats,
    ),
  );

  const port = await listen(server, 0, host);
  const advertisedHost = advertisedHostFor(host);
  const account = createAccount(advertisedHost, port);
  try {
    if (snapshot && dataFile !== undefined) restoreInto(account, snapshot, dataFile);
  } catch (error) {
    await closeServer(server);
    throw error;
  }
  sweeper.sweepAccount(account); // items that expired while the server was down
  live.account = account;

  const sweepTimer = setInterval(() => {
    if (sweeper.sweepAccount(account) > 0) scheduler.markDirty();
  }, TTL_SWEEP_INTERVAL_MS);
  sweepTimer.unref();

  const agent = new https.Agent({ ca: certificate.certPem, keepAlive: true });
  let stopping: Promise<void> | undefined;

  return {
    endpoint: `https://${advertisedHost}:${port}/`,
    // The package does not check request signatures; the client still needs a well-formed key to sign with.
    key: randomBytes(64).toString('base64'),
    agent,
    stats: () => requestStats.snapshot(),
    resetStats: () => requestStats.reset(),
    flush: () => scheduler.flush(),
    stop() {
      stopping ??= (async () => {
        clearInterval(sweepTimer);
        scheduler.cancel();
        await closeServer(server);
        agent.destroy();
        await scheduler.flush();
      })();
      return stopping;
    },
  };
}

interface LiveAccount {
  account?: CosmosAccount;
}

/** Expired items go before a request sees their container; a successful write schedules a save. */
function expiryAndPersistenceHooks(
  live: LiveAccount,
  sweeper: ExpirySweeper,
  scheduler: FlushScheduler,
): RequestHooks {
  const containerOf = (params: RouteParams) =>
    live.account && params.dbId !== undefined && params.collId !== undefined
      ? findContainer(live.account, params.dbId, params.collId)
      : undefined;
  return {
    beforeHandle(params) {
      const container = containerOf(params);
      if (container && sweeper.sweepContainer(container) > 0) scheduler.markDirty();
    },
    afterWrite(params) {
      const container = containerOf(params);
      if (container) sweeper.invalidate(container);
      scheduler.markDirty();
    },
  };
}

/** The real @azure/cosmos client, pointed at the local server and trusting its certificate only. */
export function createLocalCosmosClient(local: LocalCosmos): CosmosClient {
  return new CosmosClient({ endpoint: local.endpoint, key: local.key, agent: local.agent });
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

function restoreInto(account: CosmosAccount, snapshot: AccountSnapshot, dataFile: string): void {
  try {
    restoreSnapshot(account, snapshot);
  } catch (error) {
    throw new CorruptDataFileError(
      dataFile,
      DATA_FILE_KIND,
      `its contents are inconsistent (${ensureError(error).message})`,
      {
        cause: error,
      },
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
