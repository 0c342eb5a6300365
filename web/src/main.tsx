// The web client's entry: mounts the App shell under the identity provider.
import './zod-config';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { SharedConversation } from './share/SharedConversation';
import { sharedConversationId } from './share/shared-conversation-api';
import './styles.css';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root element.');
const shareId = sharedConversationId(window.location.pathname);
createRoot(root).render(
  <StrictMode>{shareId === undefined ? <App /> : <SharedConversation shareId={shareId} />}</StrictMode>,
);
