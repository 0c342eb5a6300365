// The fetch MCP clients use: it resolves the host first, refuses a refused address before any connection, then
// connects to the very address it checked (no second lookup to rebind), and refuses every redirect.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { AppError } from '../../errors.js';
import { refusalOf, type OutboundPolicy } from '../outbound-address.js';

/** Resolves a host name to its addresses (injectable: tests resolve names without a DNS server). */
export type AddressLookup = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: AddressLookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The request was not sent: the address is refused, or the server answered with a redirect. */
export class OutboundRefusedError extends AppError {
  constructor(message: string) {
    super('outbound_refused', message, 502);
  }
}

function headersOf(init: RequestInit | undefined, input: Request | undefined): Record<string, string> {
  const headers = new Headers(input?.headers);
  new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
  return Object.fromEntries(headers.entries());
}

async function bodyOf(
  init: RequestInit | undefined,
  input: Request | undefined,
): Promise<Buffer | undefined> {
  const body = init?.body ?? (input === undefined ? undefined : await input.arrayBuffer());
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body).arrayBuffer());
}

/** A body that errors once it passes `maxBytes`, so a huge answer is never held whole. */
function capped(
  body: IncomingMessage,
  maxBytes: number,
  host: string,
  onRefusal: ((error: OutboundRefusedError) => void) | undefined,
): ReadableStream<Uint8Array> {
  let seen = 0;
  const source = Readable.toWeb(body) as ReadableStream<Uint8Array>;
  return source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          body.destroy();
          const error = new OutboundRefusedError(
            `${host} sent more than ${Math.round(maxBytes / 1024)} KiB in one answer`,
          );
          onRefusal?.(error);
          controller.error(error);
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

export function guardedFetch(
  policy: OutboundPolicy & {
    maxResponseBytes: number;
    /** Told of a refusal the caller may not see (one inside a body, which the client may swallow). */
    onRefusal?: (error: OutboundRefusedError) => void;
  },
  lookup: AddressLookup = systemLookup,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new OutboundRefusedError(`${url.protocol} URLs are not fetched`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await lookup(host);
    const refusal = refusalOf(
      host,
      addresses.map((entry) => entry.address),
      policy,
    );
    if (refusal !== undefined) throw new OutboundRefusedError(refusal);
    const pinned = addresses[0];
    if (pinned === undefined) throw new OutboundRefusedError(`${host} resolves to no address`);
    // The connection goes to the address checked above, whatever a second resolution would say.
    const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all === true) callback(null, [{ address: pinned.address, family: pinned.family }]);
      else callback(null, pinned.address, pinned.family);
    };
    const body = await bodyOf(init, request);
    const signal = init?.signal ?? request?.signal ?? undefined;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(
        url,
        {
          method: init?.method ?? request?.method ?? 'GET',
          headers: headersOf(init, request),
          lookup: pinnedLookup,
          ...(signal === undefined ? {} : { signal }),
        },
        resolve,
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    const status = response.statusCode ?? 502;
    if (status >= 300 && status < 400) {
      response.destroy();
      throw new OutboundRefusedError(
        `${host} answered with a redirect (${status}), which this service does not follow`,
      );
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (Array.isArray(value)) for (const each of value) headers.append(name, each);
      else if (value !== undefined) headers.set(name, value);
    }
    const nullBody = status === 204 || status === 205 || status === 304 || init?.method === 'HEAD';
    if (nullBody) response.resume();
    return new Response(nullBody ? null : capped(response, policy.maxResponseBytes, host, policy.onRefusal), {
      status,
      statusText: response.statusMessage ?? '',
      headers,
    });
  };
}
