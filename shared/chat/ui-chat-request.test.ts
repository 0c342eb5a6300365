// DefaultChatTransport's body read as a turn: only the last message counts, and the options may come from the body
// or the message's metadata.
import { describe, expect, it } from 'vitest';
import { uiChatRequestSchema } from './ui-chat-request.js';

const schema = uiChatRequestSchema(100);
const chatId = 'aB3dE6gH9jK2mN5p';
const user = (text: string, id = 'Zx81qWe4Rt7yUi0o', metadata?: unknown) => ({
  id,
  role: 'user',
  parts: [{ type: 'step-start' }, { type: 'text', text }],
  ...(metadata === undefined ? {} : { metadata }),
});

describe("a useChat request's turn", () => {
  it('is the last message, whatever comes before it', () => {
    const turn = schema.parse({
      id: chatId,
      messages: [{ anything: 'at all' }, user('hello')],
      trigger: 'submit-message',
    });
    expect(turn).toEqual({
      kind: 'send',
      sessionId: chatId,
      messageId: 'Zx81qWe4Rt7yUi0o',
      text: 'hello',
      useMemory: true,
      inPlace: false,
    });
  });

  it('takes use_memory and editOf from the body or the message metadata, the body winning', () => {
    const edit = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(
      schema.parse({ id: chatId, messages: [user('x', undefined, { use_memory: false, editOf: edit })] }),
    ).toMatchObject({ useMemory: false, editOf: edit });
    expect(
      schema.parse({ id: chatId, messages: [user('x', undefined, { useMemory: false })], useMemory: true }),
    ).toMatchObject({ useMemory: true });
    expect(
      schema.safeParse({ id: chatId, messages: [user('x')], use_memory: true, useMemory: false }).success,
    ).toBe(false);
  });

  it("is an edit of the last message when useChat edits it in place (submit with the message's own id)", () => {
    expect(
      schema.parse({
        id: chatId,
        messages: [user('better')],
        trigger: 'submit-message',
        messageId: 'Zx81qWe4Rt7yUi0o',
      }),
    ).toMatchObject({ kind: 'send', inPlace: true, editOf: 'Zx81qWe4Rt7yUi0o', text: 'better' });
    expect(
      schema.safeParse({
        id: chatId,
        messages: [user('x')],
        trigger: 'submit-message',
        messageId: 'Qq81qWe4Rt7yUi0o',
      }).success,
    ).toBe(false);
  });

  it('regenerates the turn messageId names (an answer id or a turn id), else the last message', () => {
    const regenerate = (messageId?: string) =>
      schema.parse({
        id: chatId,
        messages: [user('x')],
        trigger: 'regenerate-message',
        ...(messageId === undefined ? {} : { messageId }),
      });
    expect(regenerate('Qq81qWe4Rt7yUi0o_assistant')).toEqual({
      kind: 'regenerate',
      sessionId: chatId,
      chatMessageId: 'Qq81qWe4Rt7yUi0o',
    });
    expect(regenerate('0F8FAD5B-D9CB-469F-A165-70867728950E')).toMatchObject({
      chatMessageId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    });
    expect(regenerate()).toMatchObject({ chatMessageId: 'Zx81qWe4Rt7yUi0o' });
    expect(() => regenerate('../x_assistant')).toThrow();
  });

  it('refuses a last message that is not a user text within the limit, naming where', () => {
    const issues = (body: unknown) =>
      (schema.safeParse(body).error?.issues ?? []).map((issue) => [issue.path.join('.'), issue.message]);
    expect(issues({ id: chatId, messages: [{ ...user('x'), role: 'assistant' }] })[0]?.[0]).toBe(
      'messages.0.role',
    );
    expect(issues({ id: chatId, messages: [user('y'.repeat(101))] })[0]?.[0]).toBe('messages.0.parts');
    // A file part holds its bytes: a URL the server would have to fetch is refused, naming the part.
    expect(
      issues({
        id: chatId,
        messages: [
          {
            ...user('x'),
            parts: [
              { type: 'text', text: 'x' },
              { type: 'file', url: 'https://example.com/a.png', mediaType: 'image/png' },
            ],
          },
        ],
      })[0],
    ).toEqual(['messages.0.parts.1.url', expect.stringMatching(/must be a data: URL/)]);
    const withFile = schema.parse({
      id: chatId,
      messages: [
        {
          ...user('x'),
          parts: [
            { type: 'text', text: 'read this' },
            {
              type: 'file',
              url: 'data:text/csv;base64,YSxiCjEsMgo=',
              mediaType: 'text/csv',
              filename: 'n.csv',
            },
          ],
        },
      ],
    });
    expect(withFile).toMatchObject({
      kind: 'send',
      text: 'read this',
      files: [{ name: 'n.csv', declaredType: 'text/csv', bytes: Buffer.from('a,b\n1,2\n') }],
    });
    expect(issues({ id: 'x', messages: [user('x')] })[0]?.[0]).toBe('id');
    // A part naming a stored file (a direct upload, or a file read back from history) is named, not decoded.
    const named = schema.parse({
      id: chatId,
      messages: [
        {
          ...user('x'),
          parts: [
            { type: 'text', text: 'and this' },
            {
              type: 'file',
              url: '/api/attachments/att-0123456789abcdef0123456789abcdef',
              mediaType: 'image/png',
            },
          ],
        },
      ],
    });
    expect(named).toMatchObject({ kind: 'send', attachmentIds: ['att-0123456789abcdef0123456789abcdef'] });
    expect(named).not.toHaveProperty('files');
  });

  it("is the answers to the approvals of addToolApprovalResponse's re-post, and nothing else of the message", () => {
    const answer = {
      id: '7c9e6679-7425-40de-944b-e07fc1f90ae7_assistant',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'dynamic-tool',
          toolName: 'mcp__files__rm',
          toolCallId: 'call_1',
          state: 'approval-responded',
          input: { path: 'a.txt', anything: 'the client says' },
          approval: { id: '0-1', approved: false, reason: 'keep it' },
        },
        { type: 'dynamic-tool', state: 'output-available', approval: { id: '0-0', approved: true } },
      ],
    };
    const body = { id: chatId, messages: [user('rm a.txt'), answer], messageId: answer.id };
    expect(schema.parse({ ...body, trigger: 'submit-message' })).toEqual({
      kind: 'approve',
      sessionId: chatId,
      chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      answers: [{ approvalId: '0-1', approved: false, reason: 'keep it' }],
    });
    const unanswered = { ...answer, parts: [{ type: 'dynamic-tool', state: 'approval-requested' }] };
    expect(schema.safeParse({ ...body, messages: [unanswered] }).success).toBe(false);
    expect(schema.safeParse({ ...body, messages: [{ ...answer, id: 'Zx81qWe4Rt7yUi0o' }] }).success).toBe(
      false,
    );
  });
});
