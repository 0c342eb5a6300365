// A real browser (Debian's Chromium through playwright-core) on another origin posts a message and reads its
// answer with a native EventSource opened by the stream URL's ticket; the text must be the committed answer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { describeBrowser, sharedBrowser, useSharedBrowser } from '../support/browser.js';
import { assembleText, ChatClient, DEV_IDENTITY_HEADER } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';

/** A page that is only an origin: the test runs its script in it. */
async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>chat client</title><p>chat client</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface PageChat {
  sessionId: string;
  chatMessageId: string;
  stream: string;
  text: string;
  events: string[];
}

/** In the page: start a session, post a message, and read its stream with a native EventSource. */
function chatInPage(page: Page, api: string, userId: string): Promise<PageChat> {
  return page.evaluate(
    async ({ api, userId, identityHeader }) => {
      const identity = { [identityHeader]: userId };
      const started = await fetch(`${api}/api/session/start`, { method: 'POST', headers: identity });
      const { sessionId } = (await started.json()) as { sessionId: string };
      const chatMessageId = crypto.randomUUID();
      const posted = await fetch(`${api}/api/chat`, {
        method: 'POST',
        headers: { ...identity, 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId, chatMessageId, text: 'Hello from a browser: what is 2 + 3?' }),
      });
      if (posted.status !== 202) throw new Error(`POST /api/chat answered ${posted.status}`);
      const { stream } = (await posted.json()) as { stream: string };
      if (posted.headers.get('location') !== stream) throw new Error('location is not readable cross-origin');

      const deltas = new Map<number, string>();
      const events: string[] = [];
      const text = await new Promise<string>((resolve, reject) => {
        const source = new EventSource(`${api}${stream}`);
        const timer = setTimeout(() => {
          source.close();
          reject(new Error('no message-end within 120 s'));
        }, 120_000);
        const finish = (outcome: () => void) => {
          clearTimeout(timer);
          source.close();
          outcome();
        };
        const on = (name: string, handle: (data: Record<string, unknown>) => void) =>
          source.addEventListener(name, (event) => {
            events.push(name);
            handle(JSON.parse((event as unknown as { data: string }).data) as Record<string, unknown>);
          });
        on('content', (data) => deltas.set(data.seq as number, data.delta as string));
        // Text of a crashed attempt is withdrawn by seq range: the client drops those deltas.
        on('discard', (data) => {
          for (const seq of [...deltas.keys()])
            if (seq >= (data.fromSeq as number) && seq <= (data.toSeq as number)) deltas.delete(seq);
        });
        on('message-end', () =>
          finish(() =>
            resolve(
              [...deltas]
                .sort(([a], [b]) => a - b)
                .map(([, delta]) => delta)
                .join(''),
            ),
          ),
        );
        on('turn-error', (data) => finish(() => reject(new Error(`turn failed: ${String(data.message)}`))));
        // EventSource's own error: a dropped connection it retries (CONNECTING), or a refusal (CLOSED).
        source.onerror = () => {
          if (source.readyState === EventSource.CLOSED)
            finish(() => reject(new Error('the EventSource was refused')));
        };
      });
      return { sessionId, chatMessageId, stream, text, events };
    },
    { api, userId, identityHeader: DEV_IDENTITY_HEADER },
  );
}

describeBrowser('a browser on another origin', () => {
  useSharedBrowser();
  let runtime: LocalRuntime;
  let browser: Browser;
  let allowed: { server: Server; origin: string };
  let blocked: { server: Server; origin: string };

  beforeAll(async () => {
    allowed = await startPageServer();
    blocked = await startPageServer();
    runtime = await startTestRuntime({
      settings: { CORS_ALLOWED_ORIGINS: allowed.origin, OFFLINE_MODEL_TOKENS_PER_SECOND: '400' },
    });
    browser = await sharedBrowser();
  });
  afterAll(async () => {
    await runtime?.stop();
    allowed?.server.close();
    blocked?.server.close();
  });

  async function openPage(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  it("posts with fetch and streams the answer with a native EventSource: the turn's committed answer", async () => {
    const page = await openPage(allowed.origin);
    try {
      const chat = await chatInPage(page, runtime.url, 'user_001');
      expect(chat.events.at(-1)).toBe('message-end');
      expect(chat.events).toContain('content');
      expect(chat.text).not.toBe('');
      // Read back with the owner's identity, from the store: the same text.
      const frames = await new ChatClient(runtime.url, 'user_001').stream(chat.sessionId, chat.chatMessageId);
      expect(chat.text).toBe(assembleText(frames.map((frame) => frame.data)));
    } finally {
      await page.close();
    }
  });

  it('is blocked by the browser from an origin that is not allowed, for fetch and EventSource', async () => {
    // A stream URL with a valid ticket, so only CORS can stop the page from reading it.
    const alice = new ChatClient(runtime.url, 'user_001');
    const sessionId = await alice.startSession();
    const response = await alice.post({ sessionId, chatMessageId: crypto.randomUUID(), text: 'Hi.' });
    const { stream } = (await response.json()) as { stream: string };

    const page = await openPage(blocked.origin);
    try {
      const outcome = await page.evaluate(
        async ({ api, stream, identityHeader }) => {
          const posted = await fetch(`${api}/api/session/start`, {
            method: 'POST',
            headers: { [identityHeader]: 'user_001' },
          }).then(
            () => 'answered',
            (error: unknown) => `refused: ${String(error)}`,
          );
          const streamed = await new Promise<string>((resolve) => {
            const source = new EventSource(`${api}${stream}`);
            let received = 0;
            source.addEventListener('message-start', () => received++);
            source.onerror = () => {
              if (source.readyState !== EventSource.CLOSED) return;
              resolve(`closed after ${received} events`);
            };
            setTimeout(() => {
              source.close();
              resolve(`open after ${received} events`);
            }, 10_000);
          });
          return { posted, streamed };
        },
        { api: runtime.url, stream, identityHeader: DEV_IDENTITY_HEADER },
      );
      expect(outcome.posted).toMatch(/^refused: TypeError/);
      expect(outcome.streamed).toBe('closed after 0 events');
    } finally {
      await page.close();
    }
  });
});
