// The body of POST /api/ui/chat, as the AI SDK's DefaultChatTransport sends it ({id, messages, trigger, messageId}),
// and the turn it asks for: only the last message is read, since the conversation lives on the server.
import type { IncomingFile } from '../attachments/contracts.js';
import { z } from 'zod';
import { chatMessageIdSchema, sessionIdSchema } from '../ids.js';
import { memoryModeSchema, type MemoryMode } from '../conversation/memory-mode.js';
import { modelIdSchema } from '../ids.js';
import { attachmentIdSchema } from '../message-attachments.js';

/** What a useChat body asks for: a new message (or an edit), or a new answer to an earlier one. */
export type UiChatTurn =
  | {
      kind: 'send';
      sessionId: string;
      /** The last message's id; for an edit made in place (useChat's sendMessage with messageId), the message it edits. */
      messageId: string;
      text: string;
      useMemory: boolean;
      /** The memory mode asked for (over use_memory), when given. */
      memory?: MemoryMode;
      /** The catalogue's model asked for, when given. */
      model?: string;
      /** An edit: the user message it replaces. */
      editOf?: string;
      /** useChat edited the message in place, keeping its id: the new turn's id is derived from the id and the text. */
      inPlace: boolean;
      /** The message's file parts, their bytes decoded from their data: URLs. */
      files?: IncomingFile[];
      /** Its file parts that name a stored attachment (`/api/attachments/{id}`: uploaded directly, or from history). */
      attachmentIds?: string[];
    }
  | {
      kind: 'regenerate';
      sessionId: string;
      /** The turn whose answer is made anew. */
      chatMessageId: string;
      /** Another model of the catalogue for the new answer, when given. */
      model?: string;
    }
  | {
      /** useChat's addToolApprovalResponse: the answers to the approvals the turn's answer asked for. */
      kind: 'approve';
      sessionId: string;
      chatMessageId: string;
      answers: { approvalId: string; approved: boolean; reason?: string }[];
    };

const flag = z.boolean({ error: 'must be true or false' }).optional();

/** The options a client may send in the body (`body` of useChat) or in the last message's `metadata`. */
const turnOptionsShape = {
  use_memory: flag,
  useMemory: flag,
  memory: memoryModeSchema.optional(),
  model: modelIdSchema.optional(),
  editOf: chatMessageIdSchema.optional(),
};

const partSchema = z.looseObject({
  type: z.string({ error: 'must be a string' }).max(100),
  text: z.string({ error: 'must be a string' }).optional(),
  /** File parts: the file as a data: URL, its type and name. */
  url: z.string({ error: 'must be a string' }).optional(),
  mediaType: z.string({ error: 'must be a string' }).max(100).optional(),
  filename: z.string({ error: 'must be a string' }).max(1000).optional(),
});

function lastMessageSchema(maxTextChars: number) {
  return z.object(
    {
      id: chatMessageIdSchema,
      role: z.literal('user', { error: "must be 'user': the last message is the user's new turn" }),
      parts: z
        .array(partSchema, { error: 'must be an array of parts' })
        .max(1000)
        .transform((parts, context) => {
          const named = parts.flatMap((part) => {
            const id = part.type === 'file' ? storedAttachmentOf(part.url) : undefined;
            return id === undefined ? [] : [id];
          });
          const files = parts.flatMap((part, index) =>
            part.type === 'file' && storedAttachmentOf(part.url) === undefined
              ? [fileOf(part, index, context)]
              : [],
          );
          const text = parts.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
          return { text, files: files.filter((file) => file !== undefined), attachmentIds: named };
        })
        .refine((message) => message.text.trim() !== '', 'must hold some text')
        .refine(
          (message) => message.text.length <= maxTextChars,
          `must hold at most ${maxTextChars} characters of text`,
        ),
      metadata: z.looseObject(turnOptionsShape, { error: 'must be an object' }).optional(),
    },
    { error: 'must be a UI message {id, role, parts}' },
  );
}

