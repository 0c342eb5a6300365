// Stages the web client for its Static Web App in dist/web-azure/: built against the function app's URL, with a
// staticwebapp.config.json giving the local runtime's headers (CSP, caching, noindex) and the client-route fallback.
// azd runs it after provisioning (azure.yaml's `up` workflow); by hand: npx tsx scripts/stage-web-app.ts [--out dir]
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentSecurityPolicy } from '../local/http/static-site.js';
import { buildWebClient } from '../web/build.js';
import { outOption } from './stage-function-app.js';

/** Where azure.yaml's `web` service's `dist` points. */
export const WEB_STAGE_DIR = 'dist/web-azure';

/** The azd outputs the page needs: where the API is, the Web PubSub service its client connects to, who signs in. */
export interface WebHostingTargets {
  apiUrl: string;
  webPubSubEndpoint: string;
  /** Microsoft Entra ID's sign-in origin: MSAL fetches tokens from it and renews them in a hidden frame. */
  signInOrigin: string;
  /** The Blob service the page uploads large attachments straight to (azd's ATTACHMENTS_BLOB_ENDPOINT), if any. */
  blobOrigin?: string;
}

/** The public cloud's; AZURE_AUTHORITY_HOST names a sovereign cloud's (e.g. https://login.microsoftonline.us). */
const DEFAULT_SIGN_IN_ORIGIN = 'https://login.microsoftonline.com';

/** Reads the targets from azd's environment (outputs of infra/main.bicep); a missing one says what to run. */
export function hostingTargets(env: NodeJS.ProcessEnv): WebHostingTargets {
  const read = (name: string) => {
    const value = env[name]?.trim();
    if (value === undefined || !/^https:\/\/[^\s/]+\/?$/.test(value))
      throw new Error(
        `${name} is ${value === undefined || value === '' ? 'not set' : `"${value}", not an https origin`}: run ` +
          '`azd provision` first (azd passes its outputs to this hook), or set it by hand.',
      );
    return value.replace(/\/$/, '');
  };
  return {
    apiUrl: read('SERVICE_API_URI'),
    webPubSubEndpoint: read('WEBPUBSUB_ENDPOINT'),
    signInOrigin:
      env.AZURE_AUTHORITY_HOST === undefined ? DEFAULT_SIGN_IN_ORIGIN : read('AZURE_AUTHORITY_HOST'),
    ...(env.ATTACHMENTS_BLOB_ENDPOINT?.trim() ? { blobOrigin: read('ATTACHMENTS_BLOB_ENDPOINT') } : {}),
  };
}

/**
 * Static Web Apps' configuration: every response carries the CSP (the page may reach the API, Web PubSub over its
 * WebSocket, the sign-in service and the Blob service its large uploads go to, nothing else), the page is revalidated and the hashed assets are immutable, a
 * client route answers with the page while a missing asset stays a 404, and a shared conversation's page
 * (/s/{shareId}) is kept out of search engines.
 */
export function staticWebAppConfig(targets: WebHostingTargets): Record<string, unknown> {
  const webPubSub = new URL(targets.webPubSubEndpoint);
  return {
    navigationFallback: { rewrite: '/index.html', exclude: ['/assets/*', '/*.{ico,png,svg,webmanifest}'] },
    routes: [
      {
        route: '/assets/*',
        headers: { 'cache-control': 'public, max-age=31536000, immutable' },
      },
      { route: '/s/*', rewrite: '/index.html', headers: { 'x-robots-tag': 'noindex, nofollow' } },
    ],
    globalHeaders: {
      'content-security-policy': contentSecurityPolicy(
        [
          targets.apiUrl,
          `wss://${webPubSub.host}`,
          targets.signInOrigin,
          ...(targets.blobOrigin === undefined ? [] : [targets.blobOrigin]),
        ],
        [targets.signInOrigin],
      ),
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    },
  };
}

/** Builds the client into `outDir` against the targets in `env`, and writes its staticwebapp.config.json. */
export async function stageWebApp(
  root: string,
  env: NodeJS.ProcessEnv,
  outDir: string,
): Promise<WebHostingTargets> {
  const targets = hostingTargets(env);
  // Vite hands VITE_* variables of the environment to the client: the page calls the API at this origin.
  const previous = process.env.VITE_API_BASE_URL;
  process.env.VITE_API_BASE_URL = targets.apiUrl;
  try {
    // The Static Web App serves its assets at the root only, so the page asks for them there: a page opened at a
    // deep route (/s/{shareId}) would otherwise ask for /s/assets/x.js and receive the page instead.
    await buildWebClient(root, { outDir, base: '/' });
  } finally {
    if (previous === undefined) delete process.env.VITE_API_BASE_URL;
    else process.env.VITE_API_BASE_URL = previous;
  }
  writeFileSync(
    path.join(outDir, 'staticwebapp.config.json'),
    `${JSON.stringify(staticWebAppConfig(targets), null, 2)}\n`,
  );
  return targets;
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const outDir = outOption(process.argv, process.cwd()) ?? path.join(root, WEB_STAGE_DIR);
  const targets = await stageWebApp(root, process.env, outDir);
  console.log(`Staged the web client in ${path.relative(root, outDir) || outDir}/ for ${targets.apiUrl}`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
