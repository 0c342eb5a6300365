// Contract tests of the user delegation SAS signer against the local Blob Storage (Azurite, OAuth mode) with the real
// SDK: a URL allows its permissions on its one blob only, a signature binds the blob's path and query, not the host,
// and an archive's link read through the local runtime's /local/blob/ proxy needs no certificate trusted.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'node:https';
import { Readable } from 'node:stream';
import type { ContainerClient } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlobProxy, LOCAL_BLOB_PATH } from '../../local/blob/blob-proxy.js';
import { startLocalBlob, type LocalBlob } from '../../local/blob/local-azurite.js';
import { createBlobArchiveStore } from '../../shared/account/adapters/blob-archive-store.js';
import {
  createBlobSasSigner,
  type BlobSasSigner,
} from '../../shared/attachments/adapters/blob-sas-signer.js';

let blob: LocalBlob;
let container: ContainerClient;
let signer: BlobSasSigner;

beforeAll(async () => {
  blob = await startLocalBlob({ dataDir: undefined });
  const service = blob.serviceClient();
  container = service.getContainerClient('signed');
  await container.createIfNotExists();
  signer = createBlobSasSigner(service);
}, 60_000);

afterAll(() => blob?.stop());

/** One request over HTTPS that trusts the emulator's certificate; the status and the body. */
function send(url: string, method: 'GET' | 'PUT', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> =
      method === 'PUT'
        ? { 'x-ms-blob-type': 'BlockBlob', 'content-length': String(Buffer.byteLength(body ?? '')) }
        : {};
    const outgoing = request(url, { method, headers, agent: blob.agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000);

async function signedFor(name: string, permissions: string): Promise<string> {
  const target = container.getBlockBlobClient(name);
  return signer.signedUrl(
    { url: target.url, containerName: container.containerName, name: target.name },
    { permissions, expiresOn: inMinutes(10) },
  );
}

describe('a user delegation SAS from the signer', () => {
  it('lets a create-and-write URL write its blob, and not read it', async () => {
    const url = await signedFor('pending/a', 'cw');
    expect((await send(url, 'PUT', 'hello')).status).toBe(201);
    expect((await send(url, 'GET')).status).toBe(403);
    expect((await container.getBlockBlobClient('pending/a').downloadToBuffer()).toString()).toBe('hello');
  }, 30_000);

  it('lets a read URL read its blob, and not write it', async () => {
    await container.getBlockBlobClient('exports/b').uploadData(Buffer.from('archive'));
    const url = await signedFor('exports/b', 'r');
    expect(await send(url, 'GET')).toEqual({ status: 200, body: 'archive' });
    expect((await send(url, 'PUT', 'overwritten')).status).toBe(403);
  }, 30_000);

  it('refuses the signature on another blob, or with its permissions changed', async () => {
    const url = new URL(await signedFor('pending/c', 'cw'));
    const elsewhere = new URL(url);
    elsewhere.pathname = url.pathname.replace('pending/c', 'pending/d');
    expect((await send(elsewhere.href, 'PUT', 'x')).status).toBe(403);
    const widened = new URL(url);
    widened.searchParams.set('sp', 'rcw');
    expect((await send(widened.href, 'PUT', 'x')).status).toBe(403);
  }, 30_000);

  it('holds whatever host the request names: the signature binds the path and the query', async () => {
    const url = new URL(await signedFor('pending/e', 'cw'));
    expect(url.hostname).toBe('127.0.0.1');
    url.hostname = 'localhost';
    expect((await send(url.href, 'PUT', 'through another name')).status).toBe(201);
  }, 30_000);
});

describe('a signed link through the /local/blob/ proxy', () => {
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    const proxy = createBlobProxy({ origin: new URL(blob.endpoint).origin, agent: blob.agent });
    server = createServer((req, res) => {
      void proxy.handleRequest(req, res).then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

  it("reads a data archive by its link on the proxy's origin, plain HTTP, nothing to trust", async () => {
    const service = blob.serviceClient();
    const publicEndpoint = `${origin}${LOCAL_BLOB_PATH}${new URL(blob.endpoint).pathname}`;
    const archives = createBlobArchiveStore(createBlobSasSigner(service, { publicEndpoint }), container);
    await archives.write('user-1', 'exp-1', Readable.from([Buffer.from('the archive')]));
    const link = await archives.signedUrl('user-1', 'exp-1', inMinutes(15));
    expect(link.startsWith(`${publicEndpoint}/signed/exports/`)).toBe(true);
    const read = await fetch(link);
    expect(read.status).toBe(200);
    expect(await read.text()).toBe('the archive');
    expect(read.headers.get('content-type')).toBe('application/gzip');
  }, 30_000);

  it('forwards only signed requests, and only the methods a page needs', async () => {
    const listing = `${origin}${LOCAL_BLOB_PATH}${new URL(blob.endpoint).pathname}/signed?restype=container&comp=list`;
    const unsigned = await fetch(listing);
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('content-type')).toContain('application/problem+json');
    const deleting = await fetch(`${listing}&sig=x`, { method: 'DELETE' });
    expect(deleting.status).toBe(405);
    expect(deleting.headers.get('allow')).toBe('GET, HEAD, PUT, OPTIONS');
    // A forged signature reaches the emulator, which refuses it.
    expect((await fetch(`${listing}&sig=forged`)).status).toBe(403);
  }, 30_000);
});
