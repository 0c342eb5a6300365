// The checks the server applies to an upload, read once (GET /api/attachment-rules) so the composer can refuse a
// file when it is picked; until then, or if the read fails, the server's defaults stand in.
import { useEffect, useState } from 'react';
import type { ApiClient } from '../api/client';
import { DEFAULT_RULES } from './attachments';
import type { AttachmentRules } from './attachments';

export function useAttachmentRules(api: ApiClient): AttachmentRules {
  const [rules, setRules] = useState(DEFAULT_RULES);
  useEffect(() => {
    let gone = false;
    api.json<AttachmentRules>('GET', '/api/attachment-rules').then(
      (read) => !gone && setRules(read),
      // The server checks every file again: a wrong guess here costs a refusal at send time, nothing more.
      () => undefined,
    );
    return () => {
      gone = true;
    };
  }, [api]);
  return rules;
}
