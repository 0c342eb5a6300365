// Settings of attachments (ATTACHMENTS_*): where the files are kept (a Blob container), which types and how much a
// message may carry, the pixel bound checked before an image is decoded, how long images stay in the prompt, and
// whether the chat model sees images at all.
import { DEFAULT_ATTACHMENT_TEXT_TOKENS, DEFAULT_IMAGE_TURNS } from '../conversation/tokens.js';
import {
  choiceSetting,
  defineSettings,
  intSetting,
  textSetting,
  urlSetting,
  type SettingValues,
} from '../settings/setting.js';

const tuning = { kind: 'default' } as const;

/** Images, PDF and text formats: what a message takes unless ATTACHMENTS_TYPES says otherwise. */
export const DEFAULT_ATTACHMENT_TYPES = [
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/gif',
  'application/pdf',
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/json',
] as const;

export const attachmentSettings = defineSettings({
  ATTACHMENTS_BLOB_ENDPOINT: urlSetting({
    help:
      "Blob service endpoint of the storage account that keeps attachments, e.g. https://<account>.blob.core.windows.net (the app's identity holds Storage Blob Data Owner there). " +
      'The local runtime sets its own (Azurite). Unset: attachments are off (503).',
    azure: { kind: 'bicep' },
  }),
  ATTACHMENTS_STORAGE_CONNECTION_STRING: textSetting({
    help: 'Connection string with an account key: only for the local runtime (Azurite), which sets it itself.',
    azure: {
      kind: 'never',
      reason: 'Keys are for the local runtime; in Azure the managed identity signs in (shared keys are off).',
    },
  }),
  ATTACHMENTS_CONTAINER: textSetting({
    default: 'attachments',
    pattern: [
      /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/,
      'must be a Blob container name (3-63 lowercase letters, digits, -)',
    ],
    help: 'Blob container that keeps attachments.',
    azure: { kind: 'bicep' },
  }),
  ATTACHMENTS_TYPES: textSetting({
    default: DEFAULT_ATTACHMENT_TYPES.join(','),
    help:
      'Media types a message may carry, comma-separated, as sniffed from the bytes (the name and the declared type ' +
      'are not trusted). Text types also cover source code.',
    azure: tuning,
  }),
  ATTACHMENTS_MAX_FILE_BYTES: intSetting({
    default: 20 * 1024 * 1024,
    min: 1,
    max: 74 * 1024 * 1024,
    help: 'Largest file accepted, in bytes (413 past it). Azure OpenAI takes images of at most 20 MB.',
    azure: tuning,
  }),
  ATTACHMENTS_DIRECT_UPLOAD_BYTES: intSetting({
    default: 4 * 1024 * 1024,
    min: 1,
    max: 74 * 1024 * 1024,
    help:
      'Files larger than this go from the page straight to Blob Storage (POST /api/attachments/uploads, then ' +
      '/complete) rather than through the API in one request.',
    azure: tuning,
  }),
  ATTACHMENTS_UPLOAD_MINUTES: intSetting({
    default: 10,
    min: 1,
    max: 7 * 24 * 60,
    help:
      'Minutes a direct upload URL (write-only, one blob) is valid; an upload not completed within twice this is ' +
      'swept.',
    azure: tuning,
  }),
  ATTACHMENTS_UNATTACHED_HOURS: intSetting({
    default: 24,
    min: 1,
    max: 24 * 365,
    help: 'Hours a stored file may wait to be attached to a message; past it the sweep deletes it.',
    azure: tuning,
  }),
  ATTACHMENTS_MAX_MESSAGE_BYTES: intSetting({
    default: 50 * 1024 * 1024,
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    help: "Most bytes of attachments one message may carry (the files' stored sizes).",
    azure: tuning,
  }),
  ATTACHMENTS_MAX_PER_MESSAGE: intSetting({
    default: 10,
    min: 1,
    max: 50,
    help: 'Most attachments one message may carry (Azure OpenAI takes at most 10 images a request).',
    azure: tuning,
  }),
  ATTACHMENTS_MAX_PIXELS: intSetting({
    default: 40_000_000,
    min: 1,
    max: 1_000_000_000,
    help:
      "Most pixels (width × height, read from the image's header before it is decoded) an image may have: a " +
      'larger one is refused, so a small file that decodes to gigabytes never is.',
    azure: tuning,
  }),
  ATTACHMENTS_MAX_IMAGE_EDGE: intSetting({
    default: 2_048,
    min: 64,
    max: 16_384,
    help: 'Longest edge an image is scaled down to when stored (what vision models use; larger gains nothing).',
    azure: tuning,
  }),
  ATTACHMENTS_IMAGE_TURNS: intSetting({
    default: DEFAULT_IMAGE_TURNS,
    min: 1,
    max: 1_000,
    help:
      "Turns an image stays in the prompt: in older turns a short caption stands for it, so one image doesn't weigh on " +
      'every later turn.',
    azure: tuning,
  }),
  ATTACHMENTS_TEXT_TOKENS: intSetting({
    default: DEFAULT_ATTACHMENT_TEXT_TOKENS,
    min: 100,
    max: 1_000_000,
    help: "Estimated tokens of a message's text attachments put into the prompt; the rest is cut, and the prompt says so.",
    azure: tuning,
  }),
  QUOTA_ATTACHMENT_BYTES: intSetting({
    default: 0,
    max: Number.MAX_SAFE_INTEGER,
    help: 'Bytes of attachments one user may keep; a file past it is refused (429). 0 = no limit.',
    azure: tuning,
  }),
  LLM_VISION: choiceSetting(['on', 'off'], {
    default: 'on',
    help: 'Whether the chat model (deployment) takes images: "off" refuses a message with an image before its turn starts.',
    azure: tuning,
  }),
});

