import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { freePort, spawnGateway } from '../support/gateway.js';


describe('the README run command (gateway start)', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(async () => {
    await env?.dispose();
  });

  it('brings up the stack and the gateway in development mode, reports ready, stops on SIGINT, and starts again', async () => {
    const port = await freePort();
    const keys: string[] = [];
    for (const round of [1, 2]) {
      // GATEWAY_MODE unset (empty is unset): `gateway start` runs in development mode of its own.
      const gateway = spawnGateway(['start'], { ...env.env, GATEWAY_MODE: '', PORT: String(port), LOG_LEVEL: 'info' });
      try {
        const ready = await waitFor(`round ${round}: /ready`, async () => {
          const response = await request(`http://127.0.0.1:${port}/ready`);
          const body = (await response.body.json()) as { status: string; checks: Record<string, { status: string }> };
          return response.statusCode === 200 ? body : undefined;
        }, { timeoutMs: 120_000, intervalMs: 200 });
        expect(Object.keys(ready.checks).sort()).toEqual(['clickhouse', 'kafka', 'postgres', 'registry', 's3', 'smtp']);
        expect(gateway.output()).toMatch(/kafka\s+up/);
        // /ready answers as soon as the API listens; the first start's account is printed before the ready line.
        await waitFor(`round ${round}: the ready line`, () => gateway.output().includes('gateway ready') || undefined, { timeoutMs: 60_000, intervalMs: 100 });
        // The first start on an empty database makes a sandbox account and prints its key; the second does not.
        keys.push(...(gateway.output().match(/svc_live_[A-Za-z0-9]{32}/g) ?? []));
        expect(new Set(keys).size).toBe(1);
        const numbers = await waitFor('the sandbox number connected', async () => {
          const response = await request(`http://127.0.0.1:${port}/instances`, { headers: { authorization: `Bearer ${keys[0]}` } });
          const body = (await response.body.json()) as { data: Array<{ status: string }> };
          return body.data.length === 1 && body.data[0]!.status === 'connected' ? body.data : undefined;
        }, { timeoutMs: 60_000, intervalMs: 200 });
        expect(numbers).toHaveLength(1);
        // The sandbox's controls are served (a body the route refuses, where production answers 404).
        const scan = await request(`http://127.0.0.1:${port}/sandbox/phone/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        expect(await scan.body.json()).toMatchObject({ code: 'invalid_request' });
        expect(gateway.output()).toContain('"mode":"development"');
      } finally {
        gateway.kill('SIGINT');
      }
      expect(await gateway.exited, gateway.output()).toBe(0);
    }
  });
});
