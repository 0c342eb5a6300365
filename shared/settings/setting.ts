// A setting is one row: how its text is parsed, its default, its help, the sample value that works locally,
// where it applies and whether infra/ sets it in Azure. The parser, the error messages, local.settings.sample.json
// and infra/generated/definitions.json are all derived from the rows (scripts/generate-definitions.ts).
import { z } from 'zod';

/** Who reads a setting. */
export type SettingScope =
  /** The app's own code. */
  | 'app'
  /** The Functions host itself (trigger connections, the task hub's storage), never the app's code. */
  | 'host'
  /** Only the local runtime (`npm start`). */
  | 'local-only';

/** What happens to a setting in Azure. */
export type SettingInAzure =
  /** infra/ sets it on the function app. */
  | { kind: 'bicep' }
  /** infra/ leaves it out: the code default applies, and an operator may set it in the portal. */
  | { kind: 'default' }
  /** App Service sets it itself; nobody else should. */
  | { kind: 'platform' }
  /** It must not be set in Azure, for the reason given. */
  | { kind: 'never'; reason: string };

export interface Setting<T> {
  name: string;
  help: string;
  /** The value local.settings.sample.json shows: one that works locally when the file is copied as it is. */
  sample: string;
  applies: SettingScope;
  azure: SettingInAzure;
  /** The default as it would be written, for help and docs; undefined when there is none. */
  defaultText: string | undefined;
  /** Parses the trimmed text (undefined when absent or blank) into the value. */
  schema: z.ZodType<T, string | undefined>;
}

/** What every constructor takes; the name comes from the key the row is declared under. */
interface RowOptions {
  help: string;
  /** Default: the default value, or empty. */
  sample?: string;
  applies?: SettingScope;
  azure: SettingInAzure;
}

/** A row before it is given its name (the key of the group it is declared in). */
export type SettingRow<T> = Omit<Setting<T>, 'name'>;

export type SettingGroup = Readonly<Record<string, SettingRow<unknown>>>;

export type SettingValues<G extends SettingGroup> = {
  -readonly [K in keyof G]: G[K] extends SettingRow<infer T> ? T : never;
};

function row<T>(options: RowOptions, schema: z.ZodType<T, string | undefined>, defaultText?: string) {
  return {
    help: options.help,
    sample: options.sample ?? defaultText ?? '',
    applies: options.applies ?? 'app',
    azure: options.azure,
    defaultText,
    schema,
  } satisfies SettingRow<T>;
}

const present = z.string({ error: 'missing' });

/** Free text; undefined when unset unless a default is given. */
export function textSetting(
  options: RowOptions & { default: string; pattern?: [RegExp, string] },
): SettingRow<string>;
export function textSetting(
  options: RowOptions & { pattern?: [RegExp, string] },
): SettingRow<string | undefined>;
export function textSetting(
  options: RowOptions & { default?: string; pattern?: [RegExp, string] },
): SettingRow<string | undefined> {
  let text = present;
  if (options.pattern) text = text.regex(options.pattern[0], options.pattern[1]);
  return row(options, withDefault(text, options.default), options.default);
}

/** An http(s) URL; undefined when unset. */
export function urlSetting(options: RowOptions): SettingRow<string | undefined> {
  return row(
    options,
    present.pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })).optional(),
  );
}

