// The Bicep templates checked against Azure's own resource type definitions (vendored in
// test/fixtures/azure-resource-types): unknown properties, values outside an enum, missing required and set
// read-only properties, and API versions nobody can check.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkBicep,
  formatProblem,
  resourceDeclarations,
  TypeIndex,
  type SchemaProblem,
} from '../support/bicep-schema.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const typesDir = path.join(repoRoot, 'test', 'fixtures', 'azure-resource-types');
const infraDir = path.join(repoRoot, 'infra');
const index = TypeIndex.load(typesDir);

/** The problems of a template written inline, as `file:line path message` lines. */
function check(template: string): string[] {
  return checkBicep('snippet.bicep', template, index).map(
    (p: SchemaProblem) => `snippet.bicep:${p.line} ${p.path} ${p.message}`,
  );
}

const serviceBus = (sku: string, properties: string) => `
resource bus 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb-test'
  location: 'westeurope'
  sku: {
    name: ${sku}
  }
  properties: {
${properties}
  }
}
`;

describe('the Bicep schema check', () => {
  it('reports a misspelt property with file, line, path and the property meant', () => {
    const problems = checkBicep(
      'infra/x.bicep',
      serviceBus("'Standard'", '    disableLocalAuthh: true'),
      index,
    );
    expect(problems).toHaveLength(1);
    expect(formatProblem(problems[0]!)).toBe(
      "infra/x.bicep:9: resource bus 'Microsoft.ServiceBus/namespaces@2024-01-01': properties.disableLocalAuthh: " +
        "is not a property of SBNamespaceProperties (did you mean 'disableLocalAuth'?)",
    );
  });

  it('reports a value outside a closed enum, and accepts any string where the enum is open', () => {
    expect(check(serviceBus("'Standardd'", '    disableLocalAuth: true'))).toEqual([
      "snippet.bicep:6 sku.name 'Standardd' is not one of 'Basic', 'Standard', 'Premium'",
    ]);
    // minimumTlsVersion is an open enum ('1.0' | '1.1' | '1.2' | any string).
    expect(check(serviceBus("'Standard'", "    minimumTlsVersion: '1.3'"))).toEqual([]);
    expect(check(serviceBus("'standard'", ''))).toEqual([
      "snippet.bicep:6 sku.name 'standard' differs in case from the allowed value 'Standard'",
    ]);
  });

  it('reports a missing required property of an object literal', () => {
    const template = `
resource account 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' = {
  name: 'cosmos-test'
  location: 'westeurope'
  properties: {
    databaseAccountOfferType: 'Standard'
  }
}
`;
    expect(check(template)).toEqual([
      'snippet.bicep:5 properties.locations is required by DatabaseAccountCreateUpdatePropertiesOrDatabaseAccountGetProperties but missing',
    ]);
  });

  it('reports a read-only property that a template sets', () => {
    const template = `
resource account 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' = {
  name: 'cosmos-test'
  location: 'westeurope'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [
      {
        locationName: 'westeurope'
      }
    ]
    documentEndpoint: 'https://cosmos-test.documents.azure.com:443/'
  }
}
`;
    expect(check(template)).toEqual([
      'snippet.bicep:12 properties.documentEndpoint is read-only in DatabaseAccountCreateUpdatePropertiesOrDatabaseAccountGetProperties: Azure sets it, a template cannot',
    ]);
  });

  it('looks inside arrays of objects, loops, conditions, maps and nested objects', () => {
    const template = `
resource containers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2025-10-15' = [for c in list: if (c.enabled) {
  name: c.name
  tags: {
    'azd-env-name': 'test'
    count: 3
  }
  properties: {
    resource: {
      id: c.name
      partitionKey: {
        paths: c.paths
        kind: 'MultiHash'
        version: 3
      }
      indexingPolicy: {
        vectorIndexes: [for v in c.vectors: {
          path: v.path
          typ: 'diskANN'
        }]
        excludedPaths: [
          {
            path: '/embedding/*'
            paths: []
          }
        ]
      }
    }
  }
}]
`;
    expect(check(template)).toEqual([
      'snippet.bicep:6 tags.count expected a string, found a number',
      'snippet.bicep:14 properties.resource.partitionKey.version 3 is more than the maximum 2',
      "snippet.bicep:19 properties.resource.indexingPolicy.vectorIndexes[for].typ is not a property of VectorIndex (did you mean 'type'?)",
      'snippet.bicep:17 properties.resource.indexingPolicy.vectorIndexes[for].type is required by VectorIndex but missing',
      "snippet.bicep:24 properties.resource.indexingPolicy.excludedPaths[0].paths is not a property of ExcludedPath (did you mean 'path'?)",
    ]);
  });

  it('picks the variant of a discriminated type, such as sites/config by its name', () => {
    const config = (name: string, properties: string) => `
resource auth 'Microsoft.Web/sites/config@2024-04-01' = {
  name: '${name}'
  properties: {
${properties}
  }
}
`;
    expect(check(config('authsettingsV2', '    platform: {\n      enabled: true\n    }'))).toEqual([]);
    expect(check(config('authsettingsV2', '    platform: {\n      enable: true\n    }'))).toEqual([
      "snippet.bicep:6 properties.platform.enable is not a property of AuthPlatform (did you mean 'enabled'?)",
    ]);
    // The app settings variant is a map of strings, so any setting name is fine there but not in authsettingsV2.
    expect(check(config('appsettings', "    ANY_SETTING: 'x'"))).toEqual([]);
    expect(check(config('authsettingsV2', "    ANY_SETTING: 'x'"))).toEqual([
      'snippet.bicep:5 properties.ANY_SETTING is not a property of SiteAuthSettingsV2Properties',
    ]);
    expect(check(config('authsettingsV3', ''))[0]).toMatch(
      /^snippet\.bicep:3 name 'authsettingsV3' is not one of 'appsettings', 'authsettings', 'authsettingsV2'/,
    );
  });

  it('skips values it cannot know and checks both branches of a condition', () => {
    const template = `
param skuName string
var tls = '1.2'
resource bus 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'sb-test'
  location: resourceGroup().location
  sku: {
    name: skuName
    tier: skuName == 'Premium' ? 'Premium' : 'Standardd'
  }
  properties: union({ disableLocalAuth: true }, {})
}
`;
    expect(check(template)).toEqual([
      "snippet.bicep:9 sku.tier 'Standardd' is not one of 'Basic', 'Standard', 'Premium'",
    ]);
  });

  it('checks the literal arguments of union() and concat(), without requiring what another argument may add', () => {
    const template = `
param ttl int
resource container 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2025-10-15' = {
  name: 'messages'
  properties: {
    resource: union(
      {
        id: 'messages'
        indexingPolicy: {
          excludedPaths: concat([
            {
              paths: '/x/*'
            }
          ], [])
        }
      },
      ttl < 0 ? {} : {
        defaultTtll: ttl
      }
    )
  }
}
`;
    expect(check(template)).toEqual([
      "snippet.bicep:12 properties.resource.indexingPolicy.excludedPaths[0].paths is not a property of ExcludedPath (did you mean 'path'?)",
      "snippet.bicep:18 properties.resource.defaultTtll is not a property of SqlContainerResourceOrSqlContainerGetPropertiesResource (did you mean 'defaultTtl'?)",
    ]);
  });

  it('checks only the top-level names of an existing resource', () => {
    const template = `
resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: 'st'
  scope: resourceGroup('other')
  propertiez: {}
}
`;
    expect(check(template)).toEqual([
      "snippet.bicep:5 propertiez is not a property of Microsoft.Storage/storageAccounts (did you mean 'properties'?)",
    ]);
  });

  it('fails a resource whose type and API version it has no definition of', () => {
    const template = `
resource old 'Microsoft.Web/sites@2019-08-01' = {
  name: 'func'
}
`;
    expect(check(template)).toEqual([
      expect.stringMatching(
        /^snippet\.bicep:2 {2}Microsoft\.Web\/sites@2019-08-01 is not in the vendored type definitions/,
      ),
    ]);
  });

  it('reports a template that does not parse', () => {
    expect(check("resource x 'Microsoft.Web/sites@2024-04-01' = {\n  name: 'a'\n  properties: {\n")).toEqual([
      expect.stringMatching(/does not parse as Bicep/),
    ]);
  });
});

function bicepFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return bicepFiles(full);
    return entry.name.endsWith('.bicep') ? [full] : [];
  });
}

const problemsOf = (file: string, text: string) =>
  checkBicep(file, text, index).map(formatProblem).join('\n');

/** The literal values of the open enums of MetricCriteria in the vendored metricAlerts definition. */
function metricCriteriaEnums(): Record<'operator' | 'timeAggregation' | 'criterionType', string[]> {
  const entry = index.entries['microsoft.insights/metricalerts@2026-01-01'];
  if (!entry) throw new Error('metricAlerts@2026-01-01 is not vendored');
  type Json = { $type: string; name?: string; value?: string; elements?: { $ref: string }[] } & {
    properties?: Record<string, { type: { $ref: string } }>;
  };
  const types = JSON.parse(readFileSync(path.join(typesDir, entry.file), 'utf8')) as Json[];
  const at = (ref: { $ref: string }) => types[Number(ref.$ref.slice(2))]!;
  const criteria = types.find((type) => type.name === 'MetricCriteria' && type.properties?.timeAggregation);
  if (!criteria?.properties) throw new Error('MetricCriteria is not in the metricAlerts definition');
  const literals = (key: string) =>
    (at(criteria.properties![key]!.type).elements ?? []).flatMap((ref) => {
      const element = at(ref);
      return element.$type === 'StringLiteralType' && element.value !== undefined ? [element.value] : [];
    });
  return {
    operator: literals('operator'),
    timeAggregation: literals('timeAggregation'),
    criterionType: literals('criterionType'),
  };
}

