// Settings of the user's data (ACCOUNT_*, ERASE_*): how long a data archive is kept, how its link is given, and
// what erasing a user does with their usage records.
import { choiceSetting, defineSettings, intSetting, type SettingValues } from '../settings/setting.js';

export const accountSettings = defineSettings({
  ACCOUNT_EXPORT_TTL_HOURS: intSetting({
    default: 24,
    min: 1,
    max: 24 * 30,
    help:
      '"Download all my data": how long an archive is kept after it is asked for; then its blob is deleted and its ' +
      'status is gone (404).',
    azure: { kind: 'default' },
  }),
  ACCOUNT_EXPORT_LINK: choiceSetting(['app', 'sas'], {
    default: 'app',
    help:
      'How a ready archive is handed out: "app" (a route of this API that streams it to its owner, with their ' +
      'token) or "sas" (a user delegation SAS to the blob, read-only, valid 15 minutes; the app\'s identity ' +
      'signs it, so it needs no account key).',
    azure: { kind: 'default' },
  }),
  ERASE_USAGE_RECORDS: choiceSetting(['delete', 'keep-anonymised'], {
    default: 'delete',
    help:
      '"Delete all my data" and usage records: "delete" (the default: nothing of the user stays) or ' +
      '"keep-anonymised" (each record of a model call stays for billing and capacity figures, its user and ' +
      'conversation replaced by a one-way hash, which no request can name).',
    azure: { kind: 'default' },
  }),
});

export interface AccountConfig {
  exportTtlHours: number;
  exportLink: 'app' | 'sas';
  eraseUsageRecords: 'delete' | 'keep-anonymised';
}

export function accountConfig(values: SettingValues<typeof accountSettings>): AccountConfig {
  return {
    exportTtlHours: values.ACCOUNT_EXPORT_TTL_HOURS,
    exportLink: values.ACCOUNT_EXPORT_LINK,
    eraseUsageRecords: values.ERASE_USAGE_RECORDS,
  };
}
