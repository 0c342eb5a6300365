// The answer's Markdown, rendered as it streams and safely: raw HTML from the model never reaches the DOM, links
// open in a new tab without access to this page, and a link to anything but http(s) or mailto is dropped. Loaded
// with the first answer (React.lazy), so the page's first script stays small.
import type { ReactNode } from 'react';
import { Streamdown } from 'streamdown';
import type { Components } from 'streamdown';

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

/** An absolute URL with a safe protocol, or a relative one; '' for `javascript:`, `data:` and the like. */
export function safeUrl(url: string): string {
  // Browsers ignore control characters and spaces inside a scheme ("java\tscript:"), so they are stripped first.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  const compact = url.replace(/[\u0000-\u0020\u007f]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact);
  if (scheme === null) return compact.startsWith('//') ? '' : url;
  return SAFE_PROTOCOLS.has(`${scheme[1]?.toLowerCase() ?? ''}:`) ? url : '';
}

const components: Components = {
  a: ({ href, children }) => {
    const target = typeof href === 'string' ? safeUrl(href) : '';
    if (target === '') return <span className="link-dropped">{children}</span>;
    return (
      <a href={target} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    );
  },
  // Images from the model would load third-party URLs: show the alt text and the address instead.
  img: ({ alt, src }) => (
    <span className="image-dropped">
      [{alt ?? 'image'}
      {typeof src === 'string' && safeUrl(src) !== '' ? `: ${src}` : ''}]
    </span>
  ),
};

export default function Markdown(props: { text: string; streaming: boolean }): ReactNode {
  return (
    <Streamdown
      className="message-body"
      mode={props.streaming ? 'streaming' : 'static'}
      isAnimating={props.streaming}
      skipHtml
      urlTransform={safeUrl}
      components={components}
      linkSafety={{ enabled: false }}
      codeBlockMaxHeight="24rem"
      controls={{ code: { copy: true, download: false }, table: false, mermaid: false }}
    >
      {props.text}
    </Streamdown>
  );
}
