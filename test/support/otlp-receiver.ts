// A tiny OTLP/HTTP receiver (http/json) for tests: keeps every exported payload as it arrived, and reads the spans
// and metric names out of them.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the tests read it: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number };
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** Every payload's body text, traces and metrics alike. */
  payloads(): string[];
  spans(): ReceivedSpan[];
  /** The names of the metrics received, with each data point's attributes. */
  metricPoints(): { name: string; attributes: Record<string, unknown>; value: unknown }[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const traces: string[] = [];
  const metrics: string[] = [];
  const server = createServer((request, response) => {
    readText(request).then(
      (text) => {
        if (request.method === 'POST' && request.url === '/v1/traces') traces.push(text);
        else if (request.method === 'POST' && request.url === '/v1/metrics') metrics.push(text);
        else {
          response.writeHead(404).end();
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      () => response.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    payloads: () => [...traces, ...metrics],
    spans: () =>
      traces.flatMap((text) => {
        const body = JSON.parse(text) as {
          resourceSpans?: { scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
        };
        return (body.resourceSpans ?? []).flatMap((resource) =>
          (resource.scopeSpans ?? []).flatMap((scope) =>
            (scope.spans ?? []).map((span): ReceivedSpan => {
              const parent = span['parentSpanId'] as string | undefined;
              return {
                traceId: span['traceId'] as string,
                spanId: span['spanId'] as string,
                parentSpanId: parent ? parent : undefined,
                name: span['name'] as string,
                kind: span['kind'] as number,
                attributes: attributesOf(span['attributes'] as OtlpAttribute[] | undefined),
                links: ((span['links'] as { traceId: string; spanId: string }[] | undefined) ?? []).map(
                  (link) => ({ traceId: link.traceId, spanId: link.spanId }),
                ),
                status: (span['status'] as { code?: number } | undefined) ?? {},
              };
            }),
          ),
        );
      }),
    metricPoints: () =>
      metrics.flatMap((text) => {
        const body = JSON.parse(text) as {
          resourceMetrics?: { scopeMetrics?: { metrics?: Record<string, unknown>[] }[] }[];
        };
        return (body.resourceMetrics ?? []).flatMap((resource) =>
          (resource.scopeMetrics ?? []).flatMap((scope) =>
            (scope.metrics ?? []).flatMap((metric) => {
              const data = (metric['histogram'] ?? metric['sum'] ?? metric['gauge']) as
                | {
                    dataPoints?: {
                      attributes?: OtlpAttribute[];
                      asInt?: unknown;
                      asDouble?: unknown;
                      sum?: unknown;
                    }[];
                  }
                | undefined;
              return (data?.dataPoints ?? []).map((point) => ({
                name: metric['name'] as string,
                attributes: attributesOf(point.attributes),
                value: point.sum ?? point.asInt ?? point.asDouble,
              }));
            }),
          ),
        );
      }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
