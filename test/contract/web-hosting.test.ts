// The web client on Azure: a Free Static Web App that azd deploys as the `web` service, admitted by the function
// app's CORS, staged against the provisioned API with the same CSP and caching as the local runtime gives it.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hostingTargets,
  stageWebApp,
  staticWebAppConfig,
  WEB_STAGE_DIR,
} from '../../scripts/stage-web-app.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFile(path.join(repoRoot, file), 'utf8');

const targets = {
  apiUrl: 'https://func-abc123.azurewebsites.net',
  webPubSubEndpoint: 'https://wps-abc123.webpubsub.azure.com',
  signInOrigin: 'https://login.microsoftonline.com',
};

describe('the Static Web App configuration', () => {
  const config = staticWebAppConfig(targets) as {
    navigationFallback: { rewrite: string; exclude: string[] };
    routes: { route: string; headers: Record<string, string> }[];
    globalHeaders: Record<string, string>;
  };

  it('lets the page reach the API, Web PubSub and the sign-in service, and run no inline script', () => {
    const csp = config.globalHeaders['content-security-policy'] ?? '';
    expect(csp).toContain(
      "connect-src 'self' https://func-abc123.azurewebsites.net wss://wps-abc123.webpubsub.azure.com " +
        'https://login.microsoftonline.com;',
    );
    // MSAL renews tokens silently in a hidden frame of the sign-in service.
    expect(csp).toContain("frame-src 'self' https://login.microsoftonline.com;");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('lets the page upload large attachments straight to the Blob service azd provisioned', () => {
    const blob = 'https://stabc123.blob.core.windows.net';
    const withBlob = hostingTargets({
      SERVICE_API_URI: targets.apiUrl,
      WEBPUBSUB_ENDPOINT: targets.webPubSubEndpoint,
      ATTACHMENTS_BLOB_ENDPOINT: `${blob}/`,
    });
    expect(withBlob.blobOrigin).toBe(blob);
    const csp = (staticWebAppConfig(withBlob) as { globalHeaders: Record<string, string> }).globalHeaders[
      'content-security-policy'
    ];
    expect(csp).toContain(`https://login.microsoftonline.com ${blob};`);
  });

  it('revalidates the page, keeps hashed assets forever, and answers client routes with the page', () => {
    expect(config.globalHeaders['cache-control']).toBe('no-cache');
    expect(config.routes).toContainEqual({
      route: '/assets/*',
      headers: { 'cache-control': 'public, max-age=31536000, immutable' },
    });
    expect(config.navigationFallback.rewrite).toBe('/index.html');
    // A missing script must stay a 404, never the page served as JavaScript.
    expect(config.navigationFallback.exclude).toContain('/assets/*');
  });

  it("answers a shared conversation's address with the page, marked for no search engine", () => {
    const shared = config.routes.find((route) => route.route === '/s/*') as
      { rewrite?: string; headers: Record<string, string> } | undefined;
    expect(shared?.rewrite).toBe('/index.html');
    expect(shared?.headers['x-robots-tag']).toMatch(/\bnoindex\b/);
    // Only the shared page: the chat itself is not marked.
    expect(config.globalHeaders['x-robots-tag']).toBeUndefined();
  });

  it("reads azd's outputs, and says what to run when one is missing or not an https origin", () => {
    expect(
      hostingTargets({
        SERVICE_API_URI: `${targets.apiUrl}/`,
        WEBPUBSUB_ENDPOINT: targets.webPubSubEndpoint,
      }),
    ).toEqual(targets);
    expect(
      hostingTargets({
        SERVICE_API_URI: targets.apiUrl,
        WEBPUBSUB_ENDPOINT: targets.webPubSubEndpoint,
        AZURE_AUTHORITY_HOST: 'https://login.microsoftonline.us',
      }).signInOrigin,
    ).toBe('https://login.microsoftonline.us');
    expect(() => hostingTargets({ WEBPUBSUB_ENDPOINT: targets.webPubSubEndpoint })).toThrow(
      /SERVICE_API_URI is not set: run `azd provision` first/,
    );
    expect(() =>
      hostingTargets({
        SERVICE_API_URI: 'http://x.example/api',
        WEBPUBSUB_ENDPOINT: targets.webPubSubEndpoint,
      }),
    ).toThrow(/not an https origin/);
  });
});

describe('staging the web client', () => {
  let outDir: string | undefined;
  afterAll(async () => {
    if (outDir !== undefined) await rm(path.dirname(outDir), { recursive: true, force: true });
  });

  it('builds the page with the API origin compiled in, and writes its configuration beside it', async () => {
    outDir = path.join(await mkdtemp(path.join(tmpdir(), 'stage-web-')), 'web');
    await stageWebApp(
      repoRoot,
      { SERVICE_API_URI: targets.apiUrl, WEBPUBSUB_ENDPOINT: targets.webPubSubEndpoint },
      outDir,
    );
    const page = await readFile(path.join(outDir, 'index.html'), 'utf8');
    // Assets from the root: the page opened at /s/{shareId} asks for /assets/x.js, which the host serves.
    expect(page).toMatch(/<script type="module"[^>]* src="\/assets\/[^"]+\.js"/);
    expect(page).not.toMatch(/(?:src|href)="\.\//);
    // The page calls the function app, not its own origin.
    const scripts = await readdir(path.join(outDir, 'assets'));
    const bundle = (
      await Promise.all(
        scripts
          .filter((file) => file.endsWith('.js'))
          .map((file) => readFile(path.join(outDir!, 'assets', file), 'utf8')),
      )
    ).join('');
    expect(bundle.includes(targets.apiUrl), 'the API origin is in the bundle').toBe(true);
    // Built for production whatever NODE_ENV the test runner set: React's development build is not shipped.
    expect(bundle.includes('Invalid hook call'), "React's development build").toBe(false);
    const config = JSON.parse(await readFile(path.join(outDir, 'staticwebapp.config.json'), 'utf8')) as {
      globalHeaders: Record<string, string>;
    };
    expect(config.globalHeaders['content-security-policy']).toContain(targets.apiUrl);
    // The staging never touches the local build's record, so `npm start` does not serve an Azure-bound page.
    expect(process.env.VITE_API_BASE_URL).toBeUndefined();
  });
});

describe('the infrastructure of the web client', () => {
  it('is a Free Static Web App tagged as the azd service `web`', async () => {
    const template = await read('infra/modules/static-web-app.bicep');
    expect(template).toMatch(/resource site 'Microsoft\.Web\/staticSites@[\d-]+'/);
    expect(template).toMatch(/sku: \{\s*name: 'Free'\s*tier: 'Free'\s*\}/);
    expect(template).toMatch(/'azd-service-name': 'web'/);
  });

  it("is an origin the function app's CORS admits, whatever corsAllowedOrigins says", async () => {
    const main = await read('infra/main.bicep');
    expect(main).toMatch(/corsAllowedOrigins: union\(corsAllowedOrigins, \[webApp\.outputs\.uri\]\)/);
    expect(main).toMatch(/^output SERVICE_WEB_URI string = webApp\.outputs\.uri$/m);
  });

  it('is deployed by azd from the staged folder, staged by the prepackage hook', async () => {
    const azureYaml = await read('azure.yaml');
    const web = /^ {2}web:\n((?: {4}.*\n?|\s*\n)+)/m.exec(azureYaml)?.[1] ?? '';
    expect(web).toMatch(/^ {4}host: staticwebapp$/m);
    expect(web).toMatch(new RegExp(`^ {4}dist: ${WEB_STAGE_DIR}$`, 'm'));
    expect(web.match(/run: npx tsx scripts\/stage-web-app\.ts$/gm)).toHaveLength(2);
  });
});
