// The hot store on Redis: one hash per session (`hot:{sessionId}`, braced so a cluster keeps it in one slot), one
// field per entry holding `<version>:<json>`; a conditional write is one Lua compare-and-set (or a splice of what
// changed) that also restarts the hash's expiry and keeps it under its byte bound. Any Redis, or Azure's (Entra ID).
import { createHash, randomBytes } from 'node:crypto';
import type { TokenCredential } from '@azure/identity';
import { ErrorReply } from 'redis';
import { DependencyError, ValidationError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  checkHotKey,
  checkHotPrefix,
  checkHotWrite,
  HOT_VALUE_MAX_BYTES,
  type HotEntry,
  type HotStore,
  type HotValue,
  type HotWriteCondition,
  type HotWriteResult,
} from '../hot-store.js';
import type { RedisConnection } from '../redis-settings.js';
import { createRedisClient } from './redis-client.js';
import { DEFAULT_READ_CACHE_LIMITS, RedisReadCache, type ReadCacheLimits } from './redis-read-cache.js';
import { splicePieces } from './redis-splice.js';

/** A session's hash stops taking writes past this many bytes of entries (its working memory and turn records). */
export const REDIS_SESSION_MAX_BYTES = 32 * 1024 * 1024;

export interface RedisHotStoreOptions {
  connection: RedisConnection;
  /** The app's credential: signs in to Azure Managed Redis when no managed identity client id is configured. */
  credential?: TokenCredential;
  /** Seconds an entry outlives its session's last write (HOT_STORE_TTL_SECONDS, as the Cosmos container's). */
  ttlSeconds: number;
  maxValueBytes?: number;
  maxSessionBytes?: number;
  connectTimeoutMs?: number;
  reconnectMaxDelayMs?: number;
  /** Bounds of what the process keeps of the entries it read or wrote (defaults: DEFAULT_READ_CACHE_LIMITS). */
  readCache?: Partial<ReadCacheLimits>;
  log?: Pick<Logger, 'warn'>;
}

export interface RedisHotStore extends HotStore {
  /** PING: what /api/health asks when Redis is the hot store. */
  ping(): Promise<string>;
  close(): Promise<void>;
}

// KEYS[1] the session's hash; ARGV: field, condition (absent|version|any), expected version, new version, JSON,
// TTL seconds, the hash's byte bound. Returns 1 written, 0 condition failed, -1 the hash would exceed its bound.
// The running byte total lives in the hash under a field no entry key can take (keys never hold a NUL).
const COMPARE_AND_SET = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == 'absent' then
  if current then return 0 end
elseif ARGV[2] == 'version' then
  if not current then return 0 end
  local sep = string.find(current, ':', 1, true)
  if not sep or string.sub(current, 1, sep - 1) ~= ARGV[3] then return 0 end
end
local entry = ARGV[4] .. ':' .. ARGV[5]
local total = tonumber(redis.call('HGET', KEYS[1], '\\0bytes') or '0')
local grown = total - (current and string.len(current) or 0) + string.len(entry)
if grown > tonumber(ARGV[7]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], entry, '\\0bytes', tostring(grown))
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1
`;
const COMPARE_AND_SET_SHA = createHash('sha1').update(COMPARE_AND_SET).digest('hex');
// KEYS[1] the session's hash; ARGV: field, the version the client holds. Returns 1 when the entry is still at that
// version (the value is not sent again), the raw entry when it changed, nil when there is none.
const READ_IF_CHANGED = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return false end
local held = ARGV[2] .. ':'
if string.sub(current, 1, string.len(held)) == held then return 1 end
return current
`;
const READ_IF_CHANGED_SHA = createHash('sha1').update(READ_IF_CHANGED).digest('hex');

