// infra/ through the real Bicep compiler: main.bicep builds and lints with no error and no warning under
// infra/bicepconfig.json, whose rules are errors, and those rule names are ones the compiler knows.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bicepCompiler, BICEP_VERSION } from '../support/bicep-compiler.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const configFile = path.join(repoRoot, 'infra', 'bicepconfig.json');
const compiler = bicepCompiler();
// In CI a missing compiler is a failure; elsewhere (no .NET SDK) the tests skip and say why.
if (!compiler.ok) {
  if (process.env.CI) throw new Error(`the Bicep compiler is required in CI: ${compiler.reason}`);
  console.warn(`skipping the Bicep compiler tests: ${compiler.reason}`);
} else console.warn(`Bicep compiler: ${compiler.version}`);

const run = (args: string[], input?: string) => {
  if (!compiler.ok) throw new Error(compiler.reason);
  return compiler.run(args, input);
};

/** The rules main.bicep is held to, each an error: what the compiler finds here fails the build. */
const RULES_THAT_MATTER = [
  'no-hardcoded-location',
  'use-secure-value-for-secure-inputs',
  'outputs-should-not-contain-secrets',
  'use-resource-symbol-reference',
  'no-unused-params',
  'no-unused-vars',
  'secure-secrets-in-params',
  'no-unnecessary-dependson',
  'no-unused-existing-resources',
  'prefer-interpolation',
  'simplify-interpolation',
  'use-parent-property',
  'use-resource-id-functions',
  'use-stable-resource-identifiers',
  'no-hardcoded-env-urls',
  'explicit-values-for-loc-params',
  'use-safe-access',
  'what-if-short-circuiting',
  'no-loc-expr-outside-params',
  'secure-parameter-default',
];

const config = JSON.parse(readFileSync(configFile, 'utf8')) as {
  analyzers: { core: { enabled: boolean; rules: Record<string, { level: string; maxAgeInDays?: number }> } };
};

describe.skipIf(!compiler.ok)('the Bicep compiler on infra/', () => {
  it(`is the pinned version ${BICEP_VERSION}`, () => {
    expect(compiler.ok && compiler.version).toContain(`Bicep CLI version ${BICEP_VERSION} `);
  });

  it('builds infra/main.bicep with no error and no warning', () => {
    const result = run(['build', 'infra/main.bicep', '--stdout']);
    expect(result.diagnostics).toEqual([]);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty('resources');
  });

  it('lints infra/main.bicep and its modules with no finding under infra/bicepconfig.json', () => {
    const result = run(['lint', 'infra/main.bicep']);
    expect(result.diagnostics).toEqual([]);
    expect(result.status).toBe(0);
  });

  it('turns the rules that matter into errors, and no rule whose verdict moves with the date', () => {
    const { core } = config.analyzers;
    expect(core.enabled).toBe(true);
    for (const rule of RULES_THAT_MATTER) expect(core.rules[rule]?.level, rule).toBe('error');
    // use-recent-api-versions judges an API version by its age on the day the linter runs: red one morning with
    // no change to the templates. It stays off; the API versions are chosen by hand.
    expect(core.rules['use-recent-api-versions']?.level).toBe('off');
    const levels = new Set(Object.values(core.rules).map((rule) => rule.level));
    expect([...levels].sort()).toEqual(['error', 'off']);
  });
});

