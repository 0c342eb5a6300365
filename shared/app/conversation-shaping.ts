// What shapes a conversation at its start, composed from the app: the model catalogue, and the assistants and
// projects a session may name.
import type { StartSessionServices } from '../chat/start-session.js';
import type { App } from './app.js';

export function sessionStarter(app: App): StartSessionServices {
  return { sessions: app.chat.sessions, models: app.config.models };
}
