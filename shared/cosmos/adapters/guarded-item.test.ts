// Which item ids the guard refuses, whoever the caller: those the SDK would put in a URL that resolves elsewhere.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assistantMessageId, turnInstanceId, userMessageId } from '../../conversation/turn-ids.js';
import { postedMessageDocumentId } from '../../conversation/posted-message-store.js';
import { turnCancellationDocumentId } from '../../chat/contracts/documents.js';
import { digestCheckpointId, exchangeDocumentId } from '../../history/contracts.js';
import { chunkId, uploadPartId } from '../../knowledge/contracts.js';
import { consolidationId } from '../../memory/contracts.js';
import { newFactId } from '../../memory/consolidate-turn.js';
import { unsafeReason } from './guarded-item.js';

describe('unsafeReason', () => {
  it.each([
    ['', 'empty'],
    ['.', 'a dot segment'],
    ['..', 'a dot segment'],
    ['a/b', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['a\\b', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['?', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['#', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['%2e%2e', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['a\u0000', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['a\u001f', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['a\u007f', "holds '/', '\\', '?', '#', '%' or a control character"],
    ['a\u009f', "holds '/', '\\', '?', '#', '%' or a control character"],
  ])('refuses %j: %s', (id, reason) => {
    expect(unsafeReason(id)).toBe(reason);
  });

  it('refuses what is not a string', () => {
    expect(unsafeReason(undefined)).toBe('not a string');
    expect(unsafeReason(42)).toBe('not a string');
  });

  it.each([
    'fact-0123456789abcdef',
    '0f8fad5b-d9cb-469f-a165-70867728950e',
    'turn.0f8fad5b-d9cb-469f-a165-70867728950e.round.1.tool.0',
    '0f8fad5b-d9cb-469f-a165-70867728950e:00000001',
    '...',
    '.hidden',
    'exchange.0f8fad5b-d9cb-469f-a165-70867728950e',
    'user@example.com',
    'é',
  ])('lets %j through', (id) => {
    expect(unsafeReason(id)).toBeUndefined();
  });
});

describe('the ids the product derives from the ids the edges admit', () => {
  it('all pass the guard: messages, exchanges, turns, chunks, facts, records, instances', () => {
    for (let i = 0; i < 50; i++) {
      const sessionId = randomUUID();
      const chatMessageId = randomUUID();
      const documentId = randomBytes(16).toString('hex');
      const derived = [
        userMessageId(chatMessageId),
        assistantMessageId(chatMessageId),
        postedMessageDocumentId(sessionId, chatMessageId),
        turnCancellationDocumentId(chatMessageId),
        turnInstanceId(sessionId, chatMessageId),
        exchangeDocumentId(chatMessageId),
        digestCheckpointId(i),
        chunkId(documentId, i),
        uploadPartId(documentId, 1, i),
        consolidationId(sessionId, chatMessageId),
        newFactId(sessionId, chatMessageId, i),
      ];
      for (const id of derived) expect(unsafeReason(id), id).toBeUndefined();
    }
  });
});
