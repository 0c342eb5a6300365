// `azd up` played on the repository: the prepackage hooks run in the order azd runs them, with provisioning outputs
// only once a provision step ran; then the function app package is checked as azd zips it and loaded in a clean
// Node process, where a stand-in of the host's `@azure/functions-core` records what the app registers.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionDefinitions } from '../../functions/table.js';
import {
  prepackageHooks,
  readAzdProject,
  remoteBuildDecision,
  standInOutputs,
  upSteps,
  zippedFiles,
  type PlannedHook,
} from '../support/azd-project.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const project = readAzdProject(path.join(repoRoot, 'azure.yaml'));
const outputs = standInOutputs(readFileSync(path.join(repoRoot, 'infra/main.bicep'), 'utf8'));
const scratch = mkdtempSync(path.join(tmpdir(), 'azd-up-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Where each service's hook stages its package (`--out`), instead of the repository's own .deploy/ and dist/. */
const outDir = (service: string) => path.join(scratch, 'out', service);
const stubBin = path.join(scratch, 'bin');
const npmLog = path.join(scratch, 'npm.log');

/**
 * An `npm` first on the hooks' PATH: `run build` is the real build (`tsc -p tsconfig.json`), and `ci` records its
 * arguments and hard-links the locked production packages (not dev) from the repository's node_modules, which is
 * what `npm ci --omit=dev` installs on a Linux x64 machine, without the network or a 40 s install.
 */
function writeStandInNpm(): void {
  mkdirSync(stubBin, { recursive: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const script = `#!${process.execPath}
const { spawnSync } = require('node:child_process');
const { appendFileSync, existsSync, mkdirSync, readFileSync } = require('node:fs');
const path = require('node:path');
const [command, ...args] = process.argv.slice(2);
appendFileSync(${JSON.stringify(npmLog)}, JSON.stringify([command, ...args]) + '\\n');
if (command === 'run' && args[0] === 'build') {
  const built = spawnSync(process.execPath, [${JSON.stringify(tsc)}, '-p', 'tsconfig.json'], { stdio: 'inherit' });
  process.exit(built.status ?? 1);
}
if (command !== 'ci') { console.error('stand-in npm: unexpected npm ' + command); process.exit(1); }
const from = ${JSON.stringify(path.join(repoRoot, 'node_modules'))};
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
for (const [where, entry] of Object.entries(lock.packages)) {
  const name = where.startsWith('node_modules/') ? where.slice('node_modules/'.length) : '';
  if (name === '' || name.includes('/node_modules/') || entry.dev === true) continue;
  if (!existsSync(path.join(from, name))) continue; // an optional package of another platform
  const target = path.join('node_modules', name);
  mkdirSync(path.dirname(target), { recursive: true });
  const linked = spawnSync('cp', ['-al', path.join(from, name), target]);
  if (linked.status !== 0 && spawnSync('cp', ['-a', path.join(from, name), target]).status !== 0) process.exit(1);
}
`;
  writeFileSync(path.join(stubBin, 'npm'), script);
  chmodSync(path.join(stubBin, 'npm'), 0o755);
}

/** The environment azd gives a hook: its own variables, the environment's values, the outputs once provisioned. */
function hookEnvironment(afterProvision: boolean): NodeJS.ProcessEnv {
  return {
    PATH: `${stubBin}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? scratch,
    npm_config_cache: process.env.npm_config_cache ?? path.join(process.env.HOME ?? scratch, '.npm'),
    AZURE_ENV_NAME: 'first-try',
    AZURE_SUBSCRIPTION_ID: '00000000-0000-4000-8000-000000000000',
    AZURE_LOCATION: 'eastus2',
    ...(afterProvision ? outputs : {}),
  };
}

interface HookRun {
  hook: PlannedHook;
  status: number | null;
  output: string;
}

/** Runs a hook's posix command as azd does (`sh -c`, in the service's project folder), staging into `--out`. */
function runHook(hook: PlannedHook, env: NodeJS.ProcessEnv): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `${hook.command} --out "${outDir(hook.service)}"`], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ hook, status, output }));
  });
}

const api = project.services.find((service) => service.name === 'api')!;
const played: HookRun[] = [];

beforeAll(async () => {
  writeStandInNpm();
  // One after the other, as azd's workflow runs its steps.
  for (const hook of prepackageHooks(project, upSteps(project)))
    played.push(await runHook(hook, hookEnvironment(hook.afterProvision)));
}, 600_000);

describe('azd up on a new environment', () => {
  it('runs every prepackage hook, each with the environment it needs at that point', () => {
    expect(played.map(({ hook }) => hook.service).sort()).toEqual(
      project.services.filter((service) => service.hooks?.prepackage).map(({ name }) => name),
    );
    for (const run of played)
      expect({ service: run.hook.service, status: run.status, output: run.output }).toMatchObject({
        status: 0,
      });
  });

  it('would stop at its first step in azd’s own order, which packages before it provisions', async () => {
    const defaultOrder = prepackageHooks(
      { ...project, workflows: {} },
      upSteps({ ...project, workflows: {} }),
    );
    expect(defaultOrder.every((hook) => !hook.afterProvision)).toBe(true);
    // The web client is built against the function app's URL: without provisioning outputs its hook stops.
    const web = defaultOrder.find((hook) => hook.service === 'web')!;
    const early = await runHook(web, hookEnvironment(false));
    expect(early.status).not.toBe(0);
    expect(early.output).toMatch(/SERVICE_API_URI is not set: run `azd provision` first/);
  });

  it('installs the production dependencies alone, for Linux x64', () => {
    const installs = readFileSync(npmLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[])
      .filter(([command]) => command === 'ci');
    expect(installs).toEqual([expect.arrayContaining(['ci', '--omit=dev', '--os=linux', '--cpu=x64'])]);
  });
});

describe('the api package as azd zips it', () => {
  const stage = outDir('api');

  it('is built here, and azd accepts that: the project folder has no .funcignore leaving node_modules out', () => {
    expect(api.remoteBuild).toBe(false);
    expect(remoteBuildDecision(path.join(repoRoot, api.project), api.remoteBuild)).toBe(false);
  });

  it('holds the compiled app, host.json and the production node_modules, and none of the tooling', () => {
    const files = new Set(zippedFiles(stage, api));
    for (const file of [
      'dist/functions/index.js',
      'dist/shared/app/app.js',
      'host.json',
      'package.json',
      'node_modules/@azure/functions/package.json',
      'node_modules/durable-functions/package.json',
      'node_modules/zod/package.json',
    ])
      expect(files.has(file), file).toBe(true);
    const packages = new Set(
      [...files].map((file) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]),
    );
    for (const devOnly of ['typescript', 'vitest', 'vite', 'tsx', '@vercel/cosmosdb-server', 'eslint'])
      expect(packages.has(devOnly), devOnly).toBe(false);
    expect(
      [...files].filter((file) => /^(dist\/local|functions|shared|web|infra|test)\//.test(file)),
    ).toEqual([]);
  });

  it('registers with the Functions host exactly the functions of the one table', () => {
    // Outside the host, @azure/functions finds no `@azure/functions-core` and registers nothing (test mode). The
    // host provides that module from outside the app: here a stand-in beside the package records each registration.
    const core = path.join(scratch, 'out', 'node_modules', '@azure', 'functions-core');
    mkdirSync(core, { recursive: true });
    writeFileSync(
      path.join(core, 'package.json'),
      JSON.stringify({ name: '@azure/functions-core', main: 'index.js' }),
    );
    writeFileSync(
      path.join(core, 'index.js'),
      `const registered = (globalThis.registeredFunctions = []);
module.exports = {
  setProgrammingModel() {},
  registerFunction(metadata) { registered.push(metadata); return { dispose() {} }; },
  registerHook() { return { dispose() {} }; },
  log() {},
};`,
    );
    const load = `import(${JSON.stringify(path.join(stage, JSON.parse(readFileSync(path.join(stage, 'package.json'), 'utf8')).main as string))}).then(() => {
  console.log('REGISTERED ' + JSON.stringify(globalThis.registeredFunctions));
  process.exit(0);
});`;
    const loaded = spawnSync(process.execPath, ['-e', load], {
      cwd: stage,
      encoding: 'utf8',
      timeout: 120_000,
      env: {
        PATH: process.env.PATH ?? '',
        APP_ENV: 'azure',
        COSMOS_ENDPOINT: 'https://acct.documents.azure.com:443/',
        ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net',
        WEBPUBSUB_ENDPOINT: 'https://wps.webpubsub.azure.com',
        LLM_PROVIDER: 'azure-openai',
        AZURE_OPENAI_ENDPOINT: 'https://aoai.openai.azure.com',
        AZURE_OPENAI_CHAT_DEPLOYMENT: 'chat',
        AZURE_OPENAI_EMBEDDING_DEPLOYMENT: 'embeddings',
        WEBSITE_AUTH_ENABLED: 'True',
      },
    });
    const line = /^REGISTERED (.*)$/m.exec(loaded.stdout)?.[1];
    expect(line, loaded.stderr).toBeDefined();
    const registered = (JSON.parse(line!) as Registration[]).map(summary).sort(byName);
    expect(registered).toEqual(functionDefinitions.map(declared).sort(byName));
    expect(registered.length).toBeGreaterThan(20);
  });
});

interface Binding {
  type: string;
  direction: string;
  route?: string;
  methods?: string[];
  queueName?: string;
  topicName?: string;
  subscriptionName?: string;
  isSessionsEnabled?: boolean;
  schedule?: string;
}
interface Registration {
  name: string;
  bindings: Record<string, Binding>;
}
interface Summary {
  name: string;
  trigger: Partial<Binding>;
  durableClient: boolean;
}

const byName = (a: Summary, b: Summary) => a.name.localeCompare(b.name);

function summary(registration: Registration): Summary {
  const bindings = Object.values(registration.bindings);
  const trigger = bindings.find((binding) => /trigger$/i.test(binding.type))!;
  const { type, route, methods, queueName, topicName, subscriptionName, isSessionsEnabled, schedule } =
    trigger;
  return {
    name: registration.name,
    trigger: Object.fromEntries(
      Object.entries({
        type,
        route,
        methods,
        queueName,
        topicName,
        subscriptionName,
        isSessionsEnabled,
        schedule,
      }).filter(([, value]) => value !== undefined),
    ),
    durableClient: bindings.some((binding) => binding.type === 'durableClient'),
  };
}

function declared(definition: (typeof functionDefinitions)[number]): Summary {
  const durableClient = 'usesDurableClient' in definition && definition.usesDurableClient === true;
  switch (definition.kind) {
    case 'http':
      return {
        name: definition.name,
        trigger: { type: 'httpTrigger', route: definition.route, methods: definition.methods },
        durableClient,
      };
    case 'serviceBus':
      return {
        name: definition.name,
        trigger: {
          type: 'serviceBusTrigger',
          ...definition.source,
          isSessionsEnabled: definition.isSessionsEnabled,
        },
        durableClient,
      };
    case 'timer':
      return {
        name: definition.name,
        trigger: { type: 'timerTrigger', schedule: definition.schedule },
        durableClient,
      };
    case 'orchestration':
      return { name: definition.name, trigger: { type: 'orchestrationTrigger' }, durableClient };
    case 'activity':
      return { name: definition.name, trigger: { type: 'activityTrigger' }, durableClient };
  }
}
