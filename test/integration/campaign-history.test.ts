import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { projectionsFor, replayProjection } from '../../processors/index.js';
import type { SendCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topicName, topics, watermarks, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';
import { canSignIn } from '../support/sign-in.js';

type Body = Record<string, unknown>;

/** The example queries of docs/analytics.md, by their heading: the test runs what the doc shows. */
async function exampleQueries(): Promise<Map<string, string>> {
  const doc = await readFile(new URL('../../docs/analytics.md', import.meta.url), 'utf8');
  const queries = new Map<string, string>();
  for (const match of doc.matchAll(/^### (.+)\n[\s\S]*?```sql\n([\s\S]*?)```/gm)) queries.set(match[1]!.trim(), match[2]!);
  return queries;
}

/**
 * A campaign's history kept by the log: a campaign run by the runner and the sandbox connector,
 * its projection rebuilt by `replay campaigns` after retention deleted the commands, status facts
 * and replies (from `gw.campaigns`, its recipients and `gw.messages.state`), equal to the live one,
 * and resumed without sending any recipient twice; then the analysts' example queries of
 * docs/analytics.md over the ClickHouse tables that campaign filled, equal to its progress.
 */
describe('campaign history', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let shop: CreatedAccount;
  let sends: { values: SendCommand[]; consumer: TopicConsumer };
  let admin: string;
  let number: string;
  let finished: { id: string; progress: Record<string, number> } | undefined;

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown, auth = shop.api_key) => {
    const response = await roles.api!.app.inject({
      method, url, headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
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
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, shop.account_id), 15_000);
    number = await waitFor('the shop number connected', async () => {
      const listed = (await call('GET', '/instances')).body.data as { id: string; status: string }[] | undefined;
      return listed?.[0]?.status === 'connected' ? listed[0].id : undefined;
    }, { timeoutMs: 30_000 });
    const created = await createPlatformAdmin(clients.producer, 'analyst@history.test');
    admin = created.credential;
    await roles.api!.directory.until(() => roles.api!.directory.platformAdmins.has(created.id), 15_000);
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
    finished = { id, progress: done };
  });

  it("gives the campaign's funnel, sends per day and failure reasons by the documented example queries, equal to its progress", async () => {
    const { id } = finished!;
    // One recipient answers the campaign.
    const to = `${phones[3]!.slice(1)}@s.whatsapp.net`;
    expect((await call('POST', `/sandbox/instances/${number}/customer-messages`, { from: to, content: { type: 'text', body: 'Obrigado' } })).status).toBe(202);
    const progress = await waitFor('the reply counted', async () => {
      const p = (await campaign(id)).progress as Record<string, number>;
      return p.replied === 1 ? p : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    const sql = async (query: string) => {
      const answer = await call('POST', '/platform/sql', { sql: query }, admin);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.data as Body[];
    };
    const queries = await exampleQueries();
    const funnel = { campaign_id: id, accepted: progress.queued, sent: progress.sent, delivered: progress.delivered, read: progress.read, failed: progress.failed, replied: progress.replied };
    // The writers follow the log: the figures are awaited, then compared whole.
    await waitFor('the funnel in the tables', async () => JSON.stringify(await sql(queries.get('Campaign funnel')!)) === JSON.stringify([funnel]), { timeoutMs: 30_000, intervalMs: 200 }).catch(() => undefined);
    expect(await sql(queries.get('Campaign funnel')!)).toEqual([funnel]);
    expect(funnel).toMatchObject({ accepted: 20, failed: 3, replied: 1 });

    const day = new Date().toISOString().slice(0, 10);
    expect(await sql(queries.get('Sends and delivery rate per number per day')!)).toEqual([
      { day, number, sends: 20, delivered: progress.delivered, delivery_rate: Math.round((progress.delivered! / 20) * 1000) / 1000 },
    ]);

    // The recipients list gives each failure's code (the reason, the connector's detail, is the analysts').
    const codes = new Map<string, number>();
    for (const r of await recipients(id)) if (r.status === 'failed') codes.set(r.error_code as string, (codes.get(r.error_code as string) ?? 0) + 1);
    const reasons = await sql(queries.get('Failure reasons, top 10 of the last 7 days')!);
    expect(reasons.map((r) => [r.error_code, r.failures])).toEqual([...codes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
    expect(reasons.map((r) => r.error_code)).toEqual(['delivery_failed', 'recipient_blocked']);
    expect(reasons.every((r) => typeof r.error_reason === 'string')).toBe(true);
  });
});
