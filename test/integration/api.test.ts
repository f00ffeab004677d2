import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../shared/repo-root.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

describe('API health, readiness and docs', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  const app = () => api.app;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    api = await startApi(clients, { listen: false });
  });

  afterAll(async () => {
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('answers /health while the process lives', async () => {
    const response = await app().inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('reports every dependency up on /ready', async () => {
    // Probes poll readiness; on a busy machine the registry's JVM can miss one 2 s check.
    const response = await waitFor('/ready answering 200', async () => {
      const answer = await app().inject({ method: 'GET', url: '/ready' });
      return answer.statusCode === 200 ? answer : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 }).catch(() => app().inject({ method: 'GET', url: '/ready' }));
    const body = response.json<{ status: string; checks: Record<string, { status: string }> }>();
    expect(body.checks, JSON.stringify(body)).toMatchObject({
      kafka: { status: 'up' },
      registry: { status: 'up' },
      postgres: { status: 'up' },
      clickhouse: { status: 'up' },
      s3: { status: 'up' },
      smtp: { status: 'up' },
    });
    expect(response.statusCode).toBe(200);
    expect(body.status).toBe('ready');
  });

  it('answers 503 naming the dependency that is down', async () => {
    const broken = { ...clients, config: { ...clients.config, schemaRegistryUrl: 'http://127.0.0.1:9/apis/ccompat/v7' } };
    const server = await startApi(broken, { listen: false });
    try {
      const response = await server.app.inject({ method: 'GET', url: '/ready' });
      expect(response.statusCode).toBe(503);
      const body = response.json<{ status: string; checks: Record<string, { status: string; error?: string }> }>();
      expect(body.status).toBe('not_ready');
      expect(body.checks.registry?.status).toBe('down');
      expect(body.checks.registry?.error).toBeTruthy();
      expect(body.checks.postgres?.status).toBe('up');
    } finally {
      await server.stop();
    }
  });

  it('serves OpenAPI generated from the route schemas', async () => {
    const response = await app().inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.json<{ openapi: string; paths: Record<string, unknown> }>();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/health', '/ready', '/keys', '/keys/{id}/rotate', '/instances', '/pools', '/conversations', '/conversations/{jid}/messages',
        '/contacts/check', '/contacts/import', '/contacts/export', '/contacts/{id}/optout', '/usage', '/me/entitlements',
        '/me/subscription', '/media/{id}', '/sandbox/instances/{id}/customer-messages',
        ...['text', 'image', 'video', 'document', 'audio', 'sticker', 'location', 'contact', 'reaction', 'poll', 'buttons', 'list', 'otp'].map((t) => `/messages/${t}`),
      ]),
    );
    const docs = await app().inject({ method: 'GET', url: '/docs' });
    expect(docs.statusCode).toBeLessThan(400);
  });

  it('answers unknown routes with the error object in the caller language', async () => {
    const response = await app().inject({ method: 'GET', url: '/nope', headers: { 'accept-language': 'pt-BR,pt;q=0.9' } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found', locale: 'pt' });
  });

  it('compresses what the client accepts: the component bundle in Brotli or gzip, the OpenAPI; not small answers', async () => {
    const bundle = await readFile(path.join(repoRoot, 'dist', 'widget', 'v1', 'connect.js'));
    const br = await app().inject({ method: 'GET', url: '/v1/connect.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(br.rawPayload).equals(bundle)).toBe(true);
    expect(br.rawPayload.length).toBeLessThan(35 * 1024);

    const gzip = await app().inject({ method: 'GET', url: '/v1/connect.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).equals(bundle)).toBe(true);
    const plain = await app().inject({ method: 'GET', url: '/v1/connect.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(bundle)).toBe(true);
    const revalidated = await app().inject({ method: 'GET', url: '/v1/connect.js', headers: { 'accept-encoding': 'gzip', 'if-none-match': String(gzip.headers.etag) } });
    expect(revalidated.statusCode).toBe(304);

    const openapi = await app().inject({ method: 'GET', url: '/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    expect(openapi.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(openapi.rawPayload).toString('utf8'))).toHaveProperty('paths');
    const health = await app().inject({ method: 'GET', url: '/health', headers: { 'accept-encoding': 'gzip' } });
    expect(health.headers['content-encoding']).toBeUndefined();
  });
});
