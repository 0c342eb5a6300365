// The ARM template the Bicep compiler makes of infra/main.bicep, as Azure receives it: the function app gets every
// setting the setting rows declare for Azure, every identity-based connection has its role for the app's identity,
// and Cosmos DB's metadata operations (database, containers, role assignment) run one after another.
import { describe, expect, it } from 'vitest';
import { API_KEY_PATHS } from '../../functions/api-keys.js';
import { functionDefinitions } from '../../functions/table.js';
import { buildInfraDefinitions } from '../../scripts/generate-definitions.js';
import {
  concurrentOperations,
  expandVariables,
  grantsOf,
  modulesOf,
  parametersRead,
  sourceModules,
  type ArmModule,
  type ArmTemplate,
} from '../support/bicep-arm.js';
import { bicepCompiler } from '../support/bicep-compiler.js';

const compiler = bicepCompiler();
if (!compiler.ok) {
  if (process.env.CI) throw new Error(`the Bicep compiler is required in CI: ${compiler.reason}`);
  console.warn(`skipping the compiled ARM template tests: ${compiler.reason}`);
}

function compileMain(): ArmTemplate {
  if (!compiler.ok) throw new Error(compiler.reason);
  const result = compiler.run(['build', 'infra/main.bicep', '--stdout']);
  if (result.status !== 0) throw new Error(`bicep build failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as ArmTemplate;
}

/**
 * The identity-based connections of the function app: the setting that names the service, and what the identity
 * must be granted there (role definition ids, or a Redis access policy). A setting that looks like a connection
 * and is missing here fails the test, so a new service cannot arrive without its role.
 */
const CONNECTIONS: Record<string, { service: string; roles: string[] }> = {
  // The host's storage: blobs (leases, the deployment package), and the Durable task hub's queues and tables.
  AzureWebJobsStorage__accountName: {
    service: 'Storage',
    roles: [
      'b7e6dc6d-f1e8-4753-8033-0f276bb0955b',
      '974c5e8b-45b9-4653-ba55-5f855dd0fb88',
      '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3',
    ],
  },
  // Attachments: blobs in the same account, read and written as the identity (Storage Blob Data Owner).
  ATTACHMENTS_BLOB_ENDPOINT: { service: 'Storage', roles: ['b7e6dc6d-f1e8-4753-8033-0f276bb0955b'] },
  ServiceBusConnection__fullyQualifiedNamespace: {
    service: 'Service Bus',
    roles: ['090c5cfd-751d-490a-894a-3ce6f1109419'],
  },
  COSMOS_ENDPOINT: { service: 'Cosmos DB', roles: ['00000000-0000-0000-0000-000000000002'] },
  WEBPUBSUB_ENDPOINT: { service: 'Web PubSub', roles: ['12cf5a90-567b-43ae-8102-96cf46c7d9b4'] },
  AZURE_OPENAI_ENDPOINT: { service: 'Azure OpenAI', roles: ['5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'] },
  REDIS_HOST_NAME: { service: 'Azure Managed Redis', roles: ['default'] },
  DURABLE_TASK_SCHEDULER_CONNECTION_STRING: {
    service: 'Durable Task Scheduler',
    roles: ['0ad04412-c4d5-4796-b79c-f76d14c8d402'],
  },
  // Where telemetry goes; APPLICATIONINSIGHTS_AUTHENTICATION_STRING makes the host sign in there as the identity.
  APPLICATIONINSIGHTS_CONNECTION_STRING: {
    service: 'Application Insights',
    roles: ['3913510d-42f4-4e42-8a64-420c390055eb'],
  },
};

/** Setting names and values that mean "reach this service with the identity". */
const LOOKS_LIKE_CONNECTION =
  /__(fullyQualifiedNamespace|accountName|serviceUri|blobServiceUri|queueServiceUri|tableServiceUri|accountEndpoint|endpoint)$|_ENDPOINT$|_HOST_NAME$|_CONNECTION_STRING$/;

describe.skipIf(!compiler.ok)('the compiled ARM template of infra/main.bicep', () => {
  const main = compiler.ok ? compileMain() : { resources: [] };
  const modules = modulesOf(main);
  const module = (name: string): ArmModule => {
    const found = modules.get(name);
    if (!found) throw new Error(`no module deployment named ${name}`);
    return found;
  };
  const functionApp = module('function-app');
  const site = functionApp.template.resources.find((resource) => resource.type === 'Microsoft.Web/sites');
  const appSettings = ((site?.properties?.siteConfig as { appSettings?: { name: string; value: unknown }[] })
    ?.appSettings ?? []) as { name: string; value: unknown }[];
  const identityOutput = (output: string) =>
    new RegExp(
      `'Microsoft\\.Resources/deployments', 'managed-identity'\\), '[\\d-]+'\\)\\.outputs\\.${output}\\.value`,
    );

  it('sets on the function app exactly the app settings the setting rows declare for Azure', () => {
    const names = appSettings.map((setting) => setting.name);
    expect(
      names.filter((name, index) => names.indexOf(name) !== index),
      'set twice',
    ).toEqual([]);
    expect([...names].sort()).toEqual([...buildInfraDefinitions().functionApp.appSettingNames].sort());
    for (const setting of appSettings) expect(typeof setting.value, setting.name).toBe('string');
  });

  it('runs the function app as the one managed identity, which every __clientId names', () => {
    const identity = site?.properties && JSON.stringify((site as { identity?: unknown }).identity);
    expect(identity).toContain("parameters('identityId')");
    expect(functionApp.bindings.identityId).toMatch(identityOutput('id'));
    expect(functionApp.bindings.identityClientId).toMatch(identityOutput('clientId'));
    const clientIds = appSettings.filter((s) => /(__clientId|^AZURE_CLIENT_ID)$/.test(s.name));
    expect(clientIds.length).toBeGreaterThanOrEqual(3);
    for (const setting of clientIds)
      expect(setting.value, setting.name).toBe("[parameters('identityClientId')]");
    for (const setting of appSettings.filter((s) => s.name.endsWith('__credential')))
      expect(setting.value, setting.name).toBe('managedidentity');
  });

  it('grants the identity a role on the service of every identity-based connection', () => {
    const connections = appSettings.filter((setting) => LOOKS_LIKE_CONNECTION.test(setting.name));
    expect(connections.map((s) => s.name).filter((name) => !(name in CONNECTIONS))).toEqual([]);
    const problems: string[] = [];
    for (const [setting, { service, roles }] of Object.entries(CONNECTIONS)) {
      const value = appSettings.find((s) => s.name === setting)?.value;
      if (typeof value !== 'string') {
        problems.push(`${setting} is not set`);
        continue;
      }
      // The function app's parameters the value reads, then the modules main.bicep feeds them from.
      const sources = parametersRead(value)
        .filter((parameter) => !/^identity(Id|ClientId)$/.test(parameter))
        .flatMap((parameter) => sourceModules(functionApp.bindings[parameter] ?? '', main, modules));
      if (sources.length === 0) problems.push(`${setting}: no module of infra/ provides it`);
      for (const source of sources) {
        const granting = module(source);
        // Granted to the identity's principal: the module's principalId parameter, bound to the identity module.
        const granted = grantsOf(granting.template)
          .filter((grant) => grant.principal === "[parameters('principalId')]")
          .flatMap((grant) => grant.roles);
        if (!identityOutput('principalId').test(granting.bindings.principalId ?? ''))
          problems.push(`${setting}: module ${source} does not grant to the managed identity's principal id`);
        for (const role of roles)
          if (!granted.includes(role))
            problems.push(`${setting}: ${service} (${source}) does not grant ${role}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('creates the Cosmos DB database, containers and role assignment one at a time', () => {
    const cosmos = module('cosmos-db').template;
    const metadata =
      /^Microsoft\.DocumentDB\/databaseAccounts\/(sqlDatabases|sqlDatabases\/containers|sqlRoleAssignments)$/;
    expect(cosmos.resources.filter((r) => metadata.test(r.type)).length).toBe(3);
    expect(concurrentOperations(cosmos, metadata)).toEqual([]);
  });

  it('would catch a parallel container loop or an unordered role assignment', () => {
    const cosmos = structuredClone(module('cosmos-db').template);
    for (const resource of cosmos.resources) {
      if (resource.copy) delete resource.copy.batchSize;
      if (resource.type.endsWith('sqlRoleAssignments'))
        resource.dependsOn = resource.dependsOn?.filter((entry) => entry.startsWith('[resourceId('));
    }
    const problems = concurrentOperations(cosmos, /^Microsoft\.DocumentDB\/databaseAccounts\/\w+/);
    expect(problems.join('\n')).toMatch(/containers \(loop containers\) deploys its copies in parallel/);
    expect(problems.join('\n')).toMatch(
      /and Microsoft\.DocumentDB\/databaseAccounts\/sqlRoleAssignments may deploy at/,
    );
  });

  it("deploys the model catalogue's chat deployments one at a time, then the embedding deployment", () => {
    const openAi = module('openai').template;
    const deployments = /^Microsoft\.CognitiveServices\/accounts\/deployments$/;
    const found = openAi.resources.filter((r) => deployments.test(r.type));
    expect(found.map((r) => Boolean(r.copy))).toEqual([true, false]);
    expect(concurrentOperations(openAi, deployments)).toEqual([]);
    // One list feeds both: the deployments Azure creates and the catalogue the app reads (LLM_MODELS). It is the
    // JSON text azd passes (CHAT_MODELS) when given, else the list a parameters file gives.
    const chosen =
      /^"\[if\(empty\(parameters\('chatModelsJson'\)\), parameters\('chatModels'\), if\(startsWith\(trim\(parameters\('chatModelsJson'\)\), '\['\), json\(parameters\('chatModelsJson'\)\), fail\('chatModelsJson \(CHAT_MODELS\) must be a JSON list/;
    expect(JSON.stringify(main.variables?.chatCatalogue)).toMatch(chosen);
    const catalogue = expandVariables(module('openai').bindings.chatDeployments ?? '', main.variables);
    expect(catalogue).toContain(`map(${JSON.stringify(main.variables?.chatCatalogue)}, lambda('entry'`);
    const appSetting = expandVariables(module('function-app').bindings.llmModels ?? '', main.variables);
    expect(appSetting).toContain(`string(${JSON.stringify(main.variables?.chatCatalogue)})`);
    const defaultModel = expandVariables(
      module('function-app').bindings.chatDeploymentName ?? '',
      main.variables,
    );
    expect(defaultModel).toContain("parameters('chatModels')");
  });

  it('would catch a parallel deployment loop', () => {
    const openAi = structuredClone(module('openai').template);
    for (const resource of openAi.resources) if (resource.copy) delete resource.copy.batchSize;
    expect(
      concurrentOperations(openAi, /^Microsoft\.CognitiveServices\/accounts\/deployments$/).join('\n'),
    ).toMatch(/deploys its copies in parallel/);
  });

  it('leaves every route that takes an API key to the app when keys are on, and none when off', () => {
    const auth = functionApp.template.resources.find(
      (resource) =>
        resource.type === 'Microsoft.Web/sites/config' && String(resource.name).includes('authsettingsV2'),
    );
    const validation = (auth?.properties as { globalValidation?: { excludedPaths?: unknown } } | undefined)
      ?.globalValidation;
    const excluded = String(validation?.excludedPaths);
    // The expression: on → the literal list, off → an empty one.
    expect(excluded).toMatch(
      /^\[if\(equals\(parameters\('apiKeys'\), 'on'\), createArray\((.*)\), createArray\(\)\)\]$/,
    );
    const listed = [...excluded.matchAll(/'(\/api\/[^']*)'/g)].map((match) => match[1]);
    expect(listed.sort()).toEqual([...API_KEY_PATHS].sort());
    // Every route that declares API keys falls under one of them ('/api/v1/*' covers what is below /api/v1/).
    const keyRoutes = functionDefinitions.flatMap((definition) =>
      definition.kind === 'http' && definition.declaration?.apiKeys === true
        ? [`/api/${definition.route}`]
        : [],
    );
    expect(keyRoutes).toContain('/api/mcp');
    for (const route of keyRoutes)
      expect(
        API_KEY_PATHS.some((path) =>
          path.endsWith('/*') ? route.startsWith(path.slice(0, -1)) : route === path,
        ),
        route,
      ).toBe(true);
    // The setting and its bound reach the app from the parameters.
    const setting = (name: string) => appSettings.find((entry) => entry.name === name)?.value;
    expect(setting('API_KEYS')).toBe("[parameters('apiKeys')]");
    expect(setting('API_KEYS_MAX_PER_USER')).toBe("[string(parameters('apiKeysMaxPerUser'))]");
    expect(functionApp.bindings['apiKeys']).toContain("parameters('apiKeys')");
    expect((main.parameters?.['apiKeys'] as { defaultValue?: unknown } | undefined)?.defaultValue).toBe(
      'off',
    );
  });

  it('outputs what the sign-in hook reads: the client id, the auth mode and both service URIs', () => {
    for (const output of ['AUTH_CLIENT_ID', 'AUTH_MODE', 'SERVICE_WEB_URI', 'SERVICE_API_URI'])
      expect(main.outputs?.[output]?.type, output).toBe('string');
    // The parameter, once its GUID shape is checked.
    expect(expandVariables(String(main.outputs?.AUTH_CLIENT_ID?.value), main.variables)).toMatch(
      /^\["\[if\(.*parameters\('authClientId'\), fail\('authClientId \(AUTH_CLIENT_ID\) must be the GUID/,
    );
    expect(JSON.stringify(main.outputs?.AUTH_MODE?.value)).toBe(JSON.stringify("[parameters('authMode')]"));
  });
});
