import type { AddressInfo } from 'node:net';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** A partner logo is a record on the log: an API process started after the API's tables are gone serves it from `gw.config`. */
describe('partner logo on the log', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi | undefined;
  let admin: string;

  const baseOf = (running: RunningApi) => `http://127.0.0.1:${(running.app.server.address() as AddressInfo).port}`;
  async function call(base: string, method: string, path: string, body?: unknown, form?: FormData) {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    return { status: response.statusCode, headers: response.headers, raw: Buffer.from(await response.body.arrayBuffer()) };
  }

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1' });
    clients = await testClients(env);
    api = await startApi(clients, { listen: true });
    const created = await createPlatformAdmin(clients.producer, 'ops@gateway.test');
    admin = created.credential;
    await api.directory.until(() => api!.directory.platformAdmins.has(created.id), 15_000);
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('serves the uploaded logo from a fresh API process after the API schema is dropped', async () => {
    const first = baseOf(api!);
    const partner = await call(first, 'POST', '/platform/partners', { name: 'Logo Partner', slug: 'logo-partner', allowed_origins: ['https://app.example.com'] });
    expect(partner.status).toBe(201);
    const id = (JSON.parse(partner.raw.toString()) as { id: string }).id;
    const form = new FormData();
    form.append('file', new Blob([PNG]), 'logo.png');
    const uploaded = await call(first, 'POST', `/platform/partners/${id}/logo`, undefined, form);
    expect(uploaded.status).toBe(200);
    const logoUrl = (JSON.parse(uploaded.raw.toString()) as { logo_url: string }).logo_url;

    await api!.stop();
    api = undefined;
    await clients.pool.query('DROP SCHEMA api CASCADE');
    api = await startApi(clients, { listen: true });

    const served = await call(baseOf(api), 'GET', `/partners/${id}/logo`);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.raw.equals(PNG)).toBe(true);
    expect(logoUrl).toContain(`?v=${String(served.headers.etag).replaceAll('"', '').slice(0, 16)}`);
    expect(api.directory.partners.get(id)?.logo_url).toBe(logoUrl);
  }, 60_000);
});
