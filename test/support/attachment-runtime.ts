// What the attachments' end-to-end tests over Azurite share: a local runtime (with a scripted model if given) and two
// users, a file as the API answers it, the names in the attachments' container, and the image parts a model got.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient } from './chat-client.js';
import { startTestRuntime } from './local-runtime.js';
import {
  startScriptedModel,
  type Script,
  type ScriptedEmbedding,
  type ScriptedModel,
} from './scripted-model.js';

/** A stored file as the upload (or a direct upload's completion) answers it. */
export interface StoredAttachment {
  attachmentId: string;
  name: string;
  mediaType: string;
  size: number;
  width?: number;
  height?: number;
  sha256: string;
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The data URLs of the image parts in a recorded model request's last user message. */
export function imageUrlsOf(request: { messages: readonly { role: string; content?: unknown }[] }): string[] {
  const content = request.messages.findLast((message) => message.role === 'user')?.content;
  if (!Array.isArray(content)) return [];
  return (content as { type: string; image_url?: { url: string } }[]).flatMap((part) =>
    part.type === 'image_url' && part.image_url ? [part.image_url.url] : [],
  );
}

/** Checks a refusal is problem+json with this status; its code and detail. */
export async function expectProblem(
  response: Response,
  status: number,
): Promise<{ code: string; detail: string }> {
  expect(response.status, await response.clone().text()).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  return (await response.json()) as { code: string; detail: string };
}

export interface AttachmentRuntime {
  readonly runtime: LocalRuntime;
  /** The scripted model: only when a script was given (the offline model answers otherwise). */
  readonly model: ScriptedModel;
  readonly alice: ChatClient;
  readonly bob: ChatClient;
  /** GET /api/attachments/{id} as this user. */
  read(client: ChatClient, attachmentId: string): Promise<Response>;
  /** Every blob's name in the attachments' container. */
  blobNames(): Promise<string[]>;
}

/** Registers a file's hooks: a runtime and its users before the tests, everything stopped after them. */
export function useAttachmentRuntime(
  options: { script?: Script; embed?: ScriptedEmbedding } = {},
): AttachmentRuntime {
  let runtime: LocalRuntime | undefined;
  let model: ScriptedModel | undefined;
  let users: { alice: ChatClient; bob: ChatClient } | undefined;
  const started = () => {
    if (runtime === undefined || users === undefined) throw new Error('the runtime is not started yet');
    return { runtime, ...users };
  };
  beforeAll(async () => {
    model =
      options.script === undefined
        ? undefined
        : await startScriptedModel(options.script, options.embed ? { embed: options.embed } : {});
    runtime = await startTestRuntime(model === undefined ? {} : { settings: model.settings });
    users = { alice: new ChatClient(runtime.url, 'user_001'), bob: new ChatClient(runtime.url, 'user_002') };
  }, 120_000);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });
  return {
    get runtime() {
      return started().runtime;
    },
    get model() {
      if (model === undefined) throw new Error('no script was given: the offline model answers');
      return model;
    },
    get alice() {
      return started().alice;
    },
    get bob() {
      return started().bob;
    },
    read: (client, attachmentId) =>
      fetch(`${started().runtime.url}/api/attachments/${attachmentId}`, { headers: client.headers() }),
    async blobNames() {
      const { runtime: current } = started();
      const container = current.blob
        .serviceClient()
        .getContainerClient(current.config.attachments.blob?.container ?? '');
      const names: string[] = [];
      for await (const blob of container.listBlobsFlat()) names.push(blob.name);
      return names;
    },
  };
}