// KEYS[1] the session's hash; ARGV: field, expected version, new version, the stored JSON's length in bytes, TTL
// seconds, the hash's byte bound, then the new JSON as pieces, two arguments each: `c` and `<start>,<length>` (bytes
// of the stored JSON kept as they are) or `l` and text. Returns as COMPARE_AND_SET, and -2 when the stored JSON is
// not the one the pieces were cut from. No JSON is decoded: the pieces are joined as bytes.
const SPLICE = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
local held = ARGV[2] .. ':'
local at = string.len(held)
if string.sub(current, 1, at) ~= held then return 0 end
if string.len(current) - at ~= tonumber(ARGV[4]) then return -2 end
local parts = { ARGV[3], ':' }
for i = 7, #ARGV, 2 do
  if ARGV[i] == 'c' then
    local start, length = string.match(ARGV[i + 1], '^(%d+),(%d+)$')
    if not start then return -2 end
    start = at + tonumber(start)
    parts[#parts + 1] = string.sub(current, start + 1, start + tonumber(length))
  else
    parts[#parts + 1] = ARGV[i + 1]
  end
end
local entry = table.concat(parts)
local total = tonumber(redis.call('HGET', KEYS[1], '\\0bytes') or '0')
local grown = total - string.len(current) + string.len(entry)
if grown > tonumber(ARGV[6]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], entry, '\\0bytes', tostring(grown))
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
`;
const SPLICE_SHA = createHash('sha1').update(SPLICE).digest('hex');
const TOTAL_FIELD = '\0bytes';

export function createRedisHotStore(options: RedisHotStoreOptions): RedisHotStore {
  const ttlSeconds = String(options.ttlSeconds);
  const maxValueBytes = options.maxValueBytes ?? HOT_VALUE_MAX_BYTES;
  const maxSessionBytes = String(options.maxSessionBytes ?? REDIS_SESSION_MAX_BYTES);
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const client = createRedisClient(options, connectTimeoutMs);

  // The first connection is awaited (bounded by the connect timeout); after it, a command sent while the client is
  // reconnecting fails at once (no offline queue), so a turn fails cleanly instead of hanging.
  let closed = false;
  let lastWarning = 0;
  client.on('error', (error: unknown) => {
    // The client reconnects by itself; one line every few seconds is enough to say why it is down.
    if (Date.now() - lastWarning < 5_000) return;
    lastWarning = Date.now();
    options.log?.warn(`Redis hot store: ${describeFailure(error)}; reconnecting`);
  });
  const firstConnect = client.connect().then(
    () => undefined,
    () => undefined,
  );
  const ready = async () => {
    if (closed) throw new DependencyError('redis', 'The Redis hot store is closed.');
    if (client.isReady) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      firstConnect,
      new Promise((resolve) => (timer = setTimeout(resolve, connectTimeoutMs))),
    ]);
    clearTimeout(timer);
  };

  // The entries last read or written, so a read of an unchanged one costs a few bytes: JSON kept as text, parsed
  // per read, bounded per session and in all.
  const cache = new RedisReadCache({ ...DEFAULT_READ_CACHE_LIMITS, ...options.readCache });
  const remember = (sessionId: string, key: string, version: string, json: string) =>
    cache.set(sessionId, key, { version, json });
  const forget = (sessionId: string, key: string) => cache.delete(sessionId, key);

  const remembered = (sessionId: string, key: string, raw: string): HotEntry => {
    const { json, ...entry } = parseEntry(key, raw);
    remember(sessionId, key, entry.version, json);
    return entry;
  };

  /** A script by its SHA; sent whole once when the server lost its script cache (a restart, SCRIPT FLUSH). */
  async function script(source: string, sha: string, call: { keys: string[]; arguments: string[] }) {
    try {
      return await client.evalSha(sha, call);
    } catch (error) {
      if (error instanceof ErrorReply && error.message.startsWith('NOSCRIPT'))
        return await client.eval(source, call);
      throw error;
    }
  }

  async function run<T>(operation: string, command: () => Promise<T>): Promise<T> {
    await ready();
    try {
      return await command();
    } catch (error) {
      throw new DependencyError('redis', `Redis ${operation} failed: ${describeFailure(error)}.`, {
        cause: error,
      });
    }
  }

  return {
    read: async (sessionId, key) => {
      checkHotKey(key);
      return run('read', async () => {
        const held = cache.get(sessionId, key);
        if (held === undefined) {
          const raw = await client.hGet(hashKey(sessionId), key);
          return raw === null || raw === undefined ? undefined : remembered(sessionId, key, raw);
        }
        const reply = await script(READ_IF_CHANGED, READ_IF_CHANGED_SHA, {
          keys: [hashKey(sessionId)],
          arguments: [key, held.version],
        });
        if (reply === 1) return { key, version: held.version, value: JSON.parse(held.json) as HotValue };
        if (typeof reply === 'string') return remembered(sessionId, key, reply);
        forget(sessionId, key);
        return undefined;
      });
    },

    list: async (sessionId, prefix) => {
      checkHotPrefix(prefix);
      return run('list', async () => {
        const found: HotEntry[] = [];
        const match = `${escapeGlob(prefix)}*`;
        let cursor = '0';
        do {
          const page = await client.hScan(hashKey(sessionId), cursor, { MATCH: match, COUNT: 100 });
          cursor = page.cursor;
          for (const { field, value } of page.entries) {
            if (field !== TOTAL_FIELD && field.startsWith(prefix)) {
              const { json: _json, ...entry } = parseEntry(field, value);
              found.push(entry);
            }
          }
        } while (cursor !== '0');
        // HSCAN may return a field twice (when the hash is rehashed mid-scan) and in no order.
        const byKey = new Map(found.map((entry) => [entry.key, entry]));
        return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      });
    },

    // A write's own ttlSeconds is not needed here: every write restarts the expiry of the session's whole hash.
    write: async (sessionId, key, value, condition) => {
      const json = checkHotWrite(key, value, maxValueBytes);
      const version = newVersion();
      const keys = [hashKey(sessionId)];
      // Over a version this process holds the JSON of (it read or wrote it), only what changed is sent.
      const held = cache.get(sessionId, key);
      const pieces =
        condition.kind === 'version' && held?.version === condition.version
          ? splicePieces(held.json, json)
          : undefined;
      let outcome: unknown;
      if (held !== undefined && pieces !== undefined) {
        const args = [
          key,
          held.version,
          version,
          String(Buffer.byteLength(held.json)),
          ttlSeconds,
          maxSessionBytes,
          ...pieces,
        ];
        outcome = await run('write', () => script(SPLICE, SPLICE_SHA, { keys, arguments: args }));
      }
      if (outcome === undefined || outcome === -2) {
        const args = [
          key,
          condition.kind,
          expectedVersion(condition),
          version,
          json,
          ttlSeconds,
          maxSessionBytes,
        ];
        outcome = await run('write', () =>
          script(COMPARE_AND_SET, COMPARE_AND_SET_SHA, { keys, arguments: args }),
        );
      }
      if (outcome === -1)
        throw new ValidationError(
          `A session's hot store entries may hold at most ${maxSessionBytes} bytes; this write would exceed it.`,
        );
      if (outcome !== 1) return { kind: 'conflict' } satisfies HotWriteResult;
      remember(sessionId, key, version, json);
      return { kind: 'written', version };
    },

    deleteSession: (sessionId) =>
      run('delete', async () => {
        cache.deleteSession(sessionId);
        const key = hashKey(sessionId);
        // One round trip: the hash's fields, less its byte total, are the entries removed.
        const [fields, hasTotal] = await client.multi().hLen(key).hExists(key, TOTAL_FIELD).del(key).exec();
        return Number(fields) - Number(hasTotal);
      }),

    ping: () => run('ping', async () => `PING answered ${await client.ping()}`),

    close: async () => {
      if (closed) return;
      closed = true;
      // close() waits for commands in flight; a client still connecting is destroyed instead.
      if (client.isOpen) await client.close();
      else client.destroy();
    },
  };
}

