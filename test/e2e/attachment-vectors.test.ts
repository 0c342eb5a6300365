// A long text file searched by its embeddings too, end to end over Azurite with a scripted model whose embeddings the
// test chooses: the passage that answers shares no word with the question and still reaches the model; the
// passages are embedded once across two turns; the kept vectors go with the conversation.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectStatus } from '../support/chat-client.js';
import { useAttachmentRuntime, type StoredAttachment } from '../support/attachment-runtime.js';
import { settle } from '../support/local-runtime.js';
import { SCRIPTED_EMBEDDING_DIMENSIONS } from '../support/scripted-model.js';

const QUESTIONS = ['What is the vault code?', 'Could you remind me of the vault code?'];
const ANSWER = 'Seven three one nine opens our strongbox behind reception.';

/** The questions and the passage holding the answer point one way; no other text does. */
const ANSWER_DIRECTION = Array.from({ length: SCRIPTED_EMBEDDING_DIMENSIONS }, (_, i) => (i === 0 ? 1 : 0));

describe('a long text file searched by its embeddings', { timeout: 120_000 }, () => {
  const env = useAttachmentRuntime({
    script: (request) => ({ content: request.stream === true ? 'Noted.' : '{}' }),
    embed: (text) =>
      QUESTIONS.includes(text) || text.includes('strongbox')
        ? ANSWER_DIRECTION
        : Array.from({ length: SCRIPTED_EMBEDDING_DIMENSIONS }, (_, i) => (i === 1 ? 1 : 0)),
  });

  it('finds the passage that shares no word with the question, embedding the passages once over two turns', async () => {
    const paragraphs = Array.from(
      { length: 1200 },
      (_, i) => `Paragraph ${i}: the river ran past mill number ${i} on a mild and quiet morning.`,
    );
    paragraphs[600] = ANSWER;
    const text = paragraphs.join('\n\n');
    for (const question of QUESTIONS)
      for (const word of question.toLowerCase().match(/[a-z]+/g) ?? [])
        if (word.length > 3) expect(ANSWER.toLowerCase()).not.toContain(word);
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), 'ledger.txt');
    const stored = await expectStatus<StoredAttachment>(
      await fetch(`${env.runtime.url}/api/attachments`, {
        method: 'POST',
        headers: env.alice.headers(),
        body: form,
      }),
      201,
    );
    const sessionId = await env.alice.startSession();
    const passageRequests = () =>
      env.model.embeddingRequests.filter((inputs) =>
        inputs.every((input) => input.startsWith('ledger.txt\n\n')),
      );
    const questionRequests = (question: string) =>
      env.model.embeddingRequests.filter((inputs) => inputs.length === 1 && inputs[0] === question);

    const ask = async (question: string, attachments: string[]) => {
      const chatMessageId = randomUUID();
      await expectStatus(
        await env.alice.post({ sessionId, chatMessageId, text: question, attachments }),
        202,
      );
      expect((await env.alice.stream(sessionId, chatMessageId)).map((frame) => frame.event)).toContain(
        'message-end',
      );
      const sent = env.model.requests.filter((request) => request.stream === true).at(-1);
      // The file rides with the message that carried it, the first user message of the conversation.
      const prompt = sent?.messages.find((message) => message.role === 'user')?.content;
      expect(typeof prompt).toBe('string');
      return prompt as string;
    };

    const first = await ask(QUESTIONS[0] as string, [stored.attachmentId]);
    expect(first).toContain(ANSWER);
    expect(first).toContain('passages that best match the question');
    // By words alone (nothing is shared) the file's start would have gone in, not its middle.
    expect(first.length).toBeLessThan(env.runtime.config.attachments.textTokens * 4 + 1_000);
    const made = passageRequests();
    expect(made.length).toBeGreaterThan(0);
    for (const inputs of made)
      expect(inputs.length).toBeLessThanOrEqual(env.runtime.config.knowledge.embeddingBatch);
    expect(questionRequests(QUESTIONS[0] as string)).toHaveLength(1);

    // One blob beside the file holds the vectors, one per passage embedded; it is not counted as the user's file.
    const vectorBlobs = (await env.blobNames()).filter((name) =>
      name.includes(`${stored.attachmentId}.passages-`),
    );
    expect(vectorBlobs).toHaveLength(1);
    const container = env.runtime.blob
      .serviceClient()
      .getContainerClient(env.runtime.config.attachments.blob?.container ?? '');
    const kept = await container.getBlockBlobClient(vectorBlobs[0] as string).downloadToBuffer();
    expect(kept.readUInt32LE(0)).toBe(made.reduce((sum, inputs) => sum + inputs.length, 0));
    expect(kept.readUInt32LE(4)).toBe(SCRIPTED_EMBEDDING_DIMENSIONS);

    // The next turn asks again in other words: the answer is found with the kept vectors, only the question embedded.
    const second = await ask(QUESTIONS[1] as string, []);
    expect(second).toContain(ANSWER);
    expect(passageRequests()).toHaveLength(made.length);
    expect(questionRequests(QUESTIONS[1] as string)).toHaveLength(1);
    await settle(env.runtime);

    // Each embeddings request is recorded, as a knowledge search's is: under the user, as an embedding call.
    const report = await expectStatus<{ backgroundByKind: Record<string, { calls: number }> }>(
      await fetch(`${env.runtime.url}/api/usage/users/user_001`, { headers: env.alice.headers() }),
      200,
    );
    expect(report.backgroundByKind.embedding?.calls).toBe(env.model.embeddingRequests.length);

    // Deleting the conversation deletes the file and its vectors.
    const deleted = await fetch(`${env.runtime.url}/api/history/conversations/${sessionId}`, {
      method: 'DELETE',
      headers: env.alice.headers(),
    });
    expect(deleted.status).toBe(204);
    await settle(env.runtime);
    expect((await env.blobNames()).filter((name) => name.includes(stored.attachmentId))).toEqual([]);
  });
});
