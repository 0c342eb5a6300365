// What a new chat shows before its first message: a greeting and a few starters that send a first message, the
// chosen assistant's own starters when it has some.
import { Brain, FileText, Lightbulb, Map, MessageSquare } from 'lucide-react';
import type { ReactNode } from 'react';
import type { AssistantView } from '../workspace/workspace-api';

const STARTERS = [
  { icon: Brain, text: 'What do you remember about me?' },
  { icon: FileText, text: 'What does my knowledge base say about parental leave?' },
  { icon: Lightbulb, text: 'Explain vector search in simple terms.' },
  { icon: Map, text: 'Help me plan a weekend in Lisbon.' },
] as const;

export function EmptyState(props: {
  onStart: (text: string) => void;
  disabled: boolean;
  assistant?: AssistantView;
}): ReactNode {
  const { assistant } = props;
  const starters =
    assistant === undefined || assistant.starters.length === 0
      ? STARTERS
      : assistant.starters.map((text) => ({ icon: MessageSquare, text }));
  return (
    <div className="m-auto flex w-full max-w-2xl flex-col items-center gap-4 px-2 py-8 text-center">
      <h2 className="m-0 text-2xl font-semibold">{assistant?.name ?? 'How can I help?'}</h2>
      <p className="muted m-0">
        {assistant === undefined
          ? 'Ask anything. The assistant remembers what matters.'
          : assistant.description || 'Ask anything.'}
      </p>
      <ul className="m-0 grid w-full list-none grid-cols-1 gap-2 p-0 sm:grid-cols-2" aria-label="Starters">
        {starters.map(({ icon: Icon, text }) => (
          <li key={text}>
            <button
              type="button"
              className="btn h-full w-full justify-start text-left font-normal"
              disabled={props.disabled}
              onClick={() => props.onStart(text)}
            >
              <Icon size={16} className="shrink-0 text-accent" aria-hidden />
              {text}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
