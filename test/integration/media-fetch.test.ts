// Outbound fetches against local HTTP servers: size cap while streaming, timeouts, redirects, and
// the private-address guard on every hop.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpFetcher, type HttpFetcher } from '../../shared/http/fetch.js';
import type { OutboundHttpError } from '../../shared/http/errors.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function failure(promise: Promise<unknown>): Promise<OutboundHttpError> {
  try {
    await promise;
  } catch (error) {
    return error as OutboundHttpError;
  }
  throw new Error('expected a failure');
}

const MiB = 1024 * 1024;

describe('outbound fetch', () => {
  let server: Server;
  let base: string;
  /** Bytes the endless route wrote before its client went away, and whether it did. */
  const endless = { written: 0, closed: new Promise<void>(() => undefined) };
  const hanging = new Set<ServerResponse>();
  let local: HttpFetcher;
  let guarded: HttpFetcher;

  beforeAll(async () => {
    ({ server, url: base } = await listen((request, response) => {
      const url = new URL(request.url ?? '/', 'http://local');
      switch (url.pathname) {
        case '/file':
          response.writeHead(200, { 'content-type': 'image/png; charset=binary' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
          return;
        case '/endless': {
          // Chunked, no Content-Length: only the streaming cap can stop it.
          response.writeHead(200, { 'content-type': 'application/octet-stream' });
          const chunk = Buffer.alloc(64 * 1024, 7);
          endless.closed = new Promise((resolve) => response.once('close', resolve));
          const pump = () => {
            while (!response.destroyed && response.write(chunk)) endless.written += chunk.length;
          };
          response.on('drain', pump);
          pump();
          return;
        }
        case '/announced':
          response.writeHead(200, { 'content-length': String(10 * MiB) }).write(Buffer.alloc(1024));
          return;
        case '/hang':
          hanging.add(response);
          return;
        case '/stall':
          response.writeHead(200).write('a little, then nothing');
          hanging.add(response);
          return;
        case '/redirect':
          response.writeHead(302, { location: url.searchParams.get('to') ?? '/file' }).end();
          return;
        case '/loop':
          response.writeHead(307, { location: '/loop' }).end();
          return;
        default:
          response.writeHead(Number(url.pathname.slice(1)) || 404).end('nope');
      }
    }));
    const timeouts = { headersTimeoutMs: 300, bodyTimeoutMs: 300, connectTimeoutMs: 1_000 };
    local = createHttpFetcher({ allowPrivateNetwork: true, ...timeouts });
    // The guard on, with only this test's server let through.
    guarded = createHttpFetcher({ allowRanges: ['127.0.0.1/32'], ...timeouts });
  });

  afterAll(async () => {
    for (const response of hanging) response.destroy();
    await local?.close();
    await guarded?.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('streams a body under the cap, with its media type', async () => {
    const response = await local.get(`${base}/file`, { maxBytes: 1024 });
    expect(response.contentType).toBe('image/png');
    expect(Buffer.concat(await response.body.toArray()).toString('hex')).toBe('89504e470d0a1a0a');
  });

  it('stops reading a body once it passes the cap, and closes the connection', async () => {
    const response = await local.get(`${base}/endless`, { maxBytes: MiB });
    let received = 0;
    const error = await failure(
      (async () => {
        for await (const chunk of response.body) received += (chunk as Buffer).length;
      })(),
    );
    expect(error).toMatchObject({ name: 'OutboundHttpError', kind: 'too_large', retryable: false });
    expect(received).toBeLessThanOrEqual(MiB);
    await endless.closed;
    // What socket buffers held when the client hung up; nowhere near an endless body.
    expect(endless.written).toBeLessThan(16 * MiB);
  });

  it('refuses at once a body that announces more than the cap', async () => {
    expect(await failure(local.get(`${base}/announced`, { maxBytes: MiB }))).toMatchObject({ kind: 'too_large' });
  });

  it('times out on a server that never answers, and on one that stops sending', async () => {
    const started = Date.now();
    expect(await failure(local.get(`${base}/hang`, { maxBytes: MiB }))).toMatchObject({ kind: 'timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    const response = await local.get(`${base}/stall`, { maxBytes: MiB });
    expect(await failure(response.body.toArray())).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('ends a slow fetch at the total deadline', async () => {
    const slow = createHttpFetcher({ allowPrivateNetwork: true, headersTimeoutMs: 10_000, totalTimeoutMs: 300 });
    try {
      expect(await failure(slow.get(`${base}/hang`, { maxBytes: MiB }))).toMatchObject({ kind: 'timeout' });
    } finally {
      await slow.close();
    }
  });

  it('answers unwanted statuses with the retry flag of the table', async () => {
    expect(await failure(local.get(`${base}/404`, { maxBytes: MiB }))).toMatchObject({ kind: 'status', status: 404, retryable: false });
    expect(await failure(local.get(`${base}/503`, { maxBytes: MiB }))).toMatchObject({ kind: 'status', status: 503, retryable: true });
    expect(await failure(local.get(`${base}/429`, { maxBytes: MiB }))).toMatchObject({ kind: 'status', status: 429, retryable: true });
  });

  it('follows redirects, up to a limit', async () => {
    const response = await local.get(`${base}/redirect?to=${encodeURIComponent('/redirect?to=/file')}`, { maxBytes: MiB });
    expect(response.url.pathname).toBe('/file');
    await response.body.toArray();
    expect(await failure(local.get(`${base}/loop`, { maxBytes: MiB }))).toMatchObject({ kind: 'too_many_redirects' });
  });

  it('checks every redirect hop against the guard', async () => {
    const port = new URL(base).port;
    const allowed = await guarded.get(`${base}/redirect?to=/file`, { maxBytes: MiB });
    await allowed.body.toArray();
    for (const target of [
      'http://169.254.169.254/latest/meta-data/',
      `http://127.0.0.2:${port}/file`,
      `http://[::1]:${port}/file`,
      `http://[::ffff:127.0.0.2]:${port}/file`,
      'http://10.0.0.1/',
    ]) {
      const error = await failure(guarded.get(`${base}/redirect?to=${encodeURIComponent(target)}`, { maxBytes: MiB }));
      expect(error, target).toMatchObject({ kind: 'blocked_address', retryable: false });
    }
  });

  it('refuses the local server itself when nothing is allowed', async () => {
    const strict = createHttpFetcher();
    try {
      expect(await failure(strict.get(`${base}/file`, { maxBytes: MiB }))).toMatchObject({ kind: 'blocked_address' });
      const port = new URL(base).port;
      expect(await failure(strict.get(`http://localhost:${port}/file`, { maxBytes: MiB }))).toMatchObject({ kind: 'blocked_address' });
    } finally {
      await strict.close();
    }
  });
});
