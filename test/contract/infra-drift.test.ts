// Keeps infra/ in step with the code (the compiler tests say it is valid Bicep): the generated definitions match
// shared/, the templates read only what the definitions hold, the function app has exactly the settings the code
// declares, and no template hands out or allows keys. Checks of the template text, naming the file and line to fix.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  allSettings,
  buildInfraDefinitions,
  buildSampleSettings,
  SAMPLE_SETTINGS_PATH,
  DEFINITIONS_PATH,
  GENERATE_COMMAND,
  type InfraDefinitions,
} from '../../scripts/generate-definitions.js';
import { loadConfig } from '../../shared/app/config.js';
import { cosmosContainers, COSMOS_DATABASE } from '../../shared/app/cosmos-containers.js';
import { MAX_DELIVERY_COUNT, SUBSCRIPTION_MESSAGE_TTL } from '../../shared/messaging/service-bus-entities.js';
import { serviceBusQueues, serviceBusTopics } from '../../shared/app/service-bus-entities.js';
import { WEB_PUBSUB_HUB } from '../../shared/streaming/contracts.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const infraDir = path.join(repoRoot, 'infra');
const mainTemplate = path.join(infraDir, 'main.bicep');
const functionAppTemplate = path.join(infraDir, 'modules', 'function-app.bicep');

const read = (file: string) => readFileSync(file, 'utf8');
const relative = (file: string) => path.relative(repoRoot, file);

function bicepFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return bicepFiles(full);
    return entry.name.endsWith('.bicep') ? [full] : [];
  });
}

// --- A small reader of Bicep text: comments out, strings kept, brackets matched. -----------------------------------

/** Blanks out // and /* *\/ comments (keeping offsets and line breaks) without touching '...' strings. */
function stripComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === '\\') out += text[++i] ?? '';
      else if (char === "'") inString = false;
    } else if (char === "'") {
      inString = true;
      out += char;
    } else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out += ' '.repeat(stop - i);
      i = stop - 1;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop - 1;
    } else out += char;
  }
  return out;
}

/** Blanks the literal parts of '...' strings, keeping `${...}` interpolations: what is left is code. */
function codeOnly(text: string): string {
  let out = '';
  // Each entry is the brace depth of an open interpolation; empty = outside any string.
  const interpolations: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      if (char === '\\') {
        out += '  ';
        i++;
      } else if (char === "'") {
        inString = false;
        out += char;
      } else if (text.startsWith('${', i)) {
        inString = false;
        interpolations.push(0);
        out += '${';
        i++;
      } else out += char === '\n' ? char : ' ';
      continue;
    }
    const depth = interpolations.length > 0 ? interpolations[interpolations.length - 1]! : undefined;
    if (depth !== undefined && char === '}' && depth === 0) {
      interpolations.pop();
      inString = true;
      out += char;
      continue;
    }
    if (depth !== undefined && (char === '{' || char === '}'))
      interpolations[interpolations.length - 1] = depth + (char === '{' ? 1 : -1);
    if (char === "'") inString = true;
    out += char;
  }
  return out;
}

/** The text from the bracket at `open` to its matching close, inclusive. */
function bracketBlock(text: string, open: number): string {
  const pairs: Record<string, string> = { '{': '}', '[': ']', '(': ')' };
  const stack: string[] = [];
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      if (char === '\\') i++;
      else if (char === "'") inString = false;
    } else if (char === "'") inString = true;
    else if (pairs[char]) stack.push(pairs[char]);
    else if (char === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return text.slice(open, i + 1);
    }
  }
  throw new Error(`unbalanced bracket at offset ${open}`);
}

interface Template {
  file: string;
  /** Comment-free text. */
  text: string;
}

const loadTemplate = (file: string): Template => ({ file, text: stripComments(read(file)) });
const templates = bicepFiles(infraDir).map(loadTemplate);
const lineOf = (template: Template, offset: number) =>
  `${relative(template.file)}:${template.text.slice(0, offset).split('\n').length}`;

interface Declaration {
  symbol: string;
  type: string;
  existing: boolean;
  body: string;
  where: string;
}

function resourceDeclarations(template: Template): Declaration[] {
  const header = /^resource\s+(\w+)\s+'([^'@]+)@[^']+'\s+(existing\s+)?=/gm;
  return [...template.text.matchAll(header)].map((match) => {
    const open = template.text.indexOf('{', match.index + match[0].length);
    return {
      symbol: match[1]!,
      type: match[2]!,
      existing: match[3] !== undefined,
      body: bracketBlock(template.text, open),
      where: lineOf(template, match.index),
    };
  });
}

interface ModuleCall {
  symbol: string;
  target: string;
  body: string;
  where: string;
}

function moduleCalls(template: Template): ModuleCall[] {
  return [...template.text.matchAll(/^module\s+(\w+)\s+'([^']+)'\s*=/gm)].map((match) => {
    const open = template.text.indexOf('{', match.index + match[0].length);
    return {
      symbol: match[1]!,
      target: match[2]!,
      body: bracketBlock(template.text, open),
      where: lineOf(template, match.index),
    };
  });
}

/** The `key: value` lines directly inside the first `<property>: {` or `<property>: [` block of `text`. */
function propertyBlock(text: string, property: string): string | undefined {
  const match = new RegExp(`\\b${property}:\\s*([[{])`).exec(text);
  return match ? bracketBlock(text, match.index + match[0].length - 1) : undefined;
}