export interface AttachmentConfig {
  /** Undefined: attachments are off. */
  blob: { endpoint: string; connectionString: string | undefined; container: string } | undefined;
  types: readonly string[];
  maxFileBytes: number;
  directUploadBytes: number;
  uploadMinutes: number;
  unattachedHours: number;
  maxMessageBytes: number;
  maxPerMessage: number;
  maxPixels: number;
  maxImageEdge: number;
  imageTurns: number;
  textTokens: number;
  quotaBytes: number;
  vision: boolean;
}

export function attachmentConfig(values: SettingValues<typeof attachmentSettings>): AttachmentConfig {
  const endpoint = values.ATTACHMENTS_BLOB_ENDPOINT;
  return {
    blob:
      endpoint === undefined
        ? undefined
        : {
            endpoint,
            connectionString: values.ATTACHMENTS_STORAGE_CONNECTION_STRING,
            container: values.ATTACHMENTS_CONTAINER,
          },
    types: values.ATTACHMENTS_TYPES.split(',')
      .map((type) => type.trim().toLowerCase())
      .filter((type) => type !== ''),
    maxFileBytes: values.ATTACHMENTS_MAX_FILE_BYTES,
    directUploadBytes: values.ATTACHMENTS_DIRECT_UPLOAD_BYTES,
    uploadMinutes: values.ATTACHMENTS_UPLOAD_MINUTES,
    unattachedHours: values.ATTACHMENTS_UNATTACHED_HOURS,
    maxMessageBytes: values.ATTACHMENTS_MAX_MESSAGE_BYTES,
    maxPerMessage: values.ATTACHMENTS_MAX_PER_MESSAGE,
    maxPixels: values.ATTACHMENTS_MAX_PIXELS,
    maxImageEdge: values.ATTACHMENTS_MAX_IMAGE_EDGE,
    imageTurns: values.ATTACHMENTS_IMAGE_TURNS,
    textTokens: values.ATTACHMENTS_TEXT_TOKENS,
    quotaBytes: values.QUOTA_ATTACHMENT_BYTES,
    vision: values.LLM_VISION === 'on',
  };
}