/** The attachment a file part's URL names (`/api/attachments/{id}`): one of the caller's, checked when attached. */
function storedAttachmentOf(url: string | undefined): string | undefined {
  const match = /^\/api\/attachments\/([^/?#]+)$/.exec(url ?? '');
  if (match?.[1] === undefined) return undefined;
  const parsed = attachmentIdSchema.safeParse(decodeURIComponent(match[1]));
  return parsed.success ? parsed.data : undefined;
}

/** A file part `{type: 'file', mediaType, url: 'data:…;base64,…', filename?}`, decoded; a URL elsewhere is refused. */
function fileOf(
  part: z.infer<typeof partSchema>,
  index: number,
  context: z.RefinementCtx,
): IncomingFile | undefined {
  const url = typeof part.url === 'string' ? part.url : '';
  const match = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(url);
  if (match === null) {
    context.addIssue({
      code: 'custom',
      path: [index, 'url'],
      message: "must be a data: URL holding the file (the server fetches no URL): useChat's file parts are",
    });
    return undefined;
  }
  const base64 = (match[2] ?? '').includes(';base64');
  const data = match[3] ?? '';
  const bytes = base64 ? Buffer.from(data, 'base64') : Buffer.from(decodeURIComponent(data), 'utf8');
  const declared = typeof part.mediaType === 'string' ? part.mediaType : match[1];
  const name =
    typeof part.filename === 'string' && part.filename.trim() !== '' ? part.filename.trim() : 'file';
  return { name: name.slice(0, 255), declaredType: declared, bytes };
}

/** A message id the client names: an answer's (`{chatMessageId}_assistant`), a user message's, or a turn's own id. */
const namedMessageSchema = z
  .string({ error: 'must be a string' })
  .max(200)
  .transform((value, context) => {
    const parsed = chatMessageIdSchema.safeParse(value.replace(/_(assistant|user)$/, ''));
    if (parsed.success) return parsed.data;
    context.addIssue({
      code: 'custom',
      message:
        "must name a message of this chat: a chatMessageId, or an answer's id (`{chatMessageId}_assistant`)",
    });
    return z.NEVER;
  });

/**
 * The answer's message as useChat re-posts it after addToolApprovalResponse (`{chatMessageId}_assistant`): only the
 * approvals its tool parts carry in state `approval-responded` are read (id, approved, reason), nothing else of it.
 */
const approvalMessageSchema = z.object(
  {
    id: namedMessageSchema,
    role: z.literal('assistant'),
    parts: z
      .array(
        z.looseObject({
          state: z.string().max(100).optional(),
          approval: z
            .looseObject({
              id: z.string().regex(/^\d{1,6}-\d{1,6}$/, 'must be an approval id from the stream'),
              approved: z.boolean().optional(),
              reason: z.string().max(1000).optional(),
            })
            .optional(),
        }),
        { error: 'must be an array of parts' },
      )
      .max(1000)
      .transform((parts) =>
        parts.flatMap(({ state, approval }) =>
          state === 'approval-responded' && approval?.approved !== undefined
            ? [
                {
                  approvalId: approval.id,
                  approved: approval.approved,
                  ...(approval.reason === undefined ? {} : { reason: approval.reason }),
                },
              ]
            : [],
        ),
      )
      .refine((answers) => answers.length > 0, "must hold a tool part in state 'approval-responded'"),
  },
  { error: 'must be a UI message {id, role, parts}' },
);

export function uiChatRequestSchema(maxTextChars: number) {
  const last = lastMessageSchema(maxTextChars);
  return z
    .object(
      {
        id: sessionIdSchema,
        messages: z
          .array(z.unknown(), { error: 'must be an array of UI messages' })
          .min(1, 'must not be empty'),
        trigger: z
          .enum(['submit-message', 'regenerate-message'], {
            error: "must be 'submit-message' or 'regenerate-message'",
          })
          .default('submit-message'),
        messageId: namedMessageSchema.optional(),
        userId: z.string({ error: 'must be a string' }).max(128).optional(),
        ...turnOptionsShape,
      },
      { error: 'the body must be a JSON object' },
    )
    .transform((body, context): UiChatTurn => {
      const index = body.messages.length - 1;
      const lastMessage = body.messages[index] as { role?: unknown; id?: unknown } | undefined;
      if (lastMessage?.role === 'assistant' && String(lastMessage.id).endsWith('_assistant')) {
        const approvals = approvalMessageSchema.safeParse(body.messages[index]);
        if (approvals.success)
          return {
            kind: 'approve',
            sessionId: body.id,
            chatMessageId: approvals.data.id,
            answers: approvals.data.parts,
          };
        for (const issue of approvals.error.issues)
          context.addIssue({
            code: 'custom',
            message: issue.message,
            path: ['messages', index, ...issue.path],
          });
        return z.NEVER;
      }
      const parsed = last.safeParse(body.messages[index]);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          context.addIssue({
            code: 'custom',
            message: issue.message,
            path: ['messages', index, ...issue.path],
          });
        return z.NEVER;
      }
      const message = parsed.data;
      const options = { ...message.metadata, ...definedOnly(body) };
      const useMemories = [options.use_memory, options.useMemory].filter((value) => value !== undefined);
      if (new Set(useMemories).size > 1) {
        context.addIssue({
          code: 'custom',
          path: ['useMemory'],
          message: 'is another name for use_memory: send one of them (or the same value in both)',
        });
        return z.NEVER;
      }
      if (body.trigger === 'regenerate-message')
        return {
          kind: 'regenerate',
          sessionId: body.id,
          chatMessageId: body.messageId ?? message.id,
          ...(options.model === undefined ? {} : { model: options.model }),
        };
      const inPlace = body.messageId !== undefined && body.messageId === message.id;
      if (body.messageId !== undefined && !inPlace) {
        context.addIssue({
          code: 'custom',
          path: ['messageId'],
          message: 'with submit-message must be the last message’s id (useChat’s edit of a message in place)',
        });
        return z.NEVER;
      }
      const editOf = inPlace ? message.id : options.editOf;
      if (editOf !== undefined && !inPlace && editOf === message.id) {
        context.addIssue({
          code: 'custom',
          path: ['editOf'],
          message: 'names the message being sent: give the earlier message it replaces',
        });
        return z.NEVER;
      }
      return {
        kind: 'send',
        sessionId: body.id,
        messageId: message.id,
        text: message.parts.text,
        ...(message.parts.files.length > 0 ? { files: message.parts.files } : {}),
        ...(message.parts.attachmentIds.length > 0 ? { attachmentIds: message.parts.attachmentIds } : {}),
        useMemory: useMemories[0] ?? true,
        ...(options.memory !== undefined
          ? { memory: options.memory }
          : useMemories[0] === false
            ? { memory: 'off' as const }
            : {}),
        ...(options.model === undefined ? {} : { model: options.model }),
        inPlace,
        ...(editOf === undefined ? {} : { editOf }),
      };
    });
}

/** The body's own options, without the fields it leaves out (they must not hide the message's metadata). */
function definedOnly(body: {
  use_memory?: boolean | undefined;
  useMemory?: boolean | undefined;
  memory?: MemoryMode | undefined;
  model?: string | undefined;
  editOf?: string | undefined;
}) {
  const { use_memory, useMemory, memory, model, editOf } = body;
  return Object.fromEntries(
    Object.entries({ use_memory, useMemory, memory, model, editOf }).filter(
      ([, value]) => value !== undefined,
    ),
  ) as { use_memory?: boolean; useMemory?: boolean; memory?: MemoryMode; model?: string; editOf?: string };
}

/**
 * The body limit in bytes: the AI SDK sends the whole conversation, which is read no further than its last message,
 * so the limit is generous; a client with a longer conversation sends only the last message
 * (`prepareSendMessagesRequest`).
 */
export const UI_CHAT_BODY_MAX_BYTES = 4 * 1024 * 1024;

/** What POST /api/ui/chat and its resume answer, as the OpenAPI document describes it. */
export const uiMessageStreamSchema = z
  .string()
  .describe(
    'The AI SDK UI message stream (`x-vercel-ai-ui-message-stream: v1`): server-sent events whose `data:` is one UI message chunk as JSON (start, start-step, reasoning-*, text-*, tool-*, source-document, message-metadata, reset-step, finish-step, finish, error), then `data: [DONE]`.',
  );