/** The session's hash; the braces make the session id the cluster hash tag. */
export function hashKey(sessionId: string): string {
  return `hot:{${sessionId}}`;
}

function expectedVersion(condition: HotWriteCondition): string {
  return condition.kind === 'version' ? condition.version : '';
}

/** Random, so a version never comes back after the session's hash expired or was deleted and written anew. */
function newVersion(): string {
  return randomBytes(9).toString('base64url');
}

/** An entry as read, parsed; `remember` keeps it for the next read. */
function parseEntry(key: string, raw: string): HotEntry & { json: string } {
  const separator = raw.indexOf(':');
  if (separator < 1) throw new Error('A hot store entry in Redis has no version.');
  const json = raw.slice(separator + 1);
  return { key, version: raw.slice(0, separator), value: JSON.parse(json) as HotValue, json };
}

/** HSCAN's MATCH is a glob: were a prefix to hold *, ?, [ or \, they would match themselves. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

/** Why a command failed, without any key or value: the error's class, or a Redis error reply's code. */
function describeFailure(error: unknown): string {
  if (error instanceof ErrorReply) return `Redis answered ${error.message.split(' ')[0] ?? 'an error'}`;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') return `${error.name} (${code})`;
    return error.name === 'Error' ? 'connection failed' : error.name;
  }
  return 'unknown failure';
}
