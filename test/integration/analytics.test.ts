import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsTables } from '../../processors/analytics/index.js';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { replayTable } from '../../processors/index.js';
import { asEventId, asInstanceId, asMessageId, asProjectId, asAccountId } from '../../schemas/ids.js';
import type { SendCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topicName, topics, watermarks, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';

type Row = Record<string, unknown>;

/** The example queries of docs/analytics.md, by their heading. */
async function exampleQueries(): Promise<Map<string, string>> {
  const doc = await readFile(new URL('../../docs/analytics.md', import.meta.url), 'utf8');
  const queries = new Map<string, string>();
  for (const match of doc.matchAll(/^### (.+)\n[\s\S]*?```sql\n([\s\S]*?)```/gm)) queries.set(match[1]!.trim(), match[2]!);
  return queries;
}

/**
 * The analyst tables filled by real sends on the sandbox network (the whole gateway in one
 * process, driven through HTTP), the documented example queries run through POST /platform/sql
 * with the figures those sends make, the tables rebuilt by replay equal to the live ones, and the
 * SQL path refusing anything but one read-only SELECT.
 */
describe('analytics tables and the read-only SQL path', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let admin: string;
  let hooks: Server;
  let hooked = 0;
  let number: string;
  const campaign = 'cmp_spring';

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown, auth = account.api_key) => {
    const response = await roles.api!.app.inject({ method, url, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.statusCode, body: response.json<Row>() };
  };
  const sql = (query: string, limit?: number, auth = admin) => call('POST', '/platform/sql', { sql: query, ...(limit ? { limit } : {}) }, auth);
  const rows = async (query: string) => {
    const answer = await sql(query);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data as Row[];
  };
  /** Every table as its readers see it, ordered by its key. */
  const snapshot = async () => {
    const out: Record<string, unknown[]> = {};
    for (const table of analyticsTables) out[table.name] = await clients.clickhouse.query(`SELECT * FROM ${table.name} FINAL ORDER BY ALL`);
    return out;
  };

  function campaignSend(to: string, n: number): SendCommand {
    return {
      event_id: asEventId(`cmd_${env.id}_${n}`), occurred_at: Date.now(), account_id: asAccountId(account.account_id), project_id: asProjectId(account.project_id),
      instance_id: asInstanceId(number), message_id: asMessageId(`msg_${env.id}_cmp_${n}`), client_reference: null, to, origin: 'campaign', campaign_id: campaign,
      idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content: { kind: 'text', body: 'Spring sale' },
    };
  }

  async function deleteRecords(spec: TopicSpec<unknown>): Promise<void> {
    const topic = topicName(spec, clients.serdes.prefix);
    const kafkaAdmin = clients.kafka.admin();
    await kafkaAdmin.connect();
    try {
      await kafkaAdmin.fetchTopicMetadata({ topics: [topic] });
      const partitions = [...(await watermarks(clients.kafka, topic))].map(([partition, { high }]) => ({ partition, offset: String(high) }));
      await kafkaAdmin.deleteTopicRecords({ topic, partitions });
    } finally {
      await kafkaAdmin.disconnect();
    }
  }

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', ALLOW_PRIVATE_NETWORK: 'true' });
    clients = await testClients(env);
    hooks = createServer((_req, res) => {
      hooked++;
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    roles = await startRoles(['api', 'processor', 'connector', 'dispatcher'], clients);
    account = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    const created = await createPlatformAdmin(clients.producer, 'analyst@gateway.test');
    admin = created.credential;
    await roles.api!.directory.until(() => roles.api!.directory.platformAdmins.has(created.id), 15_000);
    number = await waitFor('the sandbox number connected', async () => {
      const { status, body } = await call('GET', '/instances');
      const data = status === 200 ? (body.data as Array<{ id: string; status: string }>) : [];
      return data.length === 1 && data[0]!.status === 'connected' ? data[0]!.id : undefined;
    }, { timeoutMs: 60_000, intervalMs: 100 });
  }, 120_000);

  afterAll(async () => {
    hooks?.close();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('fills the tables from real sends, statuses, replies and deliveries; the example queries give their figures', async () => {
    const hook = await call('POST', '/webhooks', { url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`, event_types: ['message.received'] });
    expect(hook.status).toBe(201);
    // Through the API: three delivered and read, one to a phone ending in 0000, which the sandbox fails.
    for (const to of ['+5511912340001', '+5511912340002', '+5511912340003', '+5511912340000']) {
      expect((await call('POST', '/messages/text', { to, body: 'Olá', instance_id: number })).status).toBe(202);
    }
    // A campaign (the campaigns API is to come: its sends are on the log as the API writes them): three reach their customers, one fails.
    const recipients = ['5511922220001', '5511922220002', '5511922220003', '5511922220000'].map((phone) => `${phone}@s.whatsapp.net`);
    await clients.producer.send(topics.sendCommands, recipients.map((to, n) => ({ key: number, value: campaignSend(to, n) })));
    // The campaign's second customer replies; another customer writes first, unasked.
    await waitFor('the campaign sends read', async () => Number((await rows(`SELECT count() AS n FROM message_statuses FINAL WHERE status = 'read'`))[0]!.n) === 6, { timeoutMs: 60_000, intervalMs: 200 });
    expect((await call('POST', `/sandbox/instances/${number}/customer-messages`, { from: recipients[1], content: { type: 'text', body: 'Quero!' } })).status).toBe(202);
    expect((await call('POST', `/sandbox/instances/${number}/customer-messages`, { from: '5511933330001@s.whatsapp.net', content: { type: 'text', body: 'Oi' } })).status).toBe(202);
    await waitFor('every status, the replies and their deliveries in the tables', async () => {
      const [counts] = await rows(`SELECT (SELECT count() FROM message_sends FINAL) AS sends, (SELECT count() FROM message_statuses FINAL WHERE status = 'failed') AS failed,
        (SELECT count() FROM inbound_messages FINAL) AS inbound, (SELECT count() FROM webhook_deliveries FINAL WHERE outcome = 'delivered') AS delivered`);
      return counts!.sends === 8 && counts!.failed === 2 && counts!.inbound === 2 && counts!.delivered === 2;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    expect(hooked).toBe(2);

    const queries = await exampleQueries();
    const day = new Date().toISOString().slice(0, 10);
    expect(await rows(queries.get('Sends and delivery rate per number per day')!)).toEqual([{ day, number, sends: 8, delivered: 6, delivery_rate: 0.75 }]);
    expect(await rows(queries.get('Campaign funnel')!)).toEqual([{ campaign_id: campaign, accepted: 4, sent: 3, delivered: 3, read: 3, failed: 1, replied: 1 }]);
    expect(await rows(queries.get('Failure reasons, top 10 of the last 7 days')!)).toEqual([
      { error_code: 'delivery_failed', error_reason: 'sandbox: the recipient is marked failing', failures: 2 },
    ]);
    const hookId = hook.body.id;
    expect(await rows(queries.get('Webhook deliveries per endpoint')!)).toMatchObject([{ target_kind: 'account_webhook', target_id: hookId, attempts: 2, delivered: 2 }]);
  });

  it('rebuilds every table by replay equal to the live one, while the writers run', async () => {
    const live = await snapshot();
    expect(Object.values(live).every((table) => table.length > 0)).toBe(true);
    for (const table of analyticsTables) expect((await replayTable(clients, table, { deadlineMs: 120_000 })).gaps).toEqual([]);
    expect(await snapshot()).toEqual(live);
  });

  it('runs one read-only SELECT, and refuses anything else with invalid_request, changing nothing', async () => {
    const before = await snapshot();
    const refused = [
      `INSERT INTO message_sends (account_id, message_id) VALUES ('x', 'y')`,
      'DROP TABLE message_sends',
      'ALTER TABLE message_sends DELETE WHERE 1',
      'CREATE TABLE x (a Int8) ENGINE = Memory',
      'SYSTEM DROP MARK CACHE',
      'TRUNCATE TABLE message_statuses',
      'SELECT 1; DROP TABLE message_sends',
      'SELECT 1) ; DROP TABLE message_sends; SELECT (1',
      `SELECT * FROM file('/etc/hostname', 'LineAsString')`,
      `SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')`,
      `SELECT * FROM file('/etc/hostname', 'LineAsString') SETTINGS readonly = 0`,
      "SELECT * FROM file('/etc/hostname', 'LineAsString') SETTINGS `\\x72eadonly` = 0",
      'SELECT nope FROM message_sends',
    ];
    for (const query of refused) {
      const answer = await sql(query);
      expect(answer, query).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    }
    expect(await snapshot(), 'nothing changed').toEqual(before);
    expect(await clients.clickhouse.query(`SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'x'`)).toEqual([]);

    expect(await sql('SELECT count() AS n FROM message_sends FINAL;')).toMatchObject({ status: 200, body: { data: [{ n: 8 }], truncated: false } });
    expect(await sql('SELECT message_id FROM message_sends FINAL ORDER BY message_id', 3)).toMatchObject({ status: 200, body: { truncated: true } });
    expect(((await sql('SELECT message_id FROM message_sends FINAL', 3)).body.data as Row[]).length).toBe(3);
    // A customer's key, even the owner's, is out of reach.
    expect(await sql('SELECT 1', undefined, account.api_key)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it("rebuilds sends (with their campaign), statuses (with failures' reasons) and received messages after retention deleted their topics, from the history changelog", async () => {
    const live = await snapshot();
    const messageTables = analyticsTables.filter((table) => table.name !== 'webhook_deliveries');
    for (const spec of [topics.sendCommands, topics.messageStatus, topics.inboundMessages]) await deleteRecords(spec);
    for (const table of messageTables) await clients.clickhouse.command(`DROP TABLE ${table.name}`);
    for (const table of messageTables) expect((await replayTable(clients, table, { deadlineMs: 120_000 })).gaps).toEqual([]);
    const rebuilt = await snapshot();
    // The rows read from the changelog (source 1), the campaign sends still with their campaign.
    const fromChangelog = (row: unknown) => ({ ...(row as Row), source: 1 });
    expect(rebuilt.message_sends).toEqual(live.message_sends!.map(fromChangelog));
    expect(rebuilt.message_sends!.filter((row) => (row as Row).campaign_id === campaign)).toHaveLength(4);
    expect(rebuilt.message_statuses).toEqual(live.message_statuses!.map(fromChangelog));
    expect(rebuilt.message_statuses!.filter((row) => (row as Row).status === 'failed').map((row) => (row as Row).error_reason)).toEqual([
      'sandbox: the recipient is marked failing',
      'sandbox: the recipient is marked failing',
    ]);
    expect(rebuilt.inbound_messages).toEqual(live.inbound_messages);
  });

  it('gateway sql fails at once while the gateway holds the embedded ClickHouse, naming the platform route', async () => {
    if (env.config.clickhouse.kind !== 'embedded') return;
    const cli = spawnGateway(['sql', 'SELECT count() FROM message_sends'], { ...env.env, CHDB_PATH: env.config.clickhouse.path });
    expect(await cli.exited, cli.output()).toBe(1);
    expect(cli.output()).toContain('another process holds it');
    expect(cli.output()).toContain('POST /platform/sql');
    // Its own store (a folder of its own): one SELECT answers as JSON lines, anything else is refused.
    const own = spawnGateway(['sql', 'SELECT number AS n FROM system.numbers LIMIT 3', '--limit', '2'], env.env);
    expect(await own.exited, own.output()).toBe(0);
    expect(own.stdout().trim().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual([{ n: 0 }, { n: 1 }]);
    expect(own.output()).toContain('more matched');
    const drop = spawnGateway(['sql', 'DROP TABLE message_sends'], env.env);
    expect(await drop.exited, drop.output()).toBe(1);
    expect(drop.output()).toContain('refused:');
  });
});
