// Setting rows: each constructor parses text the way its help says, blank is unset, defaults apply, and every
// problem is collected and reported with the setting's help.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  choiceSetting,
  defineSettings,
  intSetting,
  parseJsonSetting,
  readSettings,
  settingsOf,
  SettingProblems,
  textSetting,
  urlSetting,
  type ConfigError,
} from './setting.js';

const rows = defineSettings({
  NAME: textSetting({
    default: 'chat',
    pattern: [/^[a-z]+$/, 'must be lower-case letters'],
    help: 'A name.',
    azure: { kind: 'bicep' },
  }),
  OPTIONAL: textSetting({ help: 'Optional text.', azure: { kind: 'default' } }),
  LIMIT: intSetting({ default: 8, min: 1, max: 10, help: 'A limit.', azure: { kind: 'default' } }),
  MODE: choiceSetting(['a', 'b'], { help: 'A mode.', azure: { kind: 'bicep' } }),
  ENV: choiceSetting(['x', 'y'], { required: true, help: 'Required.', azure: { kind: 'bicep' } }),
  URL: urlSetting({ help: 'An endpoint.', azure: { kind: 'never', reason: 'local only' } }),
});

function read(env: Record<string, string | undefined>) {
  const problems = new SettingProblems(settingsOf(rows));
  const values = readSettings(rows, env, problems);
  return {
    values,
    problems,
    error: (() => {
      try {
        problems.throwIfAny();
      } catch (e) {
        return e as ConfigError;
      }
      return undefined;
    })(),
  };
}

describe('setting rows', () => {
  it('apply defaults, treat blank as unset, and parse each kind', () => {
    const { values, error } = read({
      ENV: ' x ',
      OPTIONAL: '  ',
      LIMIT: '',
      URL: 'http://localhost:1/v1',
      MODE: 'b',
    });
    expect(error).toBeUndefined();
    expect(values).toEqual({
      NAME: 'chat',
      OPTIONAL: undefined,
      LIMIT: 8,
      MODE: 'b',
      ENV: 'x',
      URL: 'http://localhost:1/v1',
    });
  });

  it('collect every problem, naming each setting with its help', () => {
    const { error } = read({ NAME: 'Chat', LIMIT: '11', MODE: 'c', URL: 'ftp://x' });
    expect(error?.problems).toEqual([
      { setting: 'NAME', problem: 'must be lower-case letters' },
      { setting: 'LIMIT', problem: 'must be at most 10' },
      { setting: 'MODE', problem: 'must be "a" or "b"' },
      { setting: 'ENV', problem: 'missing' },
      { setting: 'URL', problem: 'must be an http(s) URL' },
    ]);
    expect(error?.message).toMatch(/ {2}- LIMIT: must be at most 10\. A limit\./);
    expect(read({ ENV: 'x', LIMIT: '2.5' }).error?.problems).toEqual([
      { setting: 'LIMIT', problem: 'must be a whole number' },
    ]);
  });

  it('carry their name, sample and default for the generated files', () => {
    const [name, , limit] = settingsOf(rows);
    expect(name).toMatchObject({ name: 'NAME', sample: 'chat', defaultText: 'chat', applies: 'app' });
    expect(limit).toMatchObject({ name: 'LIMIT', sample: '8', defaultText: '8' });
  });
});

describe('parseJsonSetting', () => {
  const schema = z.string().transform((text, context) =>
    parseJsonSetting(text, z.array(z.object({ id: z.string() })), context, {
      what: 'a list of things',
      hint: 'e.g. [{"id":"a"}]',
      example: '[{"id":"a"}]',
    }),
  );

  it('gives the parsed value of valid JSON', () => {
    expect(schema.parse('[{"id":"a"}]')).toEqual([{ id: 'a' }]);
  });

  it('says when the text is not JSON, and where the JSON is not of the schema', () => {
    expect(schema.safeParse('[{').error?.issues[0]?.message).toBe('must be JSON, e.g. [{"id":"a"}]');
    expect(schema.safeParse('[{"id":1}]').error?.issues[0]?.message).toMatch(
      /^is not a list of things at 0\.id: .+ \(e\.g\. \[\{"id":"a"\}\]\)$/,
    );
  });
});
