// Which adapter holds the hot store (HOT_STORE): Cosmos DB's `hot-conversations` container, or Redis.
import { choiceSetting, defineSettings, type SettingValues } from '../settings/setting.js';

export const hotStoreSettings = defineSettings({
  HOT_STORE: choiceSetting(['cosmos', 'redis'], {
    default: 'cosmos',
    help:
      'Where working memory and running turns live: "cosmos" (the hot-conversations container, pay per use) or ' +
      '"redis" (Azure Managed Redis, or any Redis locally).',
    azure: { kind: 'default' },
  }),
});

export interface HotStoreConfig {
  kind: 'cosmos' | 'redis';
}

export function hotStoreConfig(values: SettingValues<typeof hotStoreSettings>): HotStoreConfig {
  return { kind: values.HOT_STORE };
}
