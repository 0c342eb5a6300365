// Thumbs up and down under an answer: a pressed one says how the owner rated it, pressing it again takes it back.
import { ThumbsDown, ThumbsUp } from 'lucide-react';
import type { ReactNode } from 'react';
import type { Rating } from './answer-feedback';

export function FeedbackButtons(props: {
  rating: Rating | undefined;
  disabled: boolean;
  onRate: (rating: Rating | null) => void;
}): ReactNode {
  const button = (rating: Rating, label: string, icon: ReactNode) => {
    const pressed = props.rating === rating;
    return (
      <button
        type="button"
        className={`btn btn-quiet btn-icon size-8 ${pressed ? 'text-accent' : ''}`}
        aria-label={label}
        title={label}
        aria-pressed={pressed}
        disabled={props.disabled}
        onClick={() => props.onRate(pressed ? null : rating)}
      >
        {icon}
      </button>
    );
  };
  return (
    <>
      {button(
        'up',
        'Good answer',
        <ThumbsUp size={16} aria-hidden fill={props.rating === 'up' ? 'currentColor' : 'none'} />,
      )}
      {button(
        'down',
        'Bad answer',
        <ThumbsDown size={16} aria-hidden fill={props.rating === 'down' ? 'currentColor' : 'none'} />,
      )}
    </>
  );
}
