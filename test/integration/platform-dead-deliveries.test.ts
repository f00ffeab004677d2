import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { retrySchedules } from '../../connectors/webhooks/index.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { DeliveryTask } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';

/**
 * The platform's view of deliveries given up on (what the panel's "Dead deliveries" shows):
 * listed from `gw.deliveries.dead`, and sent again by id or by endpoint onto the first retry tier.
 */
describe('GET /platform/dead-deliveries and POST /platform/dead-deliveries/redeliver', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let base: string;
  let admin: string;
  const tiers: { values: DeliveryTask[]; consumer: { stop(): Promise<void> } }[] = [];

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, auth: string | null = admin) => {
    const response = await request(`${base}${path}`, {
      method,
      headers: { ...(auth === null ? {} : { authorization: `Bearer ${auth}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> & { data?: Record<string, unknown>[] } };
  };

  const task = (n: number, kind: DeliveryTask['target_kind'], target: string): DeliveryTask => ({
    event_id: asEventId(`evt_${env.id}_${n}`), occurred_at: Date.now(), account_id: asAccountId('acc_dd'), project_id: asProjectId('prj_dd'), instance_id: null,
    delivery_id: `dlv_${env.id}_${n}`, target_kind: kind, target_id: target, event_type: 'message.sent', trigger: 'scheduled',
    attempt: 5, not_before: Date.now(), last_error: 'HTTP 500', body_json: JSON.stringify({ n }),
  });

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1' });
    clients = await testClients(env);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const created = await createPlatformAdmin(clients.producer, 'dead@gateway.test');
    admin = created.credential;
    await api.directory.until(() => api.directory.platformAdmins.has(created.id), 15_000);
    const schedules = retrySchedules(env.config.webhooks.retryDelaysMs);
    for (const kind of ['account_webhook', 'partner_webhook'] as const) tiers.push(await collectTopic(clients, schedules[kind].retries[0].tier, `${env.id}.test.tier.${kind}`));
    await clients.producer.send(topics.deliveryDead, [
      { key: 'wh_dd', value: task(1, 'account_webhook', 'wh_dd') },
      { key: 'ptn_dd', value: task(2, 'partner_webhook', 'ptn_dd') },
      { key: 'ptn_dd', value: task(3, 'partner_webhook', 'ptn_dd') },
    ]);
  }, 60_000);

  afterAll(async () => {
    for (const tier of tiers) await tier.consumer.stop();
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('lists every dead delivery and those of one endpoint, to a platform administrator only', async () => {
    expect(await call('GET', '/platform/dead-deliveries', undefined, null)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const all = await call('GET', '/platform/dead-deliveries');
    expect(all.status).toBe(200);
    expect(all.body.data?.map((d) => d.delivery_id)).toEqual([1, 2, 3].map((n) => `dlv_${env.id}_${n}`));
    expect(all.body.data?.[0]).toMatchObject({ target_kind: 'account_webhook', target_id: 'wh_dd', attempts: 4, last_error: 'HTTP 500', event_type: 'message.sent' });
    expect(typeof all.body.data?.[0]?.dead_at).toBe('string');
    const partner = await call('GET', '/platform/dead-deliveries?endpoint=ptn_dd');
    expect(partner.body.data?.map((d) => d.delivery_id)).toEqual([`dlv_${env.id}_2`, `dlv_${env.id}_3`]);
    const last = await call('GET', '/platform/dead-deliveries?endpoint=wh_dd&limit=1');
    expect(last.body.data?.map((d) => d.delivery_id)).toEqual([`dlv_${env.id}_1`]);
    expect(await call('GET', '/platform/dead-deliveries?endpoint=drop%20table')).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it('sends dead deliveries again by id and by endpoint, each as a new delivery, and refuses unknown ids sending nothing', async () => {
    expect(await call('POST', '/platform/dead-deliveries/redeliver', { delivery_ids: ['dlv_nobody', `dlv_${env.id}_1`] })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('POST', '/platform/dead-deliveries/redeliver', {})).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await call('POST', '/platform/dead-deliveries/redeliver', { delivery_ids: [] })).toMatchObject({ status: 400 });

    const byId = await call('POST', '/platform/dead-deliveries/redeliver', { delivery_ids: [`dlv_${env.id}_1`] });
    expect(byId).toMatchObject({ status: 202, body: { data: [{ delivery_id: `dlv_${env.id}_1` }] } });
    const byEndpoint = await call('POST', '/platform/dead-deliveries/redeliver', { endpoint: 'ptn_dd' });
    expect(byEndpoint.body.data?.map((d) => d.delivery_id)).toEqual([`dlv_${env.id}_2`, `dlv_${env.id}_3`]);

    const [account, partner] = tiers;
    await waitFor('the three on their first tiers', () => account!.values.length + partner!.values.length >= 3);
    expect(account!.values.map((t) => t.event_id)).toEqual([`evt_${env.id}_1`]);
    expect(partner!.values.map((t) => t.event_id).sort()).toEqual([`evt_${env.id}_2`, `evt_${env.id}_3`]);
    for (const again of [...account!.values, ...partner!.values]) {
      expect(again).toMatchObject({ trigger: 'manual', attempt: 1, last_error: null });
      expect(again.delivery_id).not.toMatch(new RegExp(env.id));
    }
  });
});