// --- Which values from definitions.json flow into which template names. -------------------------------------------

type Bindings = Map<string, unknown[]>;

function resolve(values: unknown[], segments: string[], readAt: string, problems: string[]): unknown[] {
  return values.flatMap((value) => {
    let current: unknown = value;
    for (const segment of segments) {
      if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) {
        problems.push(`${readAt}: "${segment}" is not in infra/generated/definitions.json`);
        return [];
      }
      current = (current as Record<string, unknown>)[segment];
    }
    return [current];
  });
}

/**
 * Follows loadJsonContent variables, `for x in ...` loops over them and module parameters fed from them, and
 * reports every property read that the JSON lacks. Returns how many reads it checked.
 */
function checkDefinitionReads(template: Template, inherited: Bindings, problems: string[]): number {
  const bindings: Bindings = new Map(inherited);
  const code = codeOnly(template.text);
  for (const match of template.text.matchAll(/^var\s+(\w+)\s*=\s*loadJsonContent\('([^']+)'\)/gm)) {
    const jsonFile = path.resolve(path.dirname(template.file), match[2]!);
    if (existsSync(jsonFile)) bindings.set(match[1]!, [JSON.parse(read(jsonFile))]);
  }
  const boundExpression = /^([A-Za-z_]\w*)((?:\.\w+)*)$/;
  const valuesOf = (expression: string, where: string): unknown[] | undefined => {
    const parts = boundExpression.exec(expression);
    const base = parts && bindings.get(parts[1]!);
    if (!parts || !base) return undefined;
    return resolve(base, parts[2]!.split('.').filter(Boolean), `${where} ${expression}`, problems);
  };

  for (const loop of code.matchAll(/\bfor\s+(?:\(\s*(\w+)\s*,\s*\w+\s*\)|(\w+))\s+in\s+([\w.]+)\s*:/g)) {
    const where = lineOf(template, loop.index);
    const values = valuesOf(loop[3]!, where);
    if (!values) continue;
    const items = values.flatMap((value) => {
      if (Array.isArray(value)) return value as unknown[];
      problems.push(`${where} loops over ${loop[3]}, which is not an array in definitions.json`);
      return [];
    });
    bindings.set((loop[1] ?? loop[2])!, items);
  }

  let reads = 0;
  for (const [name, values] of bindings) {
    for (const access of code.matchAll(new RegExp(`(?<![\\w.])${name}((?:\\.\\w+)+)`, 'g'))) {
      reads++;
      resolve(
        values,
        access[1]!.split('.').filter(Boolean),
        `${lineOf(template, access.index)} ${name}`,
        problems,
      );
    }
  }

  for (const call of moduleCalls(template)) {
    const target = path.resolve(path.dirname(template.file), call.target);
    const params = propertyBlock(call.body, 'params');
    if (!existsSync(target) || params === undefined) continue;
    const passed: Bindings = new Map();
    for (const line of params.matchAll(/^\s*(\w+):\s*([\w.]+)\s*$/gm)) {
      const values = valuesOf(line[2]!, call.where);
      if (values) passed.set(line[1]!, values);
    }
    reads += checkDefinitionReads(loadTemplate(target), passed, problems);
  }
  return reads;
}

// --- The checks. ----------------------------------------------------------------------------------------------------

describe('infra/generated/definitions.json', () => {
  const committed = JSON.parse(read(DEFINITIONS_PATH)) as InfraDefinitions;

  it('is what scripts/generate-definitions.ts generates from the code now', () => {
    expect(
      committed,
      `${relative(DEFINITIONS_PATH)} is out of date with shared/: run \`${GENERATE_COMMAND}\` and commit the result`,
    ).toEqual(buildInfraDefinitions());
  });

  it('declares the database, containers, queues, topics, subscriptions and hub of shared/', () => {
    expect(committed.cosmos.databaseName).toBe(COSMOS_DATABASE);
    expect(committed.cosmos.containers.map((c) => [c.name, c.partitionKey.paths, c.defaultTtl])).toEqual(
      cosmosContainers.map((c) => [c.id, c.partitionKeyPaths, c.defaultTtlSeconds ?? null]),
    );
    for (const [i, spec] of cosmosContainers.entries()) {
      const entry = committed.cosmos.containers[i]!;
      expect(entry.partitionKey.kind, spec.id).toBe(
        spec.partitionKeyPaths.length === 1 ? 'Hash' : 'MultiHash',
      );
      expect(entry.vectorEmbeddings, spec.id).toEqual(spec.vectorEmbeddings ?? []);
      expect(entry.vectorIndexes, spec.id).toEqual(spec.vectorIndexes ?? []);
      expect(entry.fullTextPaths, spec.id).toEqual(spec.fullTextPaths ?? []);
      expect(
        entry.fullTextIndexes.map((index) => index.path),
        spec.id,
      ).toEqual(entry.fullTextPaths.map((p) => p.path));
      expect(
        entry.excludedPaths.map((excluded) => excluded.path),
        spec.id,
      ).toEqual([
        ...entry.vectorEmbeddings.map((vector) => `${vector.path}/*`),
        ...(spec.unindexedPaths ?? []).map((path) => `${path}/?`),
        ...(spec.indexedPaths === undefined ? [] : ['/*']),
      ]);
      expect(
        entry.includedPaths.map((included) => included.path),
        spec.id,
      ).toEqual(spec.indexedPaths?.map((path) => `${path}/?`) ?? ['/*']);
    }
    expect(committed.serviceBus.queues.map((q) => [q.name, q.requiresSession])).toEqual(
      serviceBusQueues.map((q) => [q.name, q.requiresSession]),
    );
    expect(
      committed.serviceBus.topics.map((t) => [
        t.name,
        t.subscriptions.map((s) => [s.name, s.requiresSession]),
      ]),
    ).toEqual(serviceBusTopics.map((t) => [t.name, t.subscriptions.map((s) => [s.name, s.requiresSession])]));
    for (const topic of committed.serviceBus.topics)
      expect(topic.subscriptionSettings, topic.name).toEqual({
        maxDeliveryCount: MAX_DELIVERY_COUNT,
        defaultMessageTimeToLive: SUBSCRIPTION_MESSAGE_TTL,
        deadLetteringOnMessageExpiration: false,
      });
    expect(committed.webPubSub.hub).toBe(WEB_PUBSUB_HUB);
  });

  it('names only app settings that local.settings.sample.json lists', () => {
    const sample = JSON.parse(read(path.join(repoRoot, 'local.settings.sample.json'))) as {
      Values: Record<string, string>;
    };
    const missing = committed.functionApp.appSettingNames.filter((name) => !(name in sample.Values));
    expect(missing, 'app settings unknown to local.settings.sample.json').toEqual([]);
  });
});

