import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { projectionsFor, replayProjection } from '../../processors/index.js';
import type { SendCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topicName, topics, watermarks, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';

type Body = Record<string, unknown>;

/**
 * A campaign's history kept by the log: a campaign run by the runner and the sandbox connector,
 * its projection rebuilt by `replay campaigns` after retention deleted the commands, status facts
 * and replies (from `gw.campaigns`, its recipients and `gw.messages.state`), equal to the live one,
 * and resumed without sending any recipient twice.
 */
describe('campaign history', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let shop: CreatedAccount;
  let sends: { values: SendCommand[]; consumer: TopicConsumer };

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({
      method, url, headers: { authorization: `Bearer ${shop.api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.json<Body>() };
  };
  const campaign = async (id: string) => (await call('GET', `/campaigns/${id}`)).body;
  const recipients = async (id: string) => (await call('GET', `/campaigns/${id}/recipients?limit=100`)).body.data as Body[];
  // 20 recipients: two fail (phones ending in 0000), one has blocked every sandbox number (0404).
  const phones = Array.from({ length: 20 }, (_, n) => `+5511977${n === 7 ? '210000' : n === 13 ? '310000' : n === 17 ? '210404' : String(100_001 + n)}`);
  const sendsOf = (id: string) => sends.values.filter((c) => c.campaign_id === id);

  async function deleteRecords(spec: TopicSpec<unknown>): Promise<void> {
    const topic = topicName(spec, clients.serdes.prefix);
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = [...(await watermarks(clients.kafka, topic))].map(([partition, { high }]) => ({ partition, offset: String(high) }));
      await admin.deleteTopicRecords({ topic, partitions });
    } finally {
      await admin.disconnect();
    }
  }

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'shop@history.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await roles.api!.directory.until(() => roles.api!.directory.accounts.has(shop.account_id) && roles.api!.directory.keysOf(shop.account_id).length > 0, 15_000);
    await waitFor('the shop number connected', async () => {
      const listed = (await call('GET', '/instances')).body.data as { status: string }[] | undefined;
      return listed?.[0]?.status === 'connected' ? true : undefined;
    }, { timeoutMs: 30_000 });
    sends = await collectTopic(clients, topics.sendCommands, `${env.id}.history.sends`);
  }, 120_000);

  afterAll(async () => {
    await sends?.consumer.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('rebuilds a paused campaign by replay after retention, equal to the live one; resumed, it sends no recipient twice', async () => {
    const created = await call('POST', '/campaigns', { name: 'Kept', message: { type: 'text', body: 'Hi' }, audience: { list: phones.map((to) => ({ to })) }, pace_per_minute: 300 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect((await call('POST', `/campaigns/${id}/start`)).body).toMatchObject({ status: 'running' });
    expect(created.body.recipients).toBe(20);
    await waitFor('some recipients dispatched', async () => ((await campaign(id)).progress as Body).queued as number >= 8, { timeoutMs: 30_000, intervalMs: 50 });
    expect((await call('POST', `/campaigns/${id}/pause`)).body).toMatchObject({ status: 'paused' });
    // Settled: every command on the log is marked, and every dispatched recipient has its outcome.
    const live = await waitFor('the paused campaign settled', async () => {
      const body = await campaign(id);
      const p = body.progress as Record<string, number> & { sent: number; failed: number };
      const settled = p.queued === sendsOf(id).length && p.sent + p.failed === p.queued && p.delivered === p.sent && p.read === p.sent;
      return settled ? body : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    const listed = await recipients(id);
    expect((live.progress as Body).pending).toBeGreaterThan(0);

    for (const spec of [topics.sendCommands, topics.messageStatus, topics.inboundMessages]) await deleteRecords(spec);
    const replay = projectionsFor(clients, 'replay').get('campaigns')!;
    expect((await replayProjection(clients, replay, { deadlineMs: 60_000 })).gaps).toEqual([]);
    expect(await campaign(id)).toEqual(live);
    expect(await recipients(id)).toEqual(listed);

    expect((await call('POST', `/campaigns/${id}/resume`)).body).toMatchObject({ status: 'running' });
    const done = await waitFor('the campaign finished', async () => {
      const body = await campaign(id);
      const p = body.progress as Record<string, number> & { sent: number; failed: number };
      return body.status === 'finished' && p.sent + p.failed === 20 ? p : undefined;
    }, { timeoutMs: 60_000, intervalMs: 100 });
    expect(done).toMatchObject({ recipients: 20, pending: 0, queued: 20, failed: 3 });
    const ids = sendsOf(id).map((c) => c.message_id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });
});
