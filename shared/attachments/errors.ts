// The refusals of a file on its way in: each names the rule it breaks in its code, and nothing of the file is kept.
import { AppError } from '../errors.js';

export type AttachmentRule =
  | 'attachment_type'
  | 'attachment_too_large'
  | 'attachment_pixels'
  | 'attachment_unreadable'
  | 'attachments_per_message'
  | 'attachments_message_bytes'
  | 'model_without_vision'
  | 'attachments_off'
  | 'upload_incomplete';

const STATUS: Record<AttachmentRule, number> = {
  attachment_type: 415,
  attachment_too_large: 413,
  attachment_pixels: 413,
  attachment_unreadable: 400,
  attachments_per_message: 400,
  attachments_message_bytes: 413,
  model_without_vision: 400,
  attachments_off: 503,
  upload_incomplete: 409,
};

export class AttachmentRefusedError extends AppError {
  constructor(
    readonly rule: AttachmentRule,
    message: string,
  ) {
    super(rule, message, STATUS[rule]);
  }
}
