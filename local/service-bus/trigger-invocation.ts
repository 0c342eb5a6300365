// What the Functions host hands a Node v4 Service Bus handler, rebuilt from a received message: the body
// as the worker decodes it and the trigger metadata after the host's and the worker's conversions.
import { randomBytes, randomUUID } from 'node:crypto';
import azureFunctions from '@azure/functions';
import type { FunctionTrigger, InvocationContext, LogHandler, TriggerMetadata } from '@azure/functions';

// The package is CommonJS: Node's ESM loader only exposes its exports through the default import.
const { InvocationContext: InvocationContextClass } = azureFunctions;

/** A message as a Service Bus receiver sees it on one delivery. */
export interface ReceivedMessage {
  /** The body as the sender gave it; it travelled as JSON text. */
  readonly body: unknown;
  readonly messageId: string;
  readonly sessionId?: string | undefined;
  readonly correlationId?: string | undefined;
  readonly subject?: string | undefined;
  readonly contentType?: string;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
  /** 1 on the first delivery, increased by every abandon. */
  readonly deliveryCount: number;
  readonly sequenceNumber: number;
  readonly enqueuedTimeUtc: Date;
  readonly lockToken: string;
}

export interface TriggerInvocationOptions {
  invocationId?: string;
  /** The trigger binding as registered; the host reports it in `context.options.trigger`. */
  trigger?: FunctionTrigger;
  logHandler?: LogHandler | undefined;
  /** Clock and id source of the host's `sys` metadata (tests pin them). */
  now?: () => number;
  newGuid?: () => string;
}

/** .NET's DateTime/DateTimeOffset.MaxValue as Newtonsoft writes them: the expiry of a message without a TTL. */
const MAX_DATE_TIME = '9999-12-31T23:59:59.9999999';

export function toTriggerInvocation(
  message: ReceivedMessage,
  functionName: string,
  options: TriggerInvocationOptions = {},
): { trigger: unknown; context: InvocationContext } {
  const bodyText = JSON.stringify(message.body ?? null);
  // The worker decodes the body text the host passes: JSON when it parses, the raw string otherwise.
  const trigger = tryJsonParse(bodyText);
  const context = new InvocationContextClass({
    invocationId: options.invocationId ?? randomUUID(),
    functionName,
    ...(options.logHandler === undefined ? {} : { logHandler: options.logHandler }),
    triggerMetadata: toTriggerMetadata(
      message,
      bodyText,
      {
        functionName,
        utcNow: new Date((options.now ?? Date.now)()),
        randGuid: (options.newGuid ?? randomUUID)(),
      },
      trigger,
    ),
    traceContext: { traceParent: newTraceParent(), traceState: '', attributes: {} },
    options: {
      trigger: options.trigger ?? { type: 'serviceBusTrigger', name: 'serviceBusTrigger', direction: 'in' },
      extraInputs: [],
      extraOutputs: [],
    },
  });
  return { trigger, context };
}

/**
 * The trigger metadata a Node handler sees. The Service Bus extension fills the binding data (PascalCase,
 * null values left out), the host adds `sys` and, for a JSON-object body, the body's top-level properties
 * (these win over message fields of the same name), sends strings as strings and everything else as
 * Newtonsoft JSON; the Node worker parses strings that look like JSON and lower-cases the first letter of
 * every key, nested keys included.
 */
export function toTriggerMetadata(
  message: ReceivedMessage,
  bodyText: string,
  sys: { functionName: string; utcNow: Date; randGuid: string },
  /** bodyText decoded already (the metadata copies what it takes of it). */
  body: unknown = tryJsonParse(bodyText),
): TriggerMetadata {
  const bindingData = new CaseInsensitiveEntries();
  const properties = JSON.parse(JSON.stringify(message.applicationProperties)) as unknown;
  const fields: [string, unknown][] = [
    ['DeliveryCount', message.deliveryCount],
    ['LockToken', hostString(message.lockToken)],
    ['ExpiresAtUtc', MAX_DATE_TIME],
    ['ExpiresAt', `${MAX_DATE_TIME}+00:00`],
    // DateTimeOffset.DateTime has no kind, so Newtonsoft writes it without a zone: parse it as UTC.
    ['EnqueuedTimeUtc', newtonsoftDate(message.enqueuedTimeUtc, '')],
    ['EnqueuedTime', newtonsoftDate(message.enqueuedTimeUtc, '+00:00')],
    ['MessageId', hostString(message.messageId)],
    ['ContentType', hostString(message.contentType)],
    ['SequenceNumber', message.sequenceNumber],
    ['Subject', hostString(message.subject)],
    ['Label', hostString(message.subject)],
    ['CorrelationId', hostString(message.correlationId)],
    ['ApplicationProperties', properties],
    ['UserProperties', properties],
    ['SessionId', hostString(message.sessionId)],
    [
      'sys',
      { MethodName: sys.functionName, UtcNow: newtonsoftDate(sys.utcNow, 'Z'), RandGuid: sys.randGuid },
    ],
  ];
  for (const [key, value] of fields) bindingData.set(key, value);
  for (const [key, value] of bodyBindingData(body)) bindingData.set(key, value);

  const metadata: TriggerMetadata = {};
  for (const [key, value] of bindingData.entries()) {
    if (value !== undefined) metadata[toCamelCaseKey(key)] = toCamelCaseValue(value);
  }
  return metadata;
}

/** The host's ApplyBindingData: top-level properties of a JSON-object body, arrays and nulls left out. */
function bodyBindingData(body: unknown): [string, unknown][] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === null || Array.isArray(value)) continue;
    if (typeof value === 'object') entries.push([key, value]);
    // Other values reach the worker as .NET's string form of the JSON token ("True", "12").
    else if (typeof value === 'boolean') entries.push([key, value ? 'True' : 'False']);
    else if (typeof value === 'string') entries.push([key, hostString(value)]);
    else if (typeof value === 'number') entries.push([key, hostString(String(value))]);
  }
  return entries;
}

/** A string metadata value as the worker decodes it: anything that parses as JSON is parsed ("42" → 42). */
function hostString(value: string | undefined): unknown {
  return value === undefined ? undefined : tryJsonParse(value);
}

/** What JSON text can start with, after its optional whitespace: anything else is returned as is without a throw. */
const JSON_START = /^[\t\n\r ]*[{["\-0-9tfn]/;

function tryJsonParse(text: string): unknown {
  if (!JSON_START.test(text)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Newtonsoft's ISO form: fraction without trailing zeros, then the zone suffix of the .NET type. */
export function newtonsoftDate(time: Date, zone: '' | 'Z' | '+00:00'): string {
  const [seconds = '', fraction = ''] = time.toISOString().slice(0, -1).split('.');
  const digits = fraction.replace(/0+$/, '');
  return `${seconds}${digits ? `.${digits}` : ''}${zone}`;
}

function toCamelCaseKey(key: string): string {
  return key.charAt(0).toLowerCase() + key.slice(1);
}

function toCamelCaseValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCamelCaseValue);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [
      toCamelCaseKey(key),
      toCamelCaseValue(item),
    ]),
  );
}

/** The host's binding data is a case-insensitive dictionary: a later key replaces the value, the first spelling stays. */
class CaseInsensitiveEntries {
  private readonly items = new Map<string, [string, unknown]>();

  set(key: string, value: unknown): void {
    const existing = this.items.get(key.toLowerCase());
    this.items.set(key.toLowerCase(), [existing?.[0] ?? key, value]);
  }

  entries(): [string, unknown][] {
    return [...this.items.values()];
  }
}

function newTraceParent(): string {
  return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
}
