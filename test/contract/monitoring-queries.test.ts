// The workbook's and the log alerts' KQL against what they read: only columns the Azure Monitor Logs reference lists
// for AppMetrics, AppTraces and AzureMetrics, the metric names the app emits, and the fields of its llm-usage lines.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { columnsRead, loadTableSchemas, unknownColumns } from '../support/kql-columns.js';

const at = (file: string) => fileURLToPath(new URL(`../../${file}`, import.meta.url));
const schemas = loadTableSchemas(at('test/fixtures/log-analytics-tables.json'));

interface WorkbookItem {
  type: number;
  name: string;
  content: {
    title?: string;
    query?: string;
    queryType?: number;
    resourceType?: string;
    timeContextFromParameter?: string;
    parameters?: { name: string; type: number }[];
  };
}
const workbook = JSON.parse(readFileSync(at('infra/modules/workbook.json'), 'utf8')) as {
  version: string;
  items: WorkbookItem[];
};
const workbookQueries = workbook.items.filter((item) => item.type === 3);
const alertQueries = [
  ...readFileSync(at('infra/modules/alerts.bicep'), 'utf8').matchAll(/query: '''([\s\S]*?)'''/g),
].map((match) => match[1]!);
const allQueries = [
  ...workbookQueries.map((item) => ({ name: `workbook ${item.name}`, query: item.content.query ?? '' })),
  ...alertQueries.map((query, i) => ({ name: `alert query ${i + 1}`, query })),
];

/** The fields of one `llm-usage {json}` log line, as the cost records write it. */
const LLM_USAGE_FIELDS = [
  'userId',
  'sessionId',
  'turnId',
  'kind',
  'model',
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'reasoningTokens',
  'costUsd',
];

describe('the column check', () => {
  it('finds the table and the columns a query reads, leaving out what it defines, strings and parameters', () => {
    expect(
      columnsRead(
        'AppMetrics\n| where Name == "Sum"\n| extend Mean = Sum / ItemCount\n' +
          '| summarize (P50, P95) = percentilesw(Mean, ItemCount, 50, 95) by Model = tostring(Properties["X"]), bin(TimeGenerated, {TimeRange:grain})',
      ),
    ).toEqual({ table: 'AppMetrics', columns: ['Name', 'Sum', 'ItemCount', 'Properties', 'TimeGenerated'] });
  });

  it('reports a column its table does not have: AppMetrics counts in ItemCount, AzureMetrics in Count', () => {
    expect(unknownColumns('AppMetrics | summarize sum(Count), sum(Sum) by Name', schemas)).toEqual([
      'AppMetrics.Count',
    ]);
    expect(unknownColumns('AzureMetrics | summarize sum(Count) by MetricName', schemas)).toEqual([]);
    expect(unknownColumns('traces | take 1', schemas)).toEqual(['traces (no such table in the schemas)']);
  });
});

describe('the workbook and log alert queries', () => {
  it('read only columns their tables have', () => {
    expect(allQueries.length).toBeGreaterThanOrEqual(9);
    const problems = allQueries.flatMap(({ name, query }) =>
      unknownColumns(query, schemas).map((column) => `${name}: ${column}`),
    );
    expect(problems).toEqual([]);
  });

  it('read the metrics the app emits and the fields its llm-usage lines have', () => {
    const text = allQueries.map(({ query }) => query).join('\n');
    const metrics = [...text.matchAll(/"([a-z_]+(?:\.[a-z_]+)+)"/g)].map((match) => match[1]);
    expect(new Set(metrics)).toEqual(
      new Set([
        'chat.turns',
        'chat.turn.outcome',
        'chat.turn.first_token.added',
        'gen_ai.client.operation.time_to_first_chunk',
        'chat.llm.cost',
        'gen_ai.request.model',
        'chat.dead_letters',
        'messaging.destination.name',
      ]),
    );
    // The JSON starts right after the prefix, whose length the queries repeat.
    expect(text.match(/startswith "llm-usage "/g)?.length).toBe(
      text.match(/substring\(Message, 10\)/g)?.length,
    );
    expect('llm-usage '.length).toBe(10);
    const fields = [...text.matchAll(/\bUsage\.(\w+)/g)].map((match) => match[1]!);
    expect(fields.length).toBeGreaterThan(5);
    expect(fields.filter((field) => !LLM_USAGE_FIELDS.includes(field))).toEqual([]);
  });

  it('make a workbook of the workspace: turns, time to first token, tokens and cost by model, dead letters, top users', () => {
    expect(workbook.version).toBe('Notebook/1.0');
    const parameters = workbook.items.find((item) => item.type === 9)?.content.parameters ?? [];
    expect(parameters).toContainEqual(expect.objectContaining({ name: 'TimeRange', type: 4 }));
    for (const item of workbookQueries)
      expect(item.content, item.name).toMatchObject({
        queryType: 0,
        resourceType: 'microsoft.operationalinsights/workspaces',
        timeContextFromParameter: 'TimeRange',
      });
    const titles = workbookQueries.map((item) => item.content.title ?? '').join('\n');
    for (const shown of [
      /Turns by outcome/,
      /first token.*p50 and p95/,
      /Tokens and cost by model/,
      /dead-lettered/i,
      /Top users by cost/,
    ])
      expect(titles).toMatch(shown);
    const names = workbook.items.map((item) => item.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('read the dead-lettered messages Service Bus holds from its metrics, which diagnostic settings cannot export', () => {
    const text = JSON.stringify(workbook);
    expect(text).not.toMatch(/AzureMetrics/);
    const held = workbook.items.find((item) => item.name === 'dead-letters-held') as unknown as {
      type: number;
      content: { resourceType: string; resourceIds: string[]; metrics: { metric: string }[] };
    };
    expect(held.type).toBe(10);
    expect(held.content.resourceType).toBe('microsoft.servicebus/namespaces');
    expect(held.content.metrics.map((m) => m.metric)).toEqual([
      'microsoft.servicebus/namespaces--DeadletteredMessages',
    ]);
    // workbook.bicep puts the namespace's id in place of the placeholder.
    expect(held.content.resourceIds).toEqual(['__SERVICE_BUS_NAMESPACE_ID__']);
    expect(readFileSync(at('infra/modules/workbook.bicep'), 'utf8')).toMatch(
      /replace\(loadTextContent\('workbook\.json'\), '__SERVICE_BUS_NAMESPACE_ID__', serviceBusNamespaceId\)/,
    );
  });
});
