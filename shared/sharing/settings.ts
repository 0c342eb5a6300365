// Settings of sharing by link: whether owners may share conversations at all, and where the shared page lives
// when the API is reached at another origin than the web client.
import { choiceSetting, defineSettings, urlSetting, type SettingValues } from '../settings/setting.js';

export const sharingSettings = defineSettings({
  SHARING: choiceSetting(['on', 'off'], {
    default: 'on',
    help:
      '"off" turns sharing by link off for everyone: creating, opening, listing and copying shares answer 403 ' +
      '(a problem saying so), and existing links stop working until it is on again (they are kept; revoke them with DELETE).',
    azure: { kind: 'default' },
  }),
  SHARE_PAGE_URL: urlSetting({
    help:
      "The web client's address, e.g. https://chat.example.com: a share's link is {this}/s/{shareId}. Empty: the " +
      'origin the request came to (the local runtime, and a Static Web App whose /api is the function app).',
    azure: { kind: 'default' },
  }),
});

export interface SharingConfig {
  enabled: boolean;
  /** Without a trailing slash; undefined: the request's origin. */
  pageUrl: string | undefined;
}

export function sharingConfig(values: SettingValues<typeof sharingSettings>): SharingConfig {
  return {
    enabled: values.SHARING === 'on',
    pageUrl: values.SHARE_PAGE_URL?.replace(/\/+$/, ''),
  };
}
