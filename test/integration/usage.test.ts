import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeContext } from '../support/route-context.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { usageRoutes } from '../../api/usage/routes.js';
import { paymentsProjection, replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { ensureProjectionSchema } from '../../processors/runtime/store.js';
import { thresholdEventId } from '../../events/renderers/index.js';
import { addonsId } from '../../processors/directory.js';
import { startUsageWriter, usageProjection, type RunningUsageWriter } from '../../processors/usage/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, type AccountId } from '../../schemas/ids.js';
import type { ConfigRecord, PublicEvent, SendCommand, UsageRecord } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, endOffsets, topicName, topics, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const MB = 1_000_000;

interface Caller {
  readonly account: string;
  readonly project: string;
  readonly plan?: string;
  readonly partner?: boolean;
}

describe('usage: counting, thresholds and routes on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  let writer: RunningUsageWriter;
  let projection: RunningProjection;
  let replayed: RunningProjection | undefined;
  let app: FastifyInstance;
  let sequence = 0;
  const usageTopics = () => [topics.config, topics.sendCommands, topics.usage].map((spec) => topicName(spec, clients.serdes.prefix));

  const ids = (suffix: string) => ({ account: asAccountId(`acc_${env.id}_${suffix}`), project: asProjectId(`prj_${env.id}_${suffix}`) });

  function send(account: AccountId, project: string, content: SendCommand['content'], messageId = `msg_${env.id}_${++sequence}`): SendCommand {
    return {
      event_id: asEventId(`cmd_${env.id}_${++sequence}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: asProjectId(project),
      instance_id: asInstanceId(`inst_${project}`),
      message_id: asMessageId(messageId),
      client_reference: null,
      to: '5511999990000@s.whatsapp.net',
      origin: 'api',
      campaign_id: null,
      idempotency_key_hash: null, expires_at: null,
      quoted_message_id: null,
      mentions: [],
      content,
    };
  }

  const text = (account: AccountId, project: string, messageId?: string) => send(account, project, { kind: 'text', body: 'hello' }, messageId);

  function media(account: AccountId, project: string, bytes: number, kind: UsageRecord['kind'] = 'media_stored'): UsageRecord {
    return {
      event_id: asEventId(`use_${env.id}_${++sequence}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: asProjectId(project),
      instance_id: null,
      kind,
      quantity: bytes,
      message_id: null,
      media_id: `media_${sequence}`,
      allowance: null,
      percent: null,
      used: null,
      included: null,
      plan: null,
    };
  }

  async function produceSends(commands: readonly SendCommand[]): Promise<void> {
    for (let i = 0; i < commands.length; i += 200) {
      await clients.producer.send(topics.sendCommands, commands.slice(i, i + 200).map((value) => ({ key: value.instance_id, value })));
    }
  }

  const produceUsage = (records: readonly UsageRecord[]) =>
    clients.producer.send(topics.usage, records.map((value) => ({ key: value.account_id, value })));

  /** True once the group has committed everything the topics hold now. */
  async function groupCaughtUp(groupId: string): Promise<boolean> {
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      for (const topic of [topics.sendCommands, topics.usage].map((spec) => topicName(spec, clients.serdes.prefix))) {
        const ends = await endOffsets(clients.kafka, topic);
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        for (const [partition, end] of ends) {
          const offset = Number(committed?.partitions.find((p) => p.partition === partition)?.offset ?? -1);
          if (Math.max(0, offset) < end) return false;
        }
      }
      return true;
    } finally {
      await admin.disconnect();
    }
  }

  /** Every value the topic holds now, in partition order. */
  async function readTopic<V>(spec: TopicSpec<V>): Promise<V[]> {
    const topic = topicName(spec, clients.serdes.prefix);
    const ends = await endOffsets(clients.kafka, topic);
    const read = new Map<number, number>();
    const values: V[] = [];
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.reader.${++sequence}`, topics: [spec], fromBeginning: true });
    await consumer.run(async (batch) => {
      for (const record of batch.records) {
        if (record.decoded.ok && record.decoded.value !== null) values.push(record.decoded.value as V);
        read.set(batch.partition, record.offset + 1);
      }
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    try {
      await waitFor(`${topic} read to its end`, () => [...ends].every(([partition, end]) => (read.get(partition) ?? 0) >= end));
    } finally {
      await consumer.stop();
    }
    return values;
  }

  async function get<T>(url: string, caller: Caller): Promise<{ status: number; body: T }> {
    const response = await app.inject({
      method: 'GET',
      url,
      headers: {
        'x-test-account': caller.account,
        'x-test-project': caller.project,
        'x-test-plan': caller.plan ?? 'free',
        'x-test-partner': String(caller.partner ?? false),
      },
    });
    return { status: response.statusCode, body: response.json<T>() };
  }

  const thresholdsOf = (events: readonly PublicEvent[], account: string) =>
    events
      .filter((e) => e.event_type === 'usage.threshold' && e.account_id === account)
      .map((e) => ({ ...e, payload: JSON.parse(e.payload_json) as { percent: number; used: number; included: number; plan: string; allowance: string } }));

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    writer = await startUsageWriter(clients);
    projection = await runProjection(clients, usageProjection(clients.producer));
    // `GET /me/subscription` reads the payments projection, whose tables the API role creates.
    await ensureProjectionSchema(clients.pool, paymentsProjection, paymentsProjection.name);

    app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    await app.register(errorsPlugin);
    // Stands in for the auth plugin: the caller is named by test headers.
    app.decorateRequest('auth', undefined as unknown as AuthContext);
    app.addHook('onRequest', async (request) => {
      const header = (name: string) => String(request.headers[name]);
      request.auth = {
        accountId: asAccountId(header('x-test-account')),
        projectId: asProjectId(header('x-test-project')),
        keyId: 'key_test',
        role: 'owner',
        scopes: ['*'],
        locale: 'en',
        plan: header('x-test-plan'),
        partnerKey: header('x-test-partner') === 'true',
      };
    });
    await app.register(usageRoutes, { ctx: routeContext(clients) });
  });

  afterAll(async () => {
    await app?.close();
    await replayed?.stop();
    await projection?.stop();
    await writer?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('counts every send and stored media once, even when records repeat', async () => {
    const { account, project } = ids('a');
    const other = `${project}_2`;
    const commands = [
      text(account, project),
      text(account, project),
      send(account, project, { kind: 'otp', code_masked: '••••12', code_ciphertext: 'sealed', expiry_minutes: 5, body: 'Your code' }),
      text(account, other),
      text(account, other),
    ];
    const stored = [media(account, project, 3 * MB), media(account, other, 2 * MB), media(account, project, -MB)];
    await produceSends(commands);
    // The same record twice, and a second command for an already counted message (an idempotent retry).
    await produceSends([commands[0]!, text(account, project, commands[1]!.message_id)]);
    await produceUsage([...stored, stored[0]!, media(account, project, 0, 'threshold_reached')]);
    await waitFor('the writer to commit every record', () => groupCaughtUp(writer.groupId));

    const month = await get<{ data: unknown[]; project_id: string | null }>('/usage?granularity=month', { account, project });
    expect(month.status, JSON.stringify(month.body)).toBe(200);
    expect(month.body.project_id).toBeNull();
    expect(month.body.data).toEqual([{ period_start: new Date().toISOString().slice(0, 8) + '01', messages: 5, media_bytes: 4 * MB }]);

    const byDay = await get<{ data: Array<{ period_start: string; messages: number; media_bytes: number }> }>('/usage', { account, project });
    expect(byDay.body.data).toHaveLength(new Date().getUTCDate());
    expect(byDay.body.data.at(-1)).toEqual({ period_start: new Date().toISOString().slice(0, 10), messages: 5, media_bytes: 4 * MB });

    const oneProject = await get<{ data: unknown[] }>(`/usage?granularity=month&project_id=${project}`, { account, project });
    expect(oneProject.body.data).toEqual([expect.objectContaining({ messages: 3, media_bytes: 2 * MB })]);
  });

  it('counts nothing twice when a writer rereads the log from offset zero', async () => {
    const { account, project } = ids('a');
    await writer.stop();
    writer = await startUsageWriter(clients, { groupId: `${env.id}.usage.reread` });
    await waitFor('the new writer to commit every record', () => groupCaughtUp(writer.groupId));
    const month = await get<{ data: unknown[] }>('/usage?granularity=month', { account, project });
    expect(month.body.data).toEqual([expect.objectContaining({ messages: 5, media_bytes: 4 * MB })]);
  });

  it('fires usage.threshold once at 80, 90 and 100 percent of the month, on gw.events and gw.usage', async () => {
    const { account, project } = ids('b');
    const commands = Array.from({ length: 1_050 }, () => text(account, project));
    // Every tenth send written twice: still 1,050 messages.
    await produceSends(commands.flatMap((command, i) => (i % 10 === 0 ? [command, { ...command, event_id: asEventId(`${command.event_id}_again`) }] : [command])));
    await waitUntilCaughtUp(clients, 'usage', usageTopics(), Date.now() + 60_000);

    const events = thresholdsOf(await readTopic(topics.events), account);
    expect(events.map((e) => e.payload)).toEqual([
      { percent: 80, used: 800, included: 1_000, plan: 'free', allowance: 'messages' },
      { percent: 90, used: 900, included: 1_000, plan: 'free', allowance: 'messages' },
      { percent: 100, used: 1_000, included: 1_000, plan: 'free', allowance: 'messages' },
    ]);
    const period = new Date().toISOString().slice(0, 8) + '01';
    for (const event of events) {
      expect(event).toMatchObject({ scope: 'account', project_id: null, instance_id: null });
      expect(event.event_id).toBe(thresholdEventId({ accountId: account, period, allowance: 'messages', percent: event.payload.percent }));
    }
    const records = (await readTopic(topics.usage)).filter((r) => r.kind === 'threshold_reached' && r.account_id === account);
    expect(records.map((r) => [r.event_id, r.percent, r.used])).toEqual(events.map((e) => [e.event_id, e.payload.percent, e.payload.used]));

    const entitlements = await get<{ usage: { messages: number } }>('/me/entitlements', { account, project });
    expect(entitlements.body.usage.messages).toBe(1_050);
  });

  it("measures stored media against the account's plan from gw.config", async () => {
    const { account, project } = ids('c');
    const config: ConfigRecord = {
      event_id: asEventId(`cfg_${env.id}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: null,
      instance_id: null,
      entity_id: account,
      entity: { kind: 'account', name: 'C', email: 'c@example.com', locale: 'en', plan: 'pro', country: null },
    };
    await clients.producer.send(topics.config, [{ key: account, value: config }]);
    await waitFor('the plan to reach the usage projection', async () => {
      const { rows } = await clients.pool.query<{ plan: string }>('SELECT plan FROM usage.plans WHERE account_id = $1', [account]);
      return rows[0]?.plan === 'pro';
    });
    // 85% of Free's messages, 85% of Pro's media: only the media threshold fires.
    await produceSends(Array.from({ length: 850 }, () => text(account, project)));
    await produceUsage([media(account, project, 850 * MB)]);
    // Back under and up again within the month: 80% does not fire twice; 90% fires once reached.
    await produceUsage([media(account, project, -100 * MB), media(account, project, 60 * MB), media(account, project, 100 * MB)]);
    await waitUntilCaughtUp(clients, 'usage', usageTopics(), Date.now() + 60_000);

    const events = thresholdsOf(await readTopic(topics.events), account);
    expect(events.map((e) => e.payload)).toEqual([
      { percent: 80, used: 850 * MB, included: 1_000 * MB, plan: 'pro', allowance: 'media_storage' },
      { percent: 90, used: 910 * MB, included: 1_000 * MB, plan: 'pro', allowance: 'media_storage' },
    ]);

    const entitlements = await get<unknown>('/me/entitlements', { account, project, plan: 'pro' });
    expect(entitlements.status).toBe(200);
    const now = new Date();
    expect(entitlements.body).toEqual({
      plan: 'pro',
      limits: {
        numbers: 10,
        messages_per_month: 100_000,
        media_storage_bytes: 1_000 * MB,
        media_storage_per_addon_bytes: 1_000 * MB,
        media_storage_allowance_bytes: 1_000 * MB,
        rate_limit: { requests_per_second: 50, burst: 100 },
      },
      usage: {
        period_start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
        period_end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        messages: 850,
        media_storage_bytes: 910 * MB,
      },
    });
  });

  it('measures stored media against the plan plus the add-ons held, from gw.config', async () => {
    const { account, project } = ids('addons');
    const record = (entityId: string, entity: ConfigRecord['entity']): ConfigRecord => ({
      event_id: asEventId(`cfg_${entityId}_${env.id}`), occurred_at: Date.now(), account_id: account, project_id: null, instance_id: null, entity_id: entityId, entity,
    });
    // The add-ons come first: the plan is not known yet when they are applied.
    await clients.producer.send(topics.config, [
      { key: addonsId(account), value: record(addonsId(account), { kind: 'account_addons', media_storage: 1 }) },
      { key: account, value: record(account, { kind: 'account', name: 'D', email: 'd@example.com', locale: 'en', plan: 'pro', country: null }) },
    ]);
    await waitFor('the plan and add-ons to reach the usage projection', async () => {
      const { rows } = await clients.pool.query<{ plan: string; media_addons: number }>('SELECT plan, media_addons FROM usage.plans WHERE account_id = $1', [account]);
      return rows[0]?.plan === 'pro' && rows[0].media_addons === 1;
    });
    // 1.7 GB: all of Pro's 1 GB and more, but 85% of the 2 GB the add-on makes it.
    await produceUsage([media(account, project, 1_700 * MB)]);
    await waitUntilCaughtUp(clients, 'usage', usageTopics(), Date.now() + 60_000);
    expect(thresholdsOf(await readTopic(topics.events), account).map((e) => e.payload)).toEqual([
      { percent: 80, used: 1_700 * MB, included: 2_000 * MB, plan: 'pro', allowance: 'media_storage' },
    ]);
  });

  // Before the rebuild below: that second live run reads the topics from zero in another order and
  // may fire thresholds of its own (on gw.usage), which a replay would then take as fired too.
  it('replay rebuilds the counters equal to the live ones and announces no threshold again', async () => {
    await waitUntilCaughtUp(clients, 'usage', usageTopics(), Date.now() + 60_000);
    const tables = async () => {
      const out: Record<string, unknown[]> = {};
      for (const table of ['plans', 'counted', 'totals', 'thresholds']) out[table] = (await clients.pool.query(`SELECT * FROM usage.${table} t ORDER BY t::text`)).rows;
      return out;
    };
    const announced = async () =>
      Promise.all([topics.events, topics.usage].map(async (spec) => [...(await endOffsets(clients.kafka, topicName(spec, clients.serdes.prefix))).values()]));
    const before = await tables();
    expect(before.thresholds!.length).toBeGreaterThan(0);
    const written = await announced();

    const result = await replayProjection(clients, usageProjection(clients.producer, 'replay'), { deadlineMs: 60_000 });
    expect(result).toMatchObject({ projection: 'usage', gaps: [] });
    expect(await tables()).toEqual(before);
    expect(await announced()).toEqual(written);
  });

  it('a rebuild from offset zero repeats the same threshold events, never new ones', async () => {
    const before = new Set(thresholdsOf(await readTopic(topics.events), ids('b').account).map((e) => e.event_id));
    replayed = await runProjection(clients, usageProjection(clients.producer), { schema: 'usage_rebuilt', groupId: `${env.id}.usage.rebuilt`, lock: 'none' });
    await waitUntilCaughtUp(clients, 'usage_rebuilt', usageTopics(), Date.now() + 60_000);
    const after = thresholdsOf(await readTopic(topics.events), ids('b').account);
    expect(after.length).toBeGreaterThan(before.size);
    expect(new Set(after.map((e) => e.event_id))).toEqual(before);
  });

  it('keeps partner keys to their own project and refuses bad ranges', async () => {
    const { account, project } = ids('a');
    const partner = { account, project, partner: true };
    const own = await get<{ project_id: string; data: unknown[] }>('/usage?granularity=month&project_id=all', partner);
    expect(own.body.project_id).toBe(project);
    expect(own.body.data).toEqual([expect.objectContaining({ messages: 3 })]);
    expect((await get<{ code: string }>(`/usage?project_id=${project}_2`, partner)).body).toMatchObject({ code: 'not_found' });

    const backwards = await get<{ code: string }>('/usage?from=2026-02-02&to=2026-02-01', { account, project });
    expect(backwards.status).toBe(400);
    expect(backwards.body.code).toBe('invalid_request');
    expect((await get<{ code: string }>('/usage?granularity=week', { account, project })).status).toBe(400);
    expect((await get<{ code: string }>('/usage?from=2026-02-30', { account, project })).status).toBe(400);
  });

  it('answers the subscription: the plan, active, this calendar month, no payment', async () => {
    const { account, project } = ids('d');
    const now = new Date();
    const subscription = await get<unknown>('/me/subscription', { account, project, plan: 'unknown-plan' });
    expect(subscription.body).toEqual({
      plan: 'free',
      status: 'active',
      current_period_start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      current_period_end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      payment: null,
      latest_attempt: null,
    });
    const entitlements = await get<{ plan: string; usage: { messages: number; media_storage_bytes: number } }>('/me/entitlements', { account, project });
    expect(entitlements.body).toMatchObject({ plan: 'free', usage: { messages: 0, media_storage_bytes: 0 } });
  });
});