/** A whole number within bounds, with a default. */
export function intSetting(
  options: RowOptions & { default: number; min?: number; max?: number; error?: string },
): SettingRow<number> {
  const min = options.min ?? 0;
  const max = options.max ?? 1_000_000;
  const number = present
    .regex(/^-?\d+$/, options.error ?? 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
  return row(options, withDefault(number, options.default), String(options.default));
}

/** One of a few words; undefined when unset unless a default is given. */
export function choiceSetting<const V extends string>(
  values: readonly [V, ...V[]],
  options: ChoiceOptions & ({ default: V } | { required: true }),
): SettingRow<V>;
export function choiceSetting<const V extends string>(
  values: readonly [V, ...V[]],
  options: ChoiceOptions,
): SettingRow<V | undefined>;
export function choiceSetting<const V extends string>(
  values: readonly [V, ...V[]],
  options: ChoiceOptions & { default?: V; required?: true },
): SettingRow<V | undefined> {
  const words = values.map((value) => `"${value}"`);
  const error =
    options.error ??
    `must be ${words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`}`;
  const choice = present.pipe(z.enum(values, { error }));
  return row(options, options.required ? choice : withDefault(choice, options.default), options.default);
}

interface ChoiceOptions extends RowOptions {
  /** Replaces the generated "must be ..." message. */
  error?: string;
}

function withDefault<T>(schema: z.ZodType<T, string>, fallback: T): z.ZodType<T, string | undefined>;
function withDefault<T>(
  schema: z.ZodType<T, string>,
  fallback: T | undefined,
): z.ZodType<T | undefined, string | undefined>;
function withDefault<T>(
  schema: z.ZodType<T, string>,
  fallback: T | undefined,
): z.ZodType<T | undefined, string | undefined> {
  return fallback === undefined
    ? schema.optional()
    : schema.optional().transform((value) => value ?? fallback);
}

/** Gives each row its name, the key it is declared under. */
export function defineSettings<const G extends SettingGroup>(
  group: G,
): { [K in keyof G]: G[K] & { name: K & string } } {
  return Object.fromEntries(
    Object.entries(group).map(([name, settingRow]) => [name, { ...settingRow, name }]),
  ) as { [K in keyof G]: G[K] & { name: K & string } };
}

/** Every row of some groups, in declaration order. */
export function settingsOf(...groups: readonly SettingGroup[]): Setting<unknown>[] {
  return groups.flatMap((group) =>
    Object.entries(group).map(([name, settingRow]) => ({ ...settingRow, name })),
  );
}

export type Environment = Readonly<Record<string, string | undefined>>;

export interface SettingProblem {
  setting: string;
  problem: string;
}

/** Start-up failure listing every bad setting, each with how to fix it. */
export class ConfigError extends Error {
  constructor(
    readonly problems: readonly SettingProblem[],
    help: (setting: string) => string | undefined = () => undefined,
  ) {
    super(
      'Invalid configuration:\n' +
        problems
          .map(({ setting, problem }) => {
            const text = help(setting);
            return `  - ${setting}: ${problem}${text ? `. ${text}` : ''}`;
          })
          .join('\n') +
        '\nSet these in local.settings.json (Values) or the environment; local.settings.sample.json lists every setting.',
    );
    this.name = 'ConfigError';
  }
}

/** Collects problems in the order they are found, and throws them all at once with each setting's help. */
export class SettingProblems {
  readonly #problems: SettingProblem[] = [];
  readonly #help: Map<string, string>;

  constructor(settings: readonly Setting<unknown>[]) {
    this.#help = new Map(settings.map((setting) => [setting.name, setting.help]));
  }

  add(setting: string, problem: string): void {
    this.#problems.push({ setting, problem });
  }

  get count(): number {
    return this.#problems.length;
  }

  throwIfAny(): void {
    if (this.#problems.length > 0) throw new ConfigError(this.#problems, (name) => this.#help.get(name));
  }
}

/**
 * Parses a group's rows from an environment; every row that fails is added to `problems` (absent and required:
 * "missing"), and its value is then undefined — callers stop at the first check of `problems`.
 */
export function readSettings<G extends SettingGroup>(
  group: G,
  env: Environment,
  problems: SettingProblems,
): SettingValues<G> {
  const values: Record<string, unknown> = {};
  for (const [name, settingRow] of Object.entries(group)) {
    const text = env[name]?.trim();
    const parsed = settingRow.schema.safeParse(text === '' ? undefined : text);
    if (parsed.success) values[name] = parsed.data;
    else problems.add(name, parsed.error.issues[0]?.message ?? 'is invalid');
  }
  return values as SettingValues<G>;
}

/**
 * A setting whose value is JSON of `schema`, read inside a zod transform: the parsed value, or `undefined` with one
 * issue (the transform then returns `z.NEVER`) saying the text is not JSON, or which part of it is not `what` (the first problem's path and message, then
 * `hint`, such as the expected shape and an example).
 */
export function parseJsonSetting<T>(
  text: string,
  schema: z.ZodType<T>,
  context: z.RefinementCtx,
  described: { what: string; hint: string; example: string },
): T | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    context.addIssue({ code: 'custom', message: `must be JSON, e.g. ${described.example}` });
    return undefined;
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  context.addIssue({
    code: 'custom',
    message: `is not ${described.what}${where}: ${issue?.message ?? 'invalid'} (${described.hint})`,
  });
  return undefined;
}
