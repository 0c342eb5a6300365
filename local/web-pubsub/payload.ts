// Message payloads as Web PubSub carries them: the three data types a REST send body can hold, and how each
// is written into a JSON-subprotocol message (binary as base64).
import { InvalidRequestError, WebPubSubRestError } from './rest-errors.js';

type DataType = 'text' | 'json' | 'binary';

export type Payload =
  | { dataType: 'text'; data: string }
  | { dataType: 'json'; data: unknown }
  | { dataType: 'binary'; data: Buffer };

/** The JSON envelope fields of a data message: binary travels as base64 text. */
interface WireData {
  dataType: DataType;
  data: unknown;
}

/** Reads a REST send body the way the service does: its Content-Type decides the data type. */
export function payloadFromHttpBody(contentType: string | undefined, body: Buffer): Payload {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  switch (mediaType) {
    case 'text/plain':
      return { dataType: 'text', data: body.toString('utf8') };
    case 'application/json': {
      try {
        return { dataType: 'json', data: JSON.parse(body.toString('utf8')) as unknown };
      } catch {
        throw new InvalidRequestError('The request body is not valid JSON (Content-Type: application/json).');
      }
    }
    case 'application/octet-stream':
      return { dataType: 'binary', data: body };
    default:
      throw new WebPubSubRestError(
        'unsupported_media_type',
        `Content-Type '${mediaType || '(none)'}' is not supported: send text/plain, application/json or application/octet-stream.`,
        415,
      );
  }
}

export function toWireData(payload: Payload): WireData {
  return payload.dataType === 'binary'
    ? { dataType: 'binary', data: payload.data.toString('base64') }
    : { dataType: payload.dataType, data: payload.data };
}

/** Azure Web PubSub bills a message in 2 KB units: a message of up to 2 KB is one, each further 2 KB one more. */
export const BILLED_MESSAGE_UNIT_BYTES = 2 * 1024;

/** The billed units of one message delivered to one connection, from the size of its data. */
export function billedMessageUnits(payload: Payload): number {
  let bytes: number;
  if (payload.dataType === 'binary') bytes = payload.data.length;
  else if (payload.dataType === 'text') bytes = Buffer.byteLength(payload.data);
  else bytes = Buffer.byteLength(JSON.stringify(payload.data) ?? '');
  return Math.max(1, Math.ceil(bytes / BILLED_MESSAGE_UNIT_BYTES));
}
