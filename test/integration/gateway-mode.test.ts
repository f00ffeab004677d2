import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { freePort, spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { jsonCaller } from '../support/json-call.js';


/** How a command that should refuse to start ended; one that ran on is killed after a minute. */
async function exitOf(gateway: GatewayProcess): Promise<number | string> {
  const deadline = setTimeout(() => gateway.kill('SIGKILL'), 60_000);
  try {
    return await gateway.exited;
  } finally {
    clearTimeout(deadline);
  }
}

/** Production's Stripe settings; nothing calls Stripe at start, and the API address reaches nothing. */
const STRIPE = {
  PAYMENT_PROVIDER: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_gateway',
  STRIPE_PUBLISHABLE_KEY: 'pk_test_gateway',
  STRIPE_WEBHOOK_SECRET: 'whsec_gateway',
  STRIPE_PRODUCT: 'prod_pro',
  STRIPE_API_URL: 'http://127.0.0.1:9',
};

/**
 * The role commands run in production mode unless GATEWAY_MODE=development: the sandbox providers
 * (the payment form, the simulated network for new numbers) are refused at start with what to set,
 * and a production gateway serves none of the sandbox's controls. (`gateway start` runs in
 * development mode: start.test.ts.)
 */
describe('GATEWAY_MODE', () => {
  let env: TestEnv;
  /** The test's slice of the stack with GATEWAY_MODE unset (an empty value is unset), as a deployment has it. */
  let production: Record<string, string>;

  beforeAll(async () => {
    env = await createTestEnv();
    production = { ...env.env, GATEWAY_MODE: '' };
  });
  afterAll(async () => {
    await env?.dispose();
  });

  it('refuses the sandbox providers at start, naming what to set', async () => {
    const all = spawnGateway(['all'], production);
    // With Stripe set, the sandbox network for new numbers is still refused.
    const api = spawnGateway(['api'], { ...production, ...STRIPE });
    const unknown = spawnGateway(['all'], { ...env.env, GATEWAY_MODE: 'staging' });
    const [allExit, apiExit, unknownExit] = await Promise.all([exitOf(all), exitOf(api), exitOf(unknown)]);

    expect(allExit, all.output()).toBe(1);
    expect(all.output()).toContain('GATEWAY_MODE is production');
    expect(all.output()).toContain('PAYMENT_PROVIDER is sandbox (set PAYMENT_PROVIDER=stripe with its STRIPE_* variables)');
    expect(all.output()).toContain('CONNECTOR is sandbox (set CONNECTOR=baileys)');
    expect(all.output()).toContain('set GATEWAY_MODE=development');

    expect(apiExit, api.output()).toBe(1);
    expect(api.output()).toContain('CONNECTOR is sandbox');
    expect(api.output()).not.toContain('PAYMENT_PROVIDER is sandbox');

    expect(unknownExit, unknown.output()).toBe(1);
    expect(unknown.output()).toContain('GATEWAY_MODE must be development or production, not staging');
  });

  it('starts with Stripe and Baileys, and then serves no sandbox control nor a number on the sandbox', async () => {
    const settings = { ...production, ...STRIPE, CONNECTOR: 'baileys' };
    // An operator's command is not a role: it runs in production too.
    const created = spawnGateway(['accounts', 'create', '--name', 'Prod', '--email', `prod-${env.id}@shop.test`, '--json'], settings);
    expect(await exitOf(created), created.output()).toBe(0);
    const key = (JSON.parse(created.stdout().trim().split('\n').pop()!) as { api_key: string }).api_key;

    const port = await freePort();
    const gateway = spawnGateway(['api'], { ...settings, PORT: String(port), LOG_LEVEL: 'info' });
    try {
      const call = jsonCaller(() => `http://127.0.0.1:${port}`);
      await waitFor('the API up', async () => {
        gateway.assertRunning();
        return (await request(`http://127.0.0.1:${port}/health`)).statusCode === 200 || undefined;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      expect(gateway.output()).toContain('"mode":"production"');
      const owner = { authorization: `Bearer ${key}` };
      await waitFor('the key known to the API', async () => (await call('GET', '/instances', { headers: owner })).status === 200 || undefined, { timeoutMs: 20_000 });

      expect(await call('POST', '/sandbox/payments/confirm', { body: { client_secret: 'sandbox_pi_x_secret_y' } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await call('POST', '/sandbox/payments/renew', { headers: owner, body: { outcome: 'failed' } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await call('POST', '/sandbox/phone/scan', { body: { qr_code: 'x' } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await call('POST', '/sandbox/instances/inst_x/status', { headers: owner, body: { status: 'connected' } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      const sandboxNumber = await call('POST', '/instances', { headers: owner, body: { connector: 'sandbox' } });
      expect(sandboxNumber).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(JSON.stringify(sandboxNumber.body)).toContain('GATEWAY_MODE=development');
      expect(await call('POST', '/instances', { headers: owner, body: {} })).toMatchObject({ status: 202, body: { status: 'pending' } });
    } finally {
      gateway.kill('SIGINT');
    }
    expect(await gateway.exited, gateway.output()).toBe(0);
  });
});