describe.skipIf(!compiler.ok)('main.bicep evaluated by the compiler (bicep console)', () => {
  it('accepts an app registration client id only in the GUID shape', () => {
    const main = readFileSync(path.join(repoRoot, 'infra', 'main.bicep'), 'utf8');
    const check = /^var authClientIdIsGuid = ([\s\S]+?)\n(?=var |\/\/)/m.exec(main)?.[1];
    expect(check, 'main.bicep has no authClientIdIsGuid').toBeDefined();
    expect(main).toMatch(/= authClientIdIsGuid\s*\? authClientId\s*: fail\(/);
    const cases: [string, boolean][] = [
      ['0b4c1a5e-6f3d-4e2a-9c8b-7d6e5f4a3b2c', true],
      ['0B4C1A5E-6F3D-4E2A-9C8B-7D6E5F4A3B2C', true],
      ['0b4c1a5e-6f3d-4e2a-9c8b-7d6e5f4a3b2g', false],
      ['0b4c1a5e6f3d-4e2a-9c8b-7d6e5f4a3b2c-', false],
      ['api://0b4c1a5e-6f3d-4e2a-9c8b-7d6e5f', false],
      ['{0b4c1a5e-6f3d-4e2a-9c8b-7d6e5f4a3b}', false],
    ];
    const input = [
      `func isGuid(authClientId string) bool => ${check!.replace(/\s*\n\s*/g, ' ')}`,
      ...cases.map(([value]) => `isGuid('${value}')`),
      '',
    ].join('\n');
    const result = run(['console'], input);
    const answers = result.stdout
      .trim()
      .split('\n')
      .map((line) => line.trim());
    expect(answers, result.stderr).toEqual(cases.map(([, isGuid]) => String(isGuid)));
  });
  it('resolves each switch from the deployment profile unless it is given', () => {
    const main = readFileSync(path.join(repoRoot, 'infra', 'main.bicep'), 'utf8');
    const start = main.indexOf('var profiles = {');
    const end = main.indexOf('\n', main.indexOf('var chosenResourceLogs = '));
    expect(start).toBeGreaterThan(0);
    // The profiles object keeps its lines; each other declaration becomes one line, as the console reads them.
    const statements = main
      .slice(start, end)
      .split(/\n(?=var )/)
      .map((statement) =>
        statement.startsWith('var profiles') ? statement : statement.replace(/\s*\n\s*/g, ' '),
      );
    const resolve = (parameters: Record<string, string>) => {
      const input = [
        ...Object.entries(parameters).map(([name, value]) => `var ${name} = '${value}'`),
        ...statements,
        "'${chosenWebPubSubSku} ${chosenDurableAlwaysReadyInstanceCount} ${chosenDurableTaskBackend} " +
          "${chosenDurableTaskSchedulerSku} ${chosenLogAnalyticsDailyCapGb} ${chosenResourceLogs}'",
        '',
      ].join('\n');
      const result = run(['console'], input);
      return result.stdout.trim().replace(/^'|'$/g, '') || result.stdout + result.stderr;
    };
    const unset = {
      webPubSubSku: '',
      functionDurableAlwaysReadyInstanceCount: '',
      durableTaskBackend: '',
      durableTaskSchedulerSku: '',
      logAnalyticsDailyCapGb: '',
      resourceLogs: '',
    };
    expect(resolve({ deploymentProfile: 'trial', ...unset })).toBe(
      'Free_F1 0 azure-storage Consumption 0.5 none',
    );
    expect(resolve({ deploymentProfile: 'production', ...unset })).toBe(
      'Standard_S1 1 azure-storage Consumption -1 all',
    );
    // A value given wins over the profile's.
    expect(
      resolve({
        deploymentProfile: 'trial',
        webPubSubSku: 'Standard_S1',
        functionDurableAlwaysReadyInstanceCount: '2',
        durableTaskBackend: 'durable-task-scheduler',
        durableTaskSchedulerSku: 'Dedicated',
        logAnalyticsDailyCapGb: '-1',
        resourceLogs: 'all',
      }),
    ).toBe('Standard_S1 2 durable-task-scheduler Dedicated -1 all');
  });

  it('deploys and sets the catalogue azd gives as JSON text (CHAT_MODELS), else the list, else the one model', () => {
    const main = readFileSync(path.join(repoRoot, 'infra', 'main.bicep'), 'utf8');
    const start = main.indexOf('var chatCatalogue = ');
    const end = main.indexOf('\n', main.indexOf('var defaultChatDeployment = '));
    expect(start).toBeGreaterThan(0);
    // Each declaration becomes one line, as the console reads it: the lines of an object or a list joined by commas.
    const oneLine = (statement: string) =>
      statement
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '')
        .reduce((joined, line) =>
          /[[{(?:]$|=>$/.test(joined) || /^[\]})?:]/.test(line) ? `${joined} ${line}` : `${joined}, ${line}`,
        );
    const statements = main
      .slice(start, end)
      .split(/\n(?=var |\/\/)/)
      .filter((statement) => statement.startsWith('var '))
      .map(oneLine);
    const resolve = (chatModelsJson: string, chatModels = '[]') => {
      const input = [
        // A parameter is known only at deployment: any() keeps the compiler from reading the text as it checks.
        `var chatModelsJson = any('${chatModelsJson}')`,
        `var chatModels = ${chatModels}`,
        "var chatDeploymentName = 'chat'",
        "var chatModelName = 'gpt-5.4-mini'",
        "var chatModelVersion = '2026-03-17'",
        "var openAiChatDeploymentSku = 'GlobalStandard'",
        'var chatDeploymentCapacity = 30',
        ...statements,
        "string({ deployments: map(chatDeployments, d => '${d.name}:${d.model}@${d.version}/${d.sku}/${d.capacity}'), default: defaultChatDeployment, llmModels: empty(chatCatalogue) ? '' : string(chatCatalogue) })",
        '',
      ].join('\n');
      const result = run(['console'], input);
      const text = result.stdout.trim().replace(/^'|'$/g, '');
      try {
        // The console prints a Bicep string literal: its escapes undone, it is the JSON the template made.
        const unescaped = text.replace(/\\(.)/g, (_escape, char: string) => char);
        return JSON.parse(unescaped) as { deployments: string[]; default: string; llmModels: string };
      } catch {
        throw new Error(`the console did not answer JSON: ${result.stdout}${result.stderr}`);
      }
    };
    const fromAzd =
      '[{"id":"fast","label":"Fast","deployment":{"model":"gpt-5.4-mini","version":"2026-03-17","capacity":30}},' +
      '{"id":"deep","deployment":{"model":"gpt-5","version":"2025-08-07","sku":"DataZoneStandard"}}]';
    const azd = resolve(fromAzd);
    expect(azd.deployments).toEqual([
      'fast:gpt-5.4-mini@2026-03-17/GlobalStandard/30',
      'deep:gpt-5@2025-08-07/DataZoneStandard/10',
    ]);
    expect(azd.default).toBe('fast');
    expect(JSON.parse(azd.llmModels)).toEqual(JSON.parse(fromAzd));
    // A parameters file's list, when azd gives none.
    const listed = resolve('', "[{ id: 'listed', deployment: { model: 'gpt-5', version: '2025-08-07' } }]");
    expect(listed.deployments).toEqual(['listed:gpt-5@2025-08-07/GlobalStandard/10']);
    expect(JSON.parse(listed.llmModels)).toEqual([
      { id: 'listed', deployment: { model: 'gpt-5', version: '2025-08-07' } },
    ]);
    // Neither: the one chat model, and no catalogue setting.
    expect(resolve('')).toEqual({
      deployments: ['chat:gpt-5.4-mini@2026-03-17/GlobalStandard/30'],
      default: 'chat',
      llmModels: '',
    });
  });
});

