import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import type { Config } from '../../stack/config.js';
import { startRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { freePort } from '../support/gateway.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

const TOKEN = 'metrics-token-for-the-test';


/**
 * Who may read `/metrics` (docs/metrics.md): without METRICS_TOKEN the API's port answers the host
 * itself only; with it, whoever sends it; with METRICS_PORT, it moves to a port of its own.
 */
describe('access to /metrics', () => {
  let env: TestEnv;
  let clients: Clients;
  const running: { stop(): Promise<void> }[] = [];

  /** The same clients under other settings, as another process of the gateway would read them. */
  const withConfig = (config: Partial<Config>): Clients => ({ ...clients, config: { ...clients.config, ...config } });
  const listening = async (api: RunningApi) => {
    running.push(api);
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    return `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  };
  const scrape = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers });
    const text = await response.text();
    return { status: response.status, text, code: response.status === 200 ? undefined : (JSON.parse(text) as { code: string }).code };
  };

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });
  afterAll(async () => {
    for (const part of running) await part.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('answers the host itself without a token, and nobody through a proxy', async () => {
    const base = await listening(await startApi(clients, { listen: false }));
    const local = await scrape(`${base}/metrics`);
    expect(local.status).toBe(200);
    expect(local.text).toContain('process_cpu_user_seconds_total');
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      expect(await scrape(`${base}/metrics`, { [header]: '203.0.113.7' })).toMatchObject({ status: 401, code: 'metrics_unauthorized' });
    }
  });

  it('needs METRICS_TOKEN when it is set, from the host too', async () => {
    const base = await listening(await startApi(withConfig({ metricsToken: TOKEN }), { listen: false }));
    expect(await scrape(`${base}/metrics`)).toMatchObject({ status: 401, code: 'metrics_unauthorized' });
    expect(await scrape(`${base}/metrics`, { authorization: 'Bearer wrong' })).toMatchObject({ status: 401, code: 'metrics_unauthorized' });
    expect((await scrape(`${base}/metrics`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await scrape(`${base}/metrics`, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, { get: { security: unknown } }> };
    expect(document.paths['/metrics']?.get.security).toEqual([{ metricsToken: [] }]);
  });

  it('moves to METRICS_PORT when it is set, with the token there', async () => {
    const metricsPort = await freePort();
    const roles = await startRoles(['api'], withConfig({ host: '127.0.0.1', port: 0, metricsPort, metricsToken: TOKEN }));
    running.push(roles);
    const api = `http://127.0.0.1:${(roles.api!.app.server.address() as AddressInfo).port}`;
    expect(await scrape(`${api}/metrics`, { authorization: `Bearer ${TOKEN}` })).toMatchObject({ status: 404, code: 'not_found' });
    const document = (await (await fetch(`${api}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(document.paths['/metrics']).toBeUndefined();
    const own = `http://127.0.0.1:${metricsPort}/metrics`;
    expect(await scrape(own)).toMatchObject({ status: 401, code: 'metrics_unauthorized' });
    const scraped = await scrape(own, { authorization: `Bearer ${TOKEN}` });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('gateway_http_requests_total');
  });

  it('answers whoever reaches METRICS_PORT while no token is set: the operator chose the port', async () => {
    const metricsPort = await freePort();
    running.push(await startRoles(['processor'], withConfig({ host: '127.0.0.1', metricsPort })));
    expect((await scrape(`http://127.0.0.1:${metricsPort}/metrics`, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
  });
});
