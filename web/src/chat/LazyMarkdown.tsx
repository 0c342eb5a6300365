// An answer's Markdown through a chunk loaded when first needed, and until it arrives the same text laid out as the
// renderer lays out paragraphs, so the swap does not change the log's height under a reader who scrolled up.
import { lazy, Suspense } from 'react';
import type { ReactNode } from 'react';
import type MarkdownRenderer from './Markdown';

type MarkdownModule = { default: typeof MarkdownRenderer };

let markdownModule: Promise<MarkdownModule> | undefined;

/** Starts loading the renderer (a send does it, so the chunk is usually in before the answer's first words). */
export function preloadMarkdown(): Promise<MarkdownModule> {
  markdownModule ??= import('./Markdown');
  return markdownModule;
}

const Markdown = lazy(preloadMarkdown);

/** Paragraphs split where Markdown splits them, spaced as the renderer spaces its blocks (marked as a stand-in). */
function PlainParagraphs(props: { text: string }): ReactNode {
  return (
    <div className="message-body space-y-4" data-markdown-pending="">
      {props.text.split(/\n[ \t]*\n+/).map((paragraph, index) => (
        <p key={index} className="m-0 whitespace-pre-wrap">
          {paragraph}
        </p>
      ))}
    </div>
  );
}

export function LazyMarkdown(props: { text: string; streaming: boolean }): ReactNode {
  return (
    <Suspense fallback={<PlainParagraphs text={props.text} />}>
      <Markdown text={props.text} streaming={props.streaming} />
    </Suspense>
  );
}