describe('infra/ against the resource type definitions', () => {
  const templates = bicepFiles(infraDir).map((file) => ({
    file: path.relative(repoRoot, file),
    text: readFileSync(file, 'utf8'),
  }));

  it('declares only properties and values that the resource types define', () => {
    expect(templates.length).toBeGreaterThan(5);
    const problems = templates.flatMap(({ file, text }) => checkBicep(file, text, index).map(formatProblem));
    expect(problems).toEqual([]);
  });

  it('checked a resource of every type it declares', () => {
    const declared = templates.flatMap(({ text }) => resourceDeclarations(text));
    expect(declared.length).toBeGreaterThan(15);
    expect(declared.filter((resource) => !resource.existing && resource.body === undefined)).toEqual([]);
  });

  it('checks the Azure Managed Redis module as hotStore=redis deploys it: keyless, TLS only, the app granted', () => {
    const file = 'infra/modules/managed-redis.bicep';
    const module = templates.find((template) => template.file === file);
    if (module === undefined) throw new Error(`${file} is missing`);
    // The SKU as deployed by default, so the enum of SKU names is checked too.
    const enabled = module.text.replace(/name: skuName\b/, "name: 'Balanced_B0'");
    expect(enabled).not.toBe(module.text);
    expect(checkBicep(file, enabled, index).map(formatProblem)).toEqual([]);
    expect(resourceDeclarations(enabled).map((resource) => resource.type)).toEqual([
      'Microsoft.Cache/redisEnterprise@2025-07-01',
      'Microsoft.Cache/redisEnterprise/databases@2025-07-01',
      'Microsoft.Cache/redisEnterprise/databases/accessPolicyAssignments@2025-07-01',
    ]);
    expect(enabled).toMatch(/accessKeysAuthentication: 'Disabled'/);
    expect(enabled).toMatch(/clientProtocol: 'Encrypted'/);
    expect(enabled).toMatch(/accessPolicyName: 'default'[\s\S]*objectId: principalId/);
    // A misspelt property in the same module is caught, so the vendored Cache types are the ones in use (their
    // enums are open, so a wrong value would pass).
    expect(
      checkBicep(file, enabled.replace('accessKeysAuthentication:', 'accessKeyAuthentication:'), index)
        .map(formatProblem)
        .join('\n'),
    ).toMatch(/accessKeyAuthentication: is not a property of .*did you mean 'accessKeysAuthentication'/);
    const main = templates.find((template) => template.file === 'infra/main.bicep')?.text ?? '';
    expect(main).toMatch(/module redis '\.\/modules\/managed-redis\.bicep' = if \(useRedis\)/);
    expect(main).toMatch(/param hotStore string = 'cosmos'/);
  });

  it('checks the Durable Task Scheduler module as durableTaskBackend=durable-task-scheduler deploys it, both SKUs', () => {
    const file = 'infra/modules/durable-task-scheduler.bicep';
    const module = templates.find((template) => template.file === file);
    if (module === undefined) throw new Error(`${file} is missing`);
    for (const sku of ['Consumption', 'Dedicated']) {
      // The SKU as chosen, so the closed enum of SKU names is checked too.
      const deployed = module.text.replace(/name: skuName\b/g, `name: '${sku}'`);
      expect(deployed).not.toBe(module.text);
      expect(checkBicep(file, deployed, index).map(formatProblem)).toEqual([]);
    }
    expect(resourceDeclarations(module.text).map((resource) => resource.type)).toEqual([
      'Microsoft.DurableTask/schedulers@2026-02-01',
      'Microsoft.DurableTask/schedulers/taskHubs@2026-02-01',
      'Microsoft.Authorization/roleAssignments@2022-04-01',
    ]);
    // Durable Task Data Contributor, on the task hub, for the app's identity.
    expect(module.text).toMatch(/'0ad04412-c4d5-4796-b79c-f76d14c8d402'/);
    expect(module.text).toMatch(/scope: taskHub[\s\S]*principalId: principalId/);
    // The required allow list is there: a scheduler without one does not deploy.
    expect(
      checkBicep(file, module.text.replace('ipAllowlist:', 'ipAllowList:'), index)
        .map(formatProblem)
        .join('\n'),
    ).toMatch(/ipAllowlist: is required by SchedulerProperties/);
    const main = templates.find((template) => template.file === 'infra/main.bicep')?.text ?? '';
    expect(main).toMatch(
      /module durableTaskScheduler '\.\/modules\/durable-task-scheduler\.bicep' = if \(useScheduler\)/,
    );
    expect(main).toMatch(/param durableTaskBackend string = 'azure-storage'/);
    expect(main).toMatch(/taskHubName: hostJson\.extensions\.durableTask\.hubName/);
    const functionApp = templates.find(
      (template) => template.file === 'infra/modules/function-app.bicep',
    )?.text;
    expect(functionApp).toContain(
      "'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'",
    );
  });

  it('checks the alerts module as an alert email deploys it: one action group, the metric and log alerts, known values', () => {
    const file = 'infra/modules/alerts.bicep';
    const module = templates.find((template) => template.file === file);
    if (module === undefined) throw new Error(`${file} is missing`);
    const enabled = module.text.replace(
      /emailAddress: alertEmail\b/,
      "emailAddress: 'operators@example.com'",
    );
    expect(enabled).not.toBe(module.text);
    expect(checkBicep(file, enabled, index).map(formatProblem)).toEqual([]);
    const deployed = resourceDeclarations(enabled).filter((resource) => !resource.existing);
    expect(deployed.map((resource) => resource.type)).toEqual([
      'Microsoft.Insights/actionGroups@2023-01-01',
      ...Array<string>(7).fill('Microsoft.Insights/metricAlerts@2026-01-01'),
      ...Array<string>(2).fill('Microsoft.Insights/scheduledQueryRules@2026-03-01'),
    ]);
    // A misspelt or missing property is caught, so the vendored Insights types are the ones in use.
    expect(problemsOf(file, enabled.replace('groupShortName:', 'groupShortNam:'))).toMatch(
      /groupShortNam: is not a property of ActionGroup \(did you mean 'groupShortName'\?\)/,
    );
    expect(problemsOf(file, enabled.replace("    evaluationFrequency: 'PT5M'\n", ''))).toMatch(
      /evaluationFrequency: is required by MetricAlertProperties but missing/,
    );
    expect(
      problemsOf(
        file,
        enabled.replace("'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'", "'Single'"),
      ),
    ).toMatch(/'Single' is not one of .*'Microsoft\.Azure\.Monitor\.SingleResourceMultipleMetricCriteria'/);
    // MetricCriteria's enums are open (any string passes the check above), so its values are held to the literals
    // the definition lists; a dimension's operator is a plain string there, Include or Exclude by the REST API.
    const criteria = metricCriteriaEnums();
    const valuesOf = (key: string) =>
      [...enabled.matchAll(new RegExp(`^\\s+${key}: '([^']*)'$`, 'gm'))].map((m) => m[1]);
    for (const key of ['operator', 'timeAggregation', 'criterionType'] as const) {
      const allowed = key === 'operator' ? [...criteria.operator, 'Include', 'Exclude'] : criteria[key];
      expect(valuesOf(key).length).toBeGreaterThan(0);
      expect(
        valuesOf(key).filter((value) => !allowed.includes(value!)),
        key,
      ).toEqual([]);
    }
    // The published metric names of each resource type the alerts watch.
    const metrics = [...enabled.matchAll(/metricNamespace: '([^']+)'\s+metricName: '([^']+)'/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(metrics).toEqual([
      'Microsoft.ServiceBus/namespaces DeadletteredMessages',
      'microsoft.insights/components requests/failed',
      'Microsoft.DocumentDB/databaseAccounts TotalRequests',
      'Microsoft.DocumentDB/databaseAccounts NormalizedRUConsumption',
      'Microsoft.SignalRService/WebPubSub TotalConnectionCount',
      'Microsoft.CognitiveServices/accounts AzureOpenAIRequests',
      'Microsoft.CognitiveServices/accounts AzureOpenAITimeToResponse',
    ]);
    // Every alert tells the operator what it saw and what to do, and mails the action group.
    expect(enabled.match(/^ {4}description: '.{80,}'$/gm)).toHaveLength(9);
    expect(enabled.match(/^ {4}actions: actions$/gm)).toHaveLength(7);
    expect(enabled.match(/^ {4}actions: \{\n {6}actionGroups: \[\n {8}actionGroup\.id\n/gm)).toHaveLength(2);
    // The log alerts query the workspace behind Application Insights, each measuring a column its query makes, over
    // the app's own records: the failed share of chat.turns, and the day's sum of the llm-usage lines' costUsd.
    expect(enabled.match(/^ {6}logAnalytics\.id$/gm)).toHaveLength(2);
    const measured = [...enabled.matchAll(/query: '''([\s\S]*?)'''[\s\S]*?metricMeasureColumn: '(\w+)'/g)];
    expect(measured.map((m) => m[2])).toEqual(['FailedPercent', 'SpendUsd']);
    for (const [, query, column] of measured) expect(query).toMatch(new RegExp(`\\b${column} = `));
    expect(measured[0]?.[1]).toMatch(
      /Name == "chat\.turns"[\s\S]*Properties\["chat\.turn\.outcome"\][\s\S]*"failed"/,
    );
    expect(measured[1]?.[1]).toMatch(/startofday\(now\(\)\)[\s\S]*startswith "llm-usage "[\s\S]*costUsd/);
    expect(enabled).toMatch(/threshold: failedTurnPercentThreshold\n/);
    expect(enabled).toMatch(/threshold: dailySpendAlertUsd\n/);
    expect(
      problemsOf(
        file,
        enabled.replace("metricMeasureColumn: 'SpendUsd'", "metricMeasureColumns: 'SpendUsd'"),
      ),
    ).toMatch(
      /metricMeasureColumns: is not a property of Condition \(did you mean 'metricMeasureColumn'\?\)/,
    );
    // Azure OpenAI is watched only when this template created it.
    expect(enabled).toMatch(/resource openAiThrottled '[^']+' = if \(!empty\(openAiAccountName\)\)/);
    expect(enabled).toMatch(/resource openAiLatency '[^']+' = if \(!empty\(openAiAccountName\)\)/);
    const main = templates.find((template) => template.file === 'infra/main.bicep')?.text ?? '';
    expect(main).toMatch(/param alertEmail string = ''/);
    expect(main).toMatch(/module alerts '\.\/modules\/alerts\.bicep' = if \(!empty\(alertEmail\)\)/);
    expect(main).toMatch(/openAiAccountName: createOpenAi \? openAi!\.outputs\.name : ''/);
    expect(main).toMatch(/param dailySpendAlertUsd int = \d+/);
    expect(main).toMatch(/dailySpendAlertUsd: dailySpendAlertUsd\n/);
  });

  it('deploys the operations workbook over the Log Analytics workspace, its items loaded from workbook.json', () => {
    const file = 'infra/modules/workbook.bicep';
    const module = templates.find((template) => template.file === file);
    if (module === undefined) throw new Error(`${file} is missing`);
    expect(checkBicep(file, module.text, index).map(formatProblem)).toEqual([]);
    expect(resourceDeclarations(module.text).map((resource) => resource.type)).toEqual([
      'Microsoft.Insights/workbooks@2023-06-01',
    ]);
    expect(module.text).toMatch(/loadJsonContent\('workbook\.json'\)/);
    expect(module.text).toMatch(/sourceId: logAnalyticsWorkspaceId/);
    expect(module.text).toMatch(/name: guid\(/);
    expect(problemsOf(file, module.text.replace('serializedData:', 'serialisedData:'))).toMatch(
      /serializedData: is required by WorkbookProperties but missing/,
    );
    const main = templates.find((template) => template.file === 'infra/main.bicep')?.text ?? '';
    expect(main).toMatch(/module workbook '\.\/modules\/workbook\.bicep' = \{/);
  });

  it('sends the logs and metrics of Cosmos DB, Service Bus, Web PubSub and Azure OpenAI to Log Analytics', () => {
    const file = 'infra/modules/diagnostics.bicep';
    const module = templates.find((template) => template.file === file);
    if (module === undefined) throw new Error(`${file} is missing`);
    expect(checkBicep(file, module.text, index).map(formatProblem)).toEqual([]);
    const declared = resourceDeclarations(module.text);
    const settings = declared.filter((resource) => !resource.existing);
    expect(settings.map((resource) => resource.type)).toEqual(
      Array<string>(4).fill('Microsoft.Insights/diagnosticSettings@2021-05-01-preview'),
    );
    // Each setting is scoped to one of the resources, all of them different.
    const scopes = [...module.text.matchAll(/^ {2}scope: (\w+)$/gm)].map((m) => m[1]);
    expect(scopes).toEqual(['cosmosAccount', 'serviceBusNamespace', 'webPubSub', 'openAiAccount']);
    expect(module.text.match(/workspaceId: logAnalyticsWorkspaceId/g)).toHaveLength(4);
    expect(module.text.match(/categoryGroup: 'allLogs'/g)).toHaveLength(4);
    // Cosmos DB into its resource-specific tables; its metrics category is Requests, the others' AllMetrics.
    expect(module.text.match(/logAnalyticsDestinationType: 'Dedicated'/g)).toHaveLength(1);
    expect(module.text.match(/category: 'AllMetrics'/g)).toHaveLength(3);
    expect(
      problemsOf(file, module.text.replace("categoryGroup: 'allLogs'", "categoryGroups: 'allLogs'")),
    ).toMatch(/categoryGroups: is not a property of LogSettings \(did you mean 'categoryGroup'\?\)/);
    const main = templates.find((template) => template.file === 'infra/main.bicep')?.text ?? '';
    expect(main).toMatch(/module diagnostics '\.\/modules\/diagnostics\.bicep' = \{/);
  });

  it('vendors exactly the type files the templates use, each indexed where its ResourceType is', () => {
    const used = new Set(
      templates.flatMap(({ text }) =>
        resourceDeclarations(text).map((resource) => index.entries[resource.type.toLowerCase()]?.file),
      ),
    );
    const vendored = new Set(Object.values(index.entries).map((entry) => entry.file));
    expect(
      [...vendored].filter((file) => !used.has(file)),
      'vendored type files no template uses',
    ).toEqual([]);
    for (const key of Object.keys(index.entries)) expect(index.lookup(key)?.name.toLowerCase()).toBe(key);
  });
});
