import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookPoster, EXCERPT_BYTES, type WebhookPoster } from '../../connectors/webhooks/post.js';

type Handler = (request: IncomingMessage, body: Buffer, response: ServerResponse) => void;

/** A local receiver whose answer each test chooses by path. */
describe('webhook POST over the guarded undici agent', () => {
  const routes = new Map<string, Handler>();
  const received: Array<{ path: string; headers: IncomingMessage['headers']; body: string }> = [];
  let server: Server;
  let base: string;
  let poster: WebhookPoster;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        received.push({ path: request.url ?? '', headers: request.headers, body: body.toString('utf8') });
        const handler = routes.get(request.url ?? '');
        if (handler) handler(request, body, response);
        else response.writeHead(404).end('no route');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    poster = createWebhookPoster({ timeoutMs: 500, allowPrivateNetwork: true });
  });

  afterAll(async () => {
    await poster.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('posts the exact body with the given headers and a user agent', async () => {
    routes.set('/ok', (_req, _body, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    const result = await poster.post(`${base}/ok`, '{"a":1}', { 'content-type': 'application/json', 'x-service-signature': 'sha256=abc' });
    expect(result).toMatchObject({ kind: 'response', status: 200, excerpt: 'thanks' });
    const request = received.find((r) => r.path === '/ok')!;
    expect(request.body).toBe('{"a":1}');
    expect(request.headers['x-service-signature']).toBe('sha256=abc');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^messaging-gateway-webhooks/);
  });

  it('keeps 1 KiB of a long answer', async () => {
    routes.set('/long', (_req, _body, res) => res.writeHead(500).end('x'.repeat(100_000)));
    const result = await poster.post(`${base}/long`, '{}', {});
    expect(result).toMatchObject({ kind: 'response', status: 500 });
    expect(result.kind === 'response' && result.excerpt).toBe('x'.repeat(EXCERPT_BYTES));
  });

  it('keeps 1 KiB of an answer written in many small chunks', async () => {
    routes.set('/chunked', (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let left = 600;
      const next = () => {
        if (left-- === 0) return void res.end();
        res.write('abcd', () => setImmediate(next));
      };
      next();
    });
    const result = await poster.post(`${base}/chunked`, '{}', {});
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    expect(result.kind === 'response' && result.excerpt).toBe('abcd'.repeat(EXCERPT_BYTES / 4));
  });

  it('gives an empty answer an empty excerpt', async () => {
    routes.set('/empty', (_req, _body, res) => res.writeHead(204).end());
    expect(await poster.post(`${base}/empty`, '{}', {})).toMatchObject({ kind: 'response', status: 204, excerpt: '' });
  });

  it('keeps what came of an answer cut short, judged by its status', async () => {
    routes.set('/cut', (_req, _body, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial', () => setTimeout(() => res.socket?.destroy(), 20));
    });
    expect(await poster.post(`${base}/cut`, '{}', {})).toMatchObject({ kind: 'response', status: 200, excerpt: 'partial' });
  });

  it('posts each URL to its own path and query, however often they alternate', async () => {
    routes.set('/a?n=1', (_req, _body, res) => res.writeHead(200).end('a'));
    routes.set('/b?n=2', (_req, _body, res) => res.writeHead(200).end('b'));
    for (let i = 0; i < 3; i++) {
      expect(await poster.post(`${base}/a?n=1`, '{}', {})).toMatchObject({ excerpt: 'a' });
      expect(await poster.post(`${base}/b?n=2`, '{}', {})).toMatchObject({ excerpt: 'b' });
    }
  });

  it('does not follow a redirect', async () => {
    routes.set('/moved', (_req, _body, res) => res.writeHead(302, { location: `${base}/ok` }).end());
    const before = received.filter((r) => r.path === '/ok').length;
    const result = await poster.post(`${base}/moved`, '{}', {});
    expect(result).toMatchObject({ kind: 'response', status: 302 });
    expect(received.filter((r) => r.path === '/ok').length).toBe(before);
  });

  it('times out a receiver that never answers', async () => {
    routes.set('/hang', () => undefined);
    const result = await poster.post(`${base}/hang`, '{}', {});
    expect(result.kind).toBe('timeout');
  });

  it('ends the whole exchange at its deadline, however slowly the answer trickles in', async () => {
    // Headers after 300 ms and a chunk every 200 ms: no single wait reaches the 500 ms deadline.
    routes.set('/trickle', (_req, _body, res) => {
      let chunks = 10;
      const next = () => (chunks-- === 0 ? res.end() : res.write('t', () => setTimeout(next, 200)));
      setTimeout(() => {
        res.writeHead(200);
        next();
      }, 300);
    });
    const result = await poster.post(`${base}/trickle`, '{}', {});
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    // Cut at the deadline: not the whole answer of ten chunks.
    expect(result.kind === 'response' && result.excerpt.length).toBeLessThan(10);
  });

  it('reports a closed port as a transport failure naming the host only', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await poster.post(`http://127.0.0.1:${port}/hook?token=secret-token`, '{}', {});
    expect(result.kind).toBe('transport');
    expect(result.kind === 'transport' && result.error).not.toContain('secret-token');
  });

  it('refuses private addresses unless allowed, and URLs that are not http(s)', async () => {
    const guarded = createWebhookPoster({ timeoutMs: 500 });
    try {
      expect(await guarded.post(`${base}/ok`, '{}', {})).toMatchObject({ kind: 'refused' });
      expect(await guarded.post('http://localhost:1/x', '{}', {})).toMatchObject({ kind: 'refused' });
      const allowedRange = createWebhookPoster({ timeoutMs: 500, allowRanges: ['127.0.0.0/8'] });
      expect(await allowedRange.post(`${base}/ok`, '{}', {})).toMatchObject({ kind: 'response', status: 200 });
      await allowedRange.close();
    } finally {
      await guarded.close();
    }
    expect(await poster.post('ftp://127.0.0.1/x', '{}', {})).toMatchObject({ kind: 'refused' });
    expect(await poster.post('not a url', '{}', {})).toMatchObject({ kind: 'refused' });
  });

  it('answers aborted for posts in flight when it closes', async () => {
    const arrived = new Promise<void>((resolve) => routes.set('/hang-long', () => resolve()));
    const closing = createWebhookPoster({ timeoutMs: 60_000, allowPrivateNetwork: true });
    const pending = closing.post(`${base}/hang-long`, '{}', {});
    await arrived;
    await closing.close();
    expect((await pending).kind).toBe('aborted');
  });
});