describe('local.settings.sample.json', () => {
  const sample = JSON.parse(read(SAMPLE_SETTINGS_PATH)) as {
    IsEncrypted: boolean;
    Values: Record<string, string>;
  };

  it('lists exactly the settings the app, its host and the local runtime read, as the rows say', () => {
    expect(sample.IsEncrypted).toBe(false);
    expect(Object.keys(sample.Values)).toEqual(
      allSettings.filter((setting) => setting.azure.kind !== 'platform').map((setting) => setting.name),
    );
    expect(sample, `run \`${GENERATE_COMMAND}\` and commit the result`).toEqual(buildSampleSettings());
  });
});

describe('infra templates', () => {
  it('reference only module files that exist, and every module file is used', () => {
    const problems: string[] = [];
    const used = new Set<string>();
    for (const template of templates) {
      for (const call of moduleCalls(template)) {
        if (/^(br[:/]|ts[:/])/.test(call.target)) continue;
        const target = path.resolve(path.dirname(template.file), call.target);
        used.add(target);
        if (!existsSync(target)) problems.push(`${call.where}: module '${call.target}' does not exist`);
      }
    }
    const mainCalls = moduleCalls(loadTemplate(mainTemplate));
    expect(mainCalls.length, 'main.bicep calls no modules').toBeGreaterThan(5);
    const orphans = templates
      .filter((t) => t.file !== mainTemplate && !used.has(t.file))
      .map((t) => relative(t.file));
    expect(problems).toEqual([]);
    expect(orphans, 'module files no template calls').toEqual([]);
  });

  it('load JSON only from files that exist and parse', () => {
    const loads = templates.flatMap((template) =>
      [...template.text.matchAll(/loadJsonContent\('([^']+)'/g)].map((match) => ({
        where: lineOf(template, match.index),
        file: path.resolve(path.dirname(template.file), match[1]!),
      })),
    );
    expect(loads.length).toBeGreaterThan(0);
    for (const load of loads) {
      expect(existsSync(load.file), `${load.where}: ${relative(load.file)} does not exist`).toBe(true);
      expect(() => JSON.parse(read(load.file)) as unknown, `${load.where}: not JSON`).not.toThrow();
    }
  });

  it('read only properties that definitions.json has', () => {
    const problems: string[] = [];
    const reads = checkDefinitionReads(loadTemplate(mainTemplate), new Map(), problems);
    expect(problems).toEqual([]);
    expect(reads, 'no template reads the definitions').toBeGreaterThan(20);
  });

  it('give the function app exactly the app settings the code declares, plus the telemetry ones', () => {
    const definitions = buildInfraDefinitions();
    const block = propertyBlock(stripComments(read(functionAppTemplate)), 'appSettings');
    expect(block, 'function-app.bicep has no appSettings array').toBeDefined();
    const names = [...block!.matchAll(/\bname:\s*'([^']+)'/g)].map((match) => match[1]!);
    const duplicates = names.filter((name, index) => names.indexOf(name) !== index);
    expect(duplicates, 'app settings set twice').toEqual([]);
    const expected = definitions.functionApp.appSettingNames;
    expect(
      [...names].sort(),
      `infra/modules/function-app.bicep app settings differ from the setting rows (see ${relative(DEFINITIONS_PATH)})`,
    ).toEqual([...expected].sort());
  });

  it('connect the function app with its managed identity, never a key', () => {
    const block = propertyBlock(stripComments(read(functionAppTemplate)), 'appSettings') ?? '';
    const values = new Map(
      [...block.matchAll(/\bname:\s*'([^']+)'\s*value:\s*([^\n]+?)\s*$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const credentials = [...values].filter(([name]) => name.endsWith('__credential'));
    expect(credentials.length).toBeGreaterThanOrEqual(2);
    for (const [name, value] of credentials) expect(value, name).toBe("'managedidentity'");
    for (const [name, value] of values)
      if (name.endsWith('__clientId') || name === 'AZURE_CLIENT_ID')
        expect(value, name).toBe('identityClientId');
    expect(values.get('APP_ENV')).toBe("'azure'");
    expect(values.get('LLM_PROVIDER')).toBe("'azure-openai'");
    expect(values.get('APPLICATIONINSIGHTS_AUTHENTICATION_STRING')).toContain('Authorization=AAD');
  });

  it('give the app AUTH_* settings that shared/config.ts accepts for every auth mode the template allows', () => {
    const functionApp = loadTemplate(functionAppTemplate);
    const block = propertyBlock(functionApp.text, 'appSettings') ?? '';
    const values = new Map(
      [...block.matchAll(/\bname:\s*'([^']+)'\s*value:\s*([^\n]+?)\s*$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    // What the template writes, as expressions of its parameters; the values below follow them.
    expect(values.get('AUTH_MODE')).toBe('authMode');
    expect(values.get('AUTH_ENTRA_TENANT_ID')).toBe('authTenantId');
    expect(values.get('AUTH_ENTRA_AUDIENCE')).toBe("join(audiences, ',')");
    expect(functionApp.text).toMatch(
      /^var audiences = union\(\s*\[\s*authClientId\s+'api:\/\/\$\{authClientId\}'\s*\],\s*authAllowedAudiences\s*\)/m,
    );
    expect(functionApp.text).toMatch(
      /^@minLength\(36\)\s*@maxLength\(36\)\s*(@description\([^\n]*\)\s*)?param authClientId string$/m,
    );
    // App Service authentication is on exactly in app-service mode, which is what sets WEBSITE_AUTH_ENABLED.
    expect(functionApp.text).toMatch(/^var appServiceAuthentication = authMode == 'app-service'$/m);
    const authSettings = resourceDeclarations(functionApp).find(
      (d) => d.type === 'Microsoft.Web/sites/config',
    );
    expect(authSettings?.body).toMatch(/platform:\s*\{\s*enabled:\s*appServiceAuthentication\s*\}/);

    const allowed = /@allowed\(\[([^\]]*)\]\)\s*(?:@description\([^\n]*\)\s*)?param authMode string/.exec(
      functionApp.text,
    );
    const modes = [...(allowed?.[1] ?? '').matchAll(/'([^']+)'/g)].map((m) => m[1]!);
    expect(modes.length).toBeGreaterThan(0);
    const clientId = '0b4c1a5e-6f3d-4e2a-9c8b-7d6e5f4a3b2c';
    for (const mode of modes) {
      const env = {
        APP_ENV: 'azure',
        AZURE_CLIENT_ID: '5d3e2f1a-0b9c-4d8e-a7f6-e5d4c3b2a190',
        COSMOS_ENDPOINT: 'https://cosmos-x.documents.azure.com:443/',
        ServiceBusConnection__fullyQualifiedNamespace: 'sb-x.servicebus.windows.net',
        WEBPUBSUB_ENDPOINT: 'https://wps-x.webpubsub.azure.com',
        LLM_PROVIDER: 'azure-openai',
        AZURE_OPENAI_ENDPOINT: 'https://oai-x.openai.azure.com/',
        AZURE_OPENAI_CHAT_DEPLOYMENT: 'chat',
        AZURE_OPENAI_EMBEDDING_DEPLOYMENT: 'embedding',
        AUTH_MODE: mode,
        AUTH_ENTRA_TENANT_ID: '72f988bf-86f1-41af-91ab-2d7cd011db47',
        AUTH_ENTRA_AUDIENCE: [clientId, `api://${clientId}`].join(','),
        // App Service sets it when its authentication is on.
        ...(mode === 'app-service' ? { WEBSITE_AUTH_ENABLED: 'True' } : {}),
      };
      expect(() => loadConfig(env), `AUTH_MODE=${mode}`).not.toThrow();
    }
  });

  it('never mention the settings the code keeps out of Azure', () => {
    const { settingsNotInAzure } = buildInfraDefinitions().functionApp;
    const found = templates.flatMap((template) =>
      Object.keys(settingsNotInAzure)
        .filter((name) => template.text.includes(`'${name}'`))
        .map((name) => `${relative(template.file)} sets ${name}: ${settingsNotInAzure[name]}`),
    );
    expect(found).toEqual([]);
  });

  it('give every topic subscription the time to live and dead-letter settings of the definitions', () => {
    const topicTemplate = loadTemplate(path.join(infraDir, 'modules', 'service-bus-topic.bicep'));
    const subscription = resourceDeclarations(topicTemplate).find(
      (d) => d.type === 'Microsoft.ServiceBus/namespaces/topics/subscriptions',
    );
    for (const setting of [
      'maxDeliveryCount',
      'defaultMessageTimeToLive',
      'deadLetteringOnMessageExpiration',
    ])
      expect(subscription?.body, setting).toMatch(
        new RegExp(`\\b${setting}:\\s*topic\\.subscriptionSettings\\.${setting}\\b`),
      );
  });

  it('create each Cosmos DB container with the key, vector and full-text policies of the definitions', () => {
    const cosmos = loadTemplate(path.join(infraDir, 'modules', 'cosmos-db.bicep'));
    const containers = resourceDeclarations(cosmos).find(
      (d) => d.type === 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers',
    );
    const body = containers?.body ?? '';
    for (const rule of [
      /\bpartitionKey:\s*container\.partitionKey\b/,
      /\bvectorIndexes:\s*container\.vectorIndexes\b/,
      /\bfullTextIndexes:\s*container\.fullTextIndexes\b/,
      /\bcontainer\.excludedPaths\b/,
      /\bincludedPaths:\s*container\.includedPaths\b/,
      /\bvectorEmbeddingPolicy:\s*\{\s*vectorEmbeddings:\s*map\(container\.vectorEmbeddings,/,
      /\bdimensions:\s*embeddingDimensions\b/,
      /\bfullTextPolicy:\s*\{[^}]*\bfullTextPaths:\s*container\.fullTextPaths\b/,
    ])
      expect(body, String(rule)).toMatch(rule);
    // One vector length for the containers and the app, from the one main.bicep parameter.
    const main = loadTemplate(mainTemplate);
    for (const module of ['cosmos', 'functionApp'])
      expect(moduleCalls(main).find((call) => call.symbol === module)?.body, module).toMatch(
        /^\s*embeddingDimensions:\s*embeddingDimensions$/m,
      );
    expect(propertyBlock(loadTemplate(functionAppTemplate).text, 'appSettings')).toMatch(
      /name:\s*'LLM_EMBEDDING_DIMENSIONS'\s*value:\s*string\(embeddingDimensions\)/,
    );
  });

  it('run the function app on Flex Consumption with the Node runtime', () => {
    const functionApp = loadTemplate(functionAppTemplate);
    const plan = resourceDeclarations(functionApp).find((d) => d.type === 'Microsoft.Web/serverfarms');
    expect(plan?.body).toMatch(/name:\s*'FC1'[\s\S]*tier:\s*'FlexConsumption'/);
    const runtime = propertyBlock(functionApp.text, 'runtime');
    expect(runtime).toMatch(/name:\s*'node'/);
    expect(runtime).toMatch(/version:\s*'22'/);
  });

  it('keep the durable group always ready in the production profile, none in trial, unless told otherwise', () => {
    const text = loadTemplate(functionAppTemplate).text;
    // A conditional list (none at 0), so the block is read from its first bracket on.
    const start = text.indexOf('alwaysReady:');
    const alwaysReady = start < 0 ? undefined : bracketBlock(text, text.indexOf('[', start));
    expect(alwaysReady).toMatch(/name:\s*'durable'/);
    expect(alwaysReady).toMatch(/instanceCount:\s*durableAlwaysReadyInstanceCount/);
    const main = loadTemplate(mainTemplate).text;
    expect(main).toMatch(/^param functionDurableAlwaysReadyInstanceCount string = ''$/m);
    expect(main).toMatch(/^ {4}durableAlwaysReadyInstanceCount: 0$/m);
    expect(main).toMatch(/^ {4}durableAlwaysReadyInstanceCount: 1$/m);
    expect(main).toMatch(/durableAlwaysReadyInstanceCount:\s*chosenDurableAlwaysReadyInstanceCount/);
  });

  it('give the chat and the embedding deployment a deployment type each', () => {
    const main = loadTemplate(mainTemplate).text;
    for (const sku of ['openAiChatDeploymentSku', 'openAiEmbeddingDeploymentSku'])
      expect(main).toMatch(new RegExp(`^param ${sku} string = 'GlobalStandard'$`, 'm'));
    const openAi = loadTemplate(path.join(infraDir, 'modules', 'openai.bicep'));
    const deployments = resourceDeclarations(openAi).filter(
      (d) => d.type === 'Microsoft.CognitiveServices/accounts/deployments',
    );
    // The catalogue's chat deployments each take their entry's type; the embedding deployment its own parameter.
    expect(deployments.map((d) => /sku:\s*\{\s*name:\s*([\w.]+)/.exec(d.body)?.[1])).toEqual([
      'deployment.sku',
      'embeddingDeploymentSkuName',
    ]);
    expect(main).toMatch(/sku: entry\.deployment\.\?sku \?\? 'GlobalStandard'/);
    expect(main).toMatch(/sku: openAiChatDeploymentSku/);
  });

  it('output no key, secret, connection string or password', () => {
    const problems: string[] = [];
    let outputs = 0;
    for (const template of templates) {
      for (const match of template.text.matchAll(/^output\s+(\w+)\s+\w+\s*=\s*(.+)$/gm)) {
        outputs++;
        const [, name, value] = match;
        if (/key|secret|connection_?string|password|token|credential|sas/i.test(name!))
          problems.push(`${lineOf(template, match.index)}: output ${name} is named like a secret`);
        if (/\blist\w*\(|connectionstring|primarykey|secondarykey|instrumentationkey|accesskey/i.test(value!))
          problems.push(`${lineOf(template, match.index)}: output ${name} = ${value} exposes a key`);
      }
      for (const match of template.text.matchAll(
        /\blist(Keys|ConnectionStrings|AccountSas|ServiceSas)\w*\(/gi,
      ))
        problems.push(`${lineOf(template, match.index)}: ${match[0]} reads a key; use the managed identity`);
    }
    expect(outputs).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  });

  it('switch off local (key) authentication on every resource that allows it', () => {
    const keyless: Record<string, RegExp> = {
      'Microsoft.DocumentDB/databaseAccounts': /\bdisableLocalAuth:\s*true\b/,
      'Microsoft.ServiceBus/namespaces': /\bdisableLocalAuth:\s*true\b/,
      'Microsoft.SignalRService/webPubSub': /\bdisableLocalAuth:\s*true\b/,
      'Microsoft.CognitiveServices/accounts': /\bdisableLocalAuth:\s*true\b/,
      'Microsoft.Insights/components': /\bDisableLocalAuth:\s*true\b/,
      'Microsoft.OperationalInsights/workspaces': /\bfeatures:\s*\{[^}]*\bdisableLocalAuth:\s*true\b/,
      'Microsoft.Storage/storageAccounts': /\ballowSharedKeyAccess:\s*false\b/,
    };
    const declared = templates.flatMap(resourceDeclarations).filter((d) => !d.existing);
    for (const [type, rule] of Object.entries(keyless)) {
      const ofType = declared.filter((d) => d.type.toLowerCase() === type.toLowerCase());
      expect(ofType.length, `no ${type} is declared`).toBeGreaterThan(0);
      for (const declaration of ofType)
        expect(declaration.body, `${declaration.where}: ${type} must not accept keys`).toMatch(rule);
    }
    for (const template of templates) {
      expect(template.text, relative(template.file)).not.toMatch(/disableLocalAuth:\s*false/i);
      expect(template.text, relative(template.file)).not.toMatch(/allowSharedKeyAccess:\s*true/i);
    }
  });

  it('name every role assignment with guid() and grant the roles the app needs', () => {
    const assignments = templates
      .flatMap(resourceDeclarations)
      .filter((d) =>
        /^Microsoft\.(Authorization\/roleAssignments|DocumentDB\/databaseAccounts\/sqlRoleAssignments)$/i.test(
          d.type,
        ),
      );
    expect(assignments.length).toBeGreaterThanOrEqual(6);
    for (const assignment of assignments) {
      expect(assignment.body, `${assignment.where}: name it with guid(...)`).toMatch(/^\s*name:\s*guid\(/m);
      expect(assignment.body, `${assignment.where}: grant it to the principalId parameter`).toMatch(
        /\bprincipalId:\s*principalId\b/,
      );
    }
    const requiredRoles: Record<string, string> = {
      'Storage Blob Data Owner': 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b',
      'Storage Queue Data Contributor': '974c5e8b-45b9-4653-ba55-5f855dd0fb88',
      'Storage Table Data Contributor': '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3',
      // Sends, receives and lets the scale controller read message counts (service-bus.bicep says why).
      'Azure Service Bus Data Owner': '090c5cfd-751d-490a-894a-3ce6f1109419',
      'Web PubSub Service Owner': '12cf5a90-567b-43ae-8102-96cf46c7d9b4',
      'Cognitive Services OpenAI User': '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd',
      'Monitoring Metrics Publisher': '3913510d-42f4-4e42-8a64-420c390055eb',
      'Cosmos DB Built-in Data Contributor': '00000000-0000-0000-0000-000000000002',
      // Only with durableTaskBackend=durable-task-scheduler: the host's access to the scheduler's task hub.
      'Durable Task Data Contributor': '0ad04412-c4d5-4796-b79c-f76d14c8d402',
    };
    const allText = templates.map((t) => t.text).join('\n');
    const missing = Object.entries(requiredRoles)
      .filter(([, id]) => !allText.includes(`'${id}'`))
      .map(([role]) => role);
    expect(missing, 'roles no template grants').toEqual([]);
  });

  it('get every required main.bicep parameter from main.parameters.json, and no unknown one', () => {
    const params = [...loadTemplate(mainTemplate).text.matchAll(/^param\s+(\w+)\s+[\w[\]]+(\s*=)?/gm)].map(
      (m) => ({
        name: m[1]!,
        required: m[2] === undefined,
      }),
    );
    const supplied = Object.keys(
      (
        JSON.parse(read(path.join(infraDir, 'main.parameters.json'))) as {
          parameters: Record<string, unknown>;
        }
      ).parameters,
    );
    expect(params.length).toBeGreaterThan(2);
    expect(supplied.filter((name) => !params.some((p) => p.name === name))).toEqual([]);
    expect(params.filter((p) => p.required && !supplied.includes(p.name)).map((p) => p.name)).toEqual([]);
  });

  // azd before 1.15 substitutes an unset ${VAR} with "", which fails @allowed, @minLength and int parameters; with
  // ${VAR=default} every azd passes the template's own default. Only the parameters azd must ask for have none.
  it('give every optional main.bicep parameter in main.parameters.json its Bicep default, as ${VAR=default}', () => {
    const main = loadTemplate(mainTemplate);
    const defaults = new Map(
      [...main.text.matchAll(/^param\s+(\w+)\s+[\w[\]]+(?:\s*=\s*(.+?))?\s*$/gm)].map((m) => [m[1]!, m[2]]),
    );
    const supplied = (
      JSON.parse(read(path.join(infraDir, 'main.parameters.json'))) as {
        parameters: Record<string, { value: unknown }>;
      }
    ).parameters;
    const problems: string[] = [];
    for (const [name, { value }] of Object.entries(supplied)) {
      const placeholder = typeof value === 'string' ? /^\$\{(\w+)(?:=([^}]*))?\}$/.exec(value) : null;
      if (!placeholder) {
        problems.push(`${name}: ${JSON.stringify(value)} is not one \${VAR} or \${VAR=default}`);
        continue;
      }
      const bicepDefault = defaults.get(name);
      const given = placeholder[2];
      if (bicepDefault === undefined) continue;
      const literal = /^'([^']*)'$|^(-?\d+)$/.exec(bicepDefault);
      if (!literal)
        problems.push(`${name}: its Bicep default ${bicepDefault} is not a literal azd can repeat`);
      else if (given === undefined)
        problems.push(`${name}: ${String(value)} has no default (Bicep: ${bicepDefault})`);
      else if (given !== (literal[1] ?? literal[2]))
        problems.push(`${name}: default "${given}" differs from the Bicep default ${bicepDefault}`);
    }
    expect(problems).toEqual([]);
    // The parameters azd asks for: no default in either file, on purpose.
    expect(
      Object.entries(supplied)
        .filter(([, { value }]) => !String(value).includes('='))
        .map(([name]) => name),
    ).toEqual(['environmentName', 'location', 'authClientId']);
  });

  it('deploy the project as the azd service the function app is tagged with', () => {
    const azureYaml = read(path.join(repoRoot, 'azure.yaml'));
    const api = /^ {2}api:\n((?: {4}.*\n?)+)/m.exec(azureYaml)?.[1] ?? '';
    expect(api).toMatch(/^ {4}host: function$/m);
    expect(api).toMatch(/^ {4}language: ts$/m);
    expect(api).toMatch(/^ {4}project: \.$/m);
    expect(read(functionAppTemplate)).toMatch(/'azd-service-name':\s*'api'/);
  });
});

describe('infra modules', () => {
  const moduleText = (name: string) => loadTemplate(path.join(infraDir, 'modules', `${name}.bicep`)).text;
  const main = () => loadTemplate(mainTemplate).text;

  it('deploy the Azure Managed Redis hot store keyless and TLS only, only with hotStore=redis', () => {
    const redis = moduleText('managed-redis');
    expect(
      resourceDeclarations(loadTemplate(path.join(infraDir, 'modules', 'managed-redis.bicep'))).map(
        (d) => d.type,
      ),
    ).toEqual([
      'Microsoft.Cache/redisEnterprise',
      'Microsoft.Cache/redisEnterprise/databases',
      'Microsoft.Cache/redisEnterprise/databases/accessPolicyAssignments',
    ]);
    expect(redis).toMatch(/accessKeysAuthentication: 'Disabled'/);
    expect(redis).toMatch(/clientProtocol: 'Encrypted'/);
    expect(redis).toMatch(/accessPolicyName: 'default'[\s\S]*objectId: principalId/);
    expect(main()).toMatch(/module redis '\.\/modules\/managed-redis\.bicep' = if \(useRedis\)/);
    expect(main()).toMatch(/param hotStore string = 'cosmos'/);
  });

  it('deploy the Durable Task Scheduler only when it is the backend, its task hub named as host.json says', () => {
    const scheduler = moduleText('durable-task-scheduler');
    expect(scheduler).toMatch(/'0ad04412-c4d5-4796-b79c-f76d14c8d402'/);
    expect(scheduler).toMatch(/scope: taskHub[\s\S]*principalId: principalId/);
    expect(scheduler).toMatch(/ipAllowlist:/);
    expect(main()).toMatch(
      /module durableTaskScheduler '\.\/modules\/durable-task-scheduler\.bicep' = if \(useScheduler\)/,
    );
    expect(main()).toMatch(/^var useScheduler = chosenDurableTaskBackend == 'durable-task-scheduler'$/m);
    expect(main()).toMatch(/taskHubName: hostJson\.extensions\.durableTask\.hubName/);
    expect(moduleText('function-app')).toContain(
      "'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'",
    );
  });

  it("alert by mail on platform metrics and on the app's own records, each alert saying what to do", () => {
    const alerts = moduleText('alerts');
    const metrics = [...alerts.matchAll(/metricNamespace: '([^']+)'\s+metricName: '([^']+)'/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    // No NormalizedRUConsumption: the account is serverless, where a share of provisioned throughput means nothing.
    expect(metrics).toEqual([
      'Microsoft.ServiceBus/namespaces DeadletteredMessages',
      'microsoft.insights/components requests/failed',
      'Microsoft.DocumentDB/databaseAccounts TotalRequests',
      'Microsoft.SignalRService/WebPubSub TotalConnectionCount',
      'Microsoft.CognitiveServices/accounts AzureOpenAIRequests',
      'Microsoft.CognitiveServices/accounts AzureOpenAITimeToResponse',
    ]);
    expect(alerts.match(/^ {4}description: '.{80,}'$/gm)).toHaveLength(8);
    expect(alerts.match(/^ {4}actions: actions$/gm)).toHaveLength(6);
    // The log alerts measure a column their query makes, and are not validated against tables a new workspace lacks.
    const measured = [...alerts.matchAll(/query: '''([\s\S]*?)'''[\s\S]*?metricMeasureColumn: '(\w+)'/g)];
    expect(measured.map((m) => m[2])).toEqual(['FailedPercent', 'SpendUsd']);
    for (const [, query, column] of measured) expect(query).toMatch(new RegExp(`\\b${column} = `));
    expect(alerts.match(/^ {4}skipQueryValidation: true$/gm)).toHaveLength(2);
    expect(alerts).toMatch(/resource openAiThrottled '[^']+' = if \(!empty\(openAiAccountName\)\)/);
    expect(main()).toMatch(/module alerts '\.\/modules\/alerts\.bicep' = if \(!empty\(alertEmail\)\)/);
  });

  it('send resource logs to Log Analytics only when asked, and cap the workspace as the profile says', () => {
    const diagnostics = moduleText('diagnostics');
    const scopes = [...diagnostics.matchAll(/^ {2}scope: (\w+)$/gm)].map((m) => m[1]);
    expect(scopes).toEqual(['cosmosAccount', 'serviceBusNamespace', 'webPubSub', 'openAiAccount']);
    expect(main()).toMatch(
      /module diagnostics '\.\/modules\/diagnostics\.bicep' = if \(chosenResourceLogs == 'all'\)/,
    );
    expect(moduleText('log-analytics')).toMatch(
      /workspaceCapping: \{\s*(\/\/[^\n]*\s*)?dailyQuotaGb: json\(dailyQuotaGb\)/,
    );
    expect(main()).toMatch(/dailyQuotaGb: chosenLogAnalyticsDailyCapGb/);
  });

  it('set every idle-cost switch from the deployment profile unless it is given, trial by default', () => {
    const text = main();
    expect(text).toMatch(/^param deploymentProfile string = 'trial'$/m);
    const supplied = (
      JSON.parse(read(path.join(infraDir, 'main.parameters.json'))) as {
        parameters: Record<string, { value: string }>;
      }
    ).parameters;
    expect(supplied.deploymentProfile?.value).toBe('${DEPLOYMENT_PROFILE=trial}');
    const switches: Record<string, string> = {
      webPubSubSku: 'WEBPUBSUB_SKU',
      functionDurableAlwaysReadyInstanceCount: 'FUNCTION_DURABLE_ALWAYS_READY_INSTANCES',
      durableTaskBackend: 'DURABLE_TASK_BACKEND',
      durableTaskSchedulerSku: 'DURABLE_TASK_SCHEDULER_SKU',
      logAnalyticsDailyCapGb: 'LOG_ANALYTICS_DAILY_CAP_GB',
      resourceLogs: 'RESOURCE_LOGS',
    };
    for (const [parameter, variable] of Object.entries(switches)) {
      // Empty in azd and in Bicep means "the profile's choice".
      expect(supplied[parameter]?.value, parameter).toBe(`\${${variable}=}`);
      expect(text, parameter).toMatch(new RegExp(`^param ${parameter} string = ''$`, 'm'));
      expect(text, parameter).toMatch(new RegExp(`= empty\\(${parameter}\\)\\s*\\? profile\\.\\w+`));
    }
    const profile = (name: string) => {
      const start = text.indexOf(`  ${name}: {`);
      return start < 0 ? '' : bracketBlock(text, text.indexOf('{', start));
    };
    expect(profile('trial')).toMatch(/webPubSubSku: 'Free_F1'/);
    expect(profile('trial')).toMatch(/durableAlwaysReadyInstanceCount: 0/);
    expect(profile('trial')).toMatch(/resourceLogs: 'none'/);
    expect(profile('trial')).toMatch(/logAnalyticsDailyCapGb: '0\.5'/);
    expect(profile('production')).toMatch(/webPubSubSku: 'Standard_S1'/);
    expect(profile('production')).toMatch(/durableAlwaysReadyInstanceCount: 1/);
    expect(profile('production')).toMatch(/resourceLogs: 'all'/);
    expect(profile('production')).toMatch(/logAnalyticsDailyCapGb: '-1'/);
  });

  it('take the model catalogue from azd as JSON text (CHAT_MODELS), the list parameter otherwise', () => {
    const text = main();
    const supplied = (
      JSON.parse(read(path.join(infraDir, 'main.parameters.json'))) as {
        parameters: Record<string, { value: string }>;
      }
    ).parameters;
    // azd substitutes its environment's values as text: the catalogue reaches Bicep as a string it parses.
    expect(supplied.chatModelsJson?.value).toBe('${CHAT_MODELS=}');
    expect(supplied.chatModels).toBeUndefined();
    expect(text).toMatch(/^param chatModelsJson string = ''$/m);
    expect(text).toMatch(/^param chatModels array = \[\]$/m);
    expect(text).toMatch(
      /^var chatCatalogue = empty\(chatModelsJson\)\s*\? chatModels\s*: startsWith\(trim\(chatModelsJson\), '\['\)\s*\? json\(chatModelsJson\)\s*: fail\(/m,
    );
    // Every use of the catalogue goes through the one choice.
    const code = text.split('\n').filter((line) => !/^\s*(@description|\/\/)/.test(line));
    expect(code.filter((line) => /\bchatModels\b/.test(line)).map((line) => line.trim())).toEqual([
      'param chatModels array = []',
      '? chatModels',
    ]);
    expect(text).toMatch(/map\(chatCatalogue, entry =>/);
    expect(text).toMatch(/llmModels: empty\(chatCatalogue\) \? '' : string\(chatCatalogue\)/);
  });

  it('let the web client sign in: AUTH_MODE is entra unless app-service is chosen', () => {
    expect(main()).toMatch(/^param authMode string = 'entra'$/m);
    const supplied = read(path.join(infraDir, 'main.parameters.json'));
    expect(supplied).toContain('"${AUTH_MODE=entra}"');
  });
});
