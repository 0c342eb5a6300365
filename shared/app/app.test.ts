// The composition root's choice of hot store: Cosmos DB by default, and a store this build cannot open refused at
// start-up with the setting named, before any client is made.
import { describe, expect, it } from 'vitest';
import { RecordingPublisher, testConfig } from '../../test/support/in-memory-ports.js';
import { ConfigError } from '../settings/setting.js';
import { createApp, type Platform } from './app.js';

const platform: Platform = {
  credential: { getToken: () => Promise.resolve(null) },
  publisher: new RecordingPublisher(),
  orchestrations: () => {
    throw new Error('No orchestration is started here.');
  },
  healthChecks: () => [],
  close: () => Promise.resolve(),
};

describe('createApp: the hot store', () => {
  it('composes over Cosmos DB by default', async () => {
    const app = createApp(testConfig(), platform);
    expect(app.config.hotStore).toEqual({ kind: 'cosmos' });
    await app.close();
  });

  it('refuses HOT_STORE=redis while this build has no Redis adapter, naming the setting', () => {
    expect(() => createApp(testConfig({ HOT_STORE: 'redis' }), platform)).toThrow(ConfigError);
    expect(() => createApp(testConfig({ HOT_STORE: 'redis' }), platform)).toThrow(/HOT_STORE/);
  });
});
