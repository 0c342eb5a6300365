// What the knowledge search e2e tests share: a scripted model that searches the knowledge base then answers, a
// Markdown document uploaded as a user, and the titles a turn's search gave the model.
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { callApi } from './api-turns.js';
import { expectStatus, type ChatClient } from './chat-client.js';
import { startScriptedModel, type ScriptedModel } from './scripted-model.js';

/** A model whose every streamed turn searches the knowledge base, then answers "Found it." from the result. */
export function startSearchingModel(): Promise<ScriptedModel> {
  return startScriptedModel((request) => {
    // The history and memory workers' structured output: the offline model's stand-in rules answer it.
    if (request.stream !== true)
      return { content: planReply(request as unknown as OfflineRequest, productVocabulary).content };
    if (request.messages.at(-1)?.role === 'tool') return { content: 'Found it.' };
    return { toolCalls: [{ name: 'search_knowledge_base', arguments: '{"query":"garden flowers"}' }] };
  });
}

/** Uploads `# title` and the text as the client's Markdown document; its id. */
export async function uploadDocument(
  runtime: LocalRuntime,
  client: ChatClient,
  title: string,
  text: string,
): Promise<string> {
  const { document } = await expectStatus<{ document: { documentId: string } }>(
    await callApi(runtime, client, 'POST', 'knowledge/documents', {
      title,
      fileName: `${title.toLowerCase()}.md`,
      contentBase64: Buffer.from(`# ${title}\n\n${text}`).toString('base64'),
    }),
    202,
  );
  return document.documentId;
}

/** The titles of the passages the search gave the model in the turn whose user message was `text`, sorted. */
export function searchedTitlesIn(model: ScriptedModel, text: string): string[] {
  const answered = model.requests.find(
    (request) =>
      request.stream === true &&
      request.messages.at(-1)?.role === 'tool' &&
      request.messages.findLast((message) => message.role === 'user')?.content === text,
  );
  const result = JSON.parse(answered?.messages.at(-1)?.content ?? 'null') as {
    results: { title: string }[];
  };
  return [...new Set(result.results.map((passage) => passage.title))].sort();
}
