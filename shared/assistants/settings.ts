// Who may publish an assistant to everyone (ASSISTANTS_PUBLISHERS).
import { defineSettings, textSetting, type SettingValues } from '../settings/setting.js';

export const assistantSettings = defineSettings({
  ASSISTANTS_PUBLISHERS: textSetting({
    default: '',
    sample: '',
    help:
      'Who may make an assistant public (visible to every user): "*" for everyone, or user ids and `group:<id>` ' +
      'entries (an Entra ID group in the caller’s `groups` claim), comma-separated. Empty: nobody; assistants ' +
      'stay private to their owner.',
    azure: { kind: 'default' },
  }),
});

/** Who may publish: everyone, or the users and groups listed. */
export interface PublishPolicy {
  everyone: boolean;
  users: string[];
  groups: string[];
}

export function publishPolicy(values: SettingValues<typeof assistantSettings>): PublishPolicy {
  const entries = values.ASSISTANTS_PUBLISHERS.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return {
    everyone: entries.includes('*'),
    users: entries.filter((entry) => entry !== '*' && !entry.startsWith('group:')),
    groups: entries
      .filter((entry) => entry.startsWith('group:'))
      .map((entry) => entry.slice('group:'.length)),
  };
}
