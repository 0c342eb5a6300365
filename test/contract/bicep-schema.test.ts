// What the Bicep compiler (bicep-compiler.test.ts) does not check, judged by Azure's resource type definitions
// (vendored in test/fixtures/azure-resource-types): the literal arguments of union() and concat(), which the compiler
// merges without typing each, and the values of open enums (any string compiles) that must be one of their literals.
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
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
import { bicepCompiler } from '../support/bicep-compiler.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const typesDir = path.join(repoRoot, 'test', 'fixtures', 'azure-resource-types');
const infraDir = path.join(repoRoot, 'infra');
const index = TypeIndex.load(typesDir);
const compiler = bicepCompiler();

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

describe('infra/ where the Bicep compiler does not look', () => {
  const templates = bicepFiles(infraDir).map((file) => ({
    file: path.relative(repoRoot, file),
    text: readFileSync(file, 'utf8'),
  }));
  const cosmosFile = 'infra/modules/cosmos-db.bicep';
  const cosmos = templates.find((template) => template.file === cosmosFile)?.text ?? '';
  // The containers' resource body is a union() of literals: the place where a misspelt name would go unseen.
  const misspelt = cosmos.replace(
    'partitionKey: container.partitionKey',
    'partitionKeyy: container.partitionKey',
  );

  it('finds no unknown property or wrong value in the literal arguments of union() and concat()', () => {
    expect(templates.length).toBeGreaterThan(5);
    const problems = templates.flatMap(({ file, text }) =>
      checkBicep(file, text, index).filter((problem) => problem.insideCall),
    );
    expect(problems.map(formatProblem)).toEqual([]);
    expect(misspelt).not.toBe(cosmos);
    const found = checkBicep(cosmosFile, misspelt, index).filter((problem) => problem.insideCall);
    expect(found.map(formatProblem).join('\n')).toMatch(
      /properties\.resource\.partitionKeyy: is not a property of .*did you mean 'partitionKey'/,
    );
  });

  it.skipIf(!compiler.ok)(
    'is needed: the compiler builds a container whose union() misspells a property',
    () => {
      if (!compiler.ok) return;
      const dir = mkdtempSync(path.join(tmpdir(), 'bicep-union-'));
      try {
        mkdirSync(path.join(dir, 'modules'));
        mkdirSync(path.join(dir, 'generated'));
        copyFileSync(
          path.join(infraDir, 'generated', 'definitions.json'),
          path.join(dir, 'generated', 'definitions.json'),
        );
        writeFileSync(path.join(dir, 'modules', 'cosmos-db.bicep'), misspelt);
        const result = compiler.run(['build', path.join(dir, 'modules', 'cosmos-db.bicep'), '--stdout']);
        expect(result.status).toBe(0);
        expect(result.diagnostics.join('\n')).not.toMatch(/partitionKeyy/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("holds the metric alerts to the literals of MetricCriteria's open enums", () => {
    const alerts = templates.find((template) => template.file === 'infra/modules/alerts.bicep')?.text ?? '';
    // MetricCriteria's enums are open (any string compiles), so its values are held to the literals the definition
    // lists; a dimension's operator is a plain string there, Include or Exclude by the REST API.
    const criteria = metricCriteriaEnums();
    const valuesOf = (key: string) =>
      [...alerts.matchAll(new RegExp(`^\\s+${key}: '([^']*)'$`, 'gm'))].map((m) => m[1]);
    for (const key of ['operator', 'timeAggregation', 'criterionType'] as const) {
      const allowed = key === 'operator' ? [...criteria.operator, 'Include', 'Exclude'] : criteria[key];
      expect(valuesOf(key).length).toBeGreaterThan(0);
      expect(
        valuesOf(key).filter((value) => !allowed.includes(value!)),
        key,
      ).toEqual([]);
    }
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
