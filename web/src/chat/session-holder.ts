// A chat's session: known from the start for an open conversation, or started on the first send with what the
// new chat was given (a model, an assistant, a project, temporary).
import type { ApiClient } from '../api/client';
import type { SessionStart } from '../workspace/workspace-api';

/** The chat's session: known from the start for an open conversation, started on the first send otherwise. */
export class SessionHolder {
  constructor(
    private readonly api: ApiClient,
    private id: string | undefined,
    private readonly onStarted: (sessionId: string) => void,
  ) {}

  /** What the session is started with (a model, an assistant, a project, temporary), if it is not yet. */
  private startBody: SessionStart = {};

  startWith(body: SessionStart): void {
    this.startBody = body;
  }

  current(): string | undefined {
    return this.id;
  }

  async ensure(): Promise<string> {
    if (this.id !== undefined) return this.id;
    const { sessionId } = await this.api.json<{ sessionId: string }>(
      'POST',
      '/api/session/start',
      this.startBody,
    );
    this.id = sessionId;
    this.onStarted(sessionId);
    return sessionId;
  }
}
