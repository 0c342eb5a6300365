// The local runtime's settings file and rows: local.settings.json as Core Tools reads it (numbers and booleans
// written without quotes are their text; the environment wins), and the runtime's own settings.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../shared/settings/setting.js';
import { parseLocalRuntimeSettings, readSettingsFile } from './settings.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-settings-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readSettingsFile', () => {
  it('takes numbers and booleans as their text, and lets the environment win', async () => {
    const file = join(dir, 'numbers.json');
    await writeFile(
      file,
      JSON.stringify({ Values: { PORT: 7072, CHAT_MAX_TEXT_CHARS: 4000, FLAG: true, X: 'a' } }),
    );
    expect(await readSettingsFile(file, { X: 'from env' })).toEqual({
      PORT: '7072',
      CHAT_MAX_TEXT_CHARS: '4000',
      FLAG: 'true',
      X: 'from env',
    });
  });

  it('is the environment alone when there is no file', async () => {
    expect(await readSettingsFile(join(dir, 'absent.json'), { A: '1' })).toEqual({ A: '1' });
  });

  it('refuses a file that is not JSON, or whose values are objects', async () => {
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "Values": ');
    await expect(readSettingsFile(broken, {})).rejects.toBeInstanceOf(ConfigError);
    const nested = join(dir, 'nested.json');
    await writeFile(nested, JSON.stringify({ Values: { PORT: { value: 1 } } }));
    await expect(readSettingsFile(nested, {})).rejects.toThrow(/is not a valid settings file/);
  });
});

describe('parseLocalRuntimeSettings', () => {
  it('applies the documented defaults', () => {
    expect(parseLocalRuntimeSettings({})).toEqual({
      port: 7071,
      dataDir: '.local-data',
      webRoot: 'dist/web',
      logLevel: 'information',
      corsAllowedOrigins: [],
      allowedHosts: [],
      offlineModel: { ttftMs: 200, tokensPerSecond: 60 },
      cosmosThread: 'worker',
      azureLatency: undefined,
    });
  });

  it("runs the Cosmos DB server on a worker thread unless asked for the caller's", () => {
    expect(parseLocalRuntimeSettings({}).cosmosThread).toBe('worker');
    expect(parseLocalRuntimeSettings({ LOCAL_COSMOS_THREAD: 'caller' }).cosmosThread).toBe('caller');
    expect(() => parseLocalRuntimeSettings({ LOCAL_COSMOS_THREAD: 'process' })).toThrow(
      /LOCAL_COSMOS_THREAD/,
    );
  });

  it('reads the Azure latency model, its seed and task hub, and refuses an unknown one', () => {
    expect(parseLocalRuntimeSettings({ LOCAL_AZURE_LATENCY: 'azure' }).azureLatency).toEqual({
      seed: 1,
      taskHub: 'azure-storage',
    });
    expect(
      parseLocalRuntimeSettings({
        LOCAL_AZURE_LATENCY: 'azure',
        LOCAL_AZURE_LATENCY_SEED: '42',
        LOCAL_AZURE_TASK_HUB: 'durable-task-scheduler',
      }).azureLatency,
    ).toEqual({ seed: 42, taskHub: 'durable-task-scheduler' });
    expect(() => parseLocalRuntimeSettings({ LOCAL_AZURE_LATENCY: 'slow' })).toThrow(
      /LOCAL_AZURE_LATENCY: must be "off" or "azure"/,
    );
    expect(() => parseLocalRuntimeSettings({ LOCAL_AZURE_TASK_HUB: 'netherite' })).toThrow(
      /LOCAL_AZURE_TASK_HUB: must be "azure-storage" or "durable-task-scheduler"/,
    );
  });

  it('reads LOCAL_ALLOWED_HOSTS as comma-separated host names, and refuses a URL or a port', () => {
    expect(
      parseLocalRuntimeSettings({ LOCAL_ALLOWED_HOSTS: ' devbox.internal , Chat.LAN ' }).allowedHosts,
    ).toEqual(['devbox.internal', 'Chat.LAN']);
    for (const bad of ['http://devbox', 'devbox:7071'])
      expect(() => parseLocalRuntimeSettings({ LOCAL_ALLOWED_HOSTS: bad })).toThrow(
        /LOCAL_ALLOWED_HOSTS: must be host names/,
      );
  });

  it('reads CORS origins as a comma-separated list or *, and refuses anything else', () => {
    const origins = (text: string) =>
      parseLocalRuntimeSettings({ CORS_ALLOWED_ORIGINS: text }).corsAllowedOrigins;
    expect(origins(' http://localhost:5173 , https://chat.example.com ')).toEqual([
      'http://localhost:5173',
      'https://chat.example.com',
    ]);
    expect(origins('*')).toEqual(['*']);
    expect(origins('')).toEqual([]);
    for (const bad of ['localhost:5173', 'http://a.test/path', 'ftp://a.test', 'http://a.test,,'])
      expect(() => origins(bad)).toThrow(/CORS_ALLOWED_ORIGINS: must be origins such as/);
  });

  it('names each malformed setting at once', () => {
    expect(() => parseLocalRuntimeSettings({ PORT: '70000', LOG_LEVEL: 'loud' })).toThrow(
      /PORT: must be at most 65535[\s\S]*LOG_LEVEL: must be trace, debug, information \(info\), warning \(warn\)/,
    );
  });

  it('takes the common spellings of a log level, in any case', () => {
    const level = (text: string) => parseLocalRuntimeSettings({ LOG_LEVEL: text }).logLevel;
    expect(level('info')).toBe('information');
    expect(level('INFO')).toBe('information');
    expect(level('Information')).toBe('information');
    expect(level('warn')).toBe('warning');
    expect(level('WARNING')).toBe('warning');
    expect(level('debug')).toBe('debug');
    expect(level('verbose')).toBe('trace');
    expect(level('error')).toBe('error');
    expect(level('fatal')).toBe('critical');
    expect(level('off')).toBe('none');
    expect(level('None')).toBe('none');
    expect(level(' info ')).toBe('information');
  });
});