describe.skipIf(!compiler.ok)('infra/bicepconfig.json', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bicep-rules-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names rules the compiler knows: a template that breaks them gets an error from each', () => {
    copyFileSync(configFile, path.join(dir, 'bicepconfig.json'));
    const template = path.join(dir, 'broken.bicep');
    writeFileSync(
      template,
      [
        'param unusedName string',
        "param adminPassword string = ''",
        "var unusedValue = 'x'",
        'param prefix string',
        "resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {",
        "  name: concat(prefix, 'data')",
        "  location: 'westeurope'",
        "  kind: 'StorageV2'",
        "  sku: { name: 'Standard_LRS' }",
        '}',
        "resource other 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {",
        "  name: 'other'",
        '}',
        "resource blobs 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {",
        "  name: '${storage.name}/default'",
        '  dependsOn: [storage]',
        '}',
        'output keys object = storage.listKeys()',
        "output portal string = 'https://management.azure.com/x'",
        "output prefixAgain string = '${prefix}'",
        '',
      ].join('\n'),
    );
    const found = run(['lint', template]).diagnostics.map(
      (line) => /\) : (\w+) ([\w-]+):/.exec(line)?.slice(1, 3).join(' ') ?? line,
    );
    for (const rule of [
      'no-unused-params',
      'no-unused-vars',
      'secure-secrets-in-params',
      'prefer-interpolation',
      'no-hardcoded-location',
      'no-unused-existing-resources',
      'use-parent-property',
      'simplify-interpolation',
      'outputs-should-not-contain-secrets',
      'no-hardcoded-env-urls',
    ])
      expect(found, rule).toContain(`Error ${rule}`);
  });
});
