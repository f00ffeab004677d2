import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { contactId, contactsProjection, seedContactStates } from '../../processors/contacts/index.js';
import { instancesProjection, replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { ContactEvent, InboundMessage, InstanceState } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { readRange, topicName, topics, watermarks } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

const T0 = Date.UTC(2026, 0, 1, 12);

/**
 * Contacts and opt-outs outlive the retention of the topics that carried them: once every record
 * of gw.contacts and gw.messages.inbound is gone (deleted as retention deletes them, with the
 * broker's DeleteRecords) and the projection is dropped, a replay rebuilds every contact from the
 * compacted changelog gw.contacts.state, and a send to a customer who opted out is still refused.
 */
describe('contacts older than the retention of their topics', () => {
  let env: TestEnv;
  let clients: Clients;
  let live: RunningProjection | undefined;
  let instances: RunningProjection | undefined;
  let api: RunningApi | undefined;
  let account: { account_id: string; project_id: string; api_key: string };

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    account = await createAccount(clients.producer, { name: 'Old shop', email: 'old@shop.test' }, async () => undefined);
  });

  afterAll(async () => {
    await api?.stop();
    await instances?.stop();
    await live?.stop();
    await clients?.close();
    await env?.dispose();
  });

  const contactRows = async () =>
    (
      await clients.pool.query<{ phone: string; opted_out: boolean }>(
        `SELECT contact_id, account_id, phone, name, tags, opted_out, opted_out_at, opt_out_source, opt_changed_at, opt_event_id, created_at, updated_at
         FROM contacts.contacts WHERE account_id = $1 ORDER BY contact_id`,
        [account.account_id],
      )
    ).rows;

  const contactInputs = () => [topics.contacts, topics.inboundMessages].map((t) => topicName(t, clients.serdes.prefix));

  it('rebuilds every contact and opt-out from the changelog after retention deleted their records', async () => {
    const accountId = asAccountId(account.account_id);
    const phone = (n: number) => `+55119${String(10_000_000 + n)}`;
    const change = (n: number, kind: ContactEvent['kind'], at: number, name = `Customer ${n}`): ContactEvent => ({
      event_id: asEventId(newId('evt')), occurred_at: at, account_id: accountId, project_id: null, instance_id: null,
      kind, contact_id: contactId(accountId, phone(n)), phone: phone(n), name, tags: n % 2 === 0 ? ['vip'] : [], source: 'api', time_zone: null,
    });
    const changes = [
      ...Array.from({ length: 30 }, (_, n) => change(n, 'upserted', T0 + n)),
      ...[3, 7, 11, 19].map((n) => change(n, 'opted_out', T0 + 1_000 + n)),
      change(7, 'opted_in', T0 + 2_000),
      change(5, 'upserted', T0 + 3_000, 'Renamed'),
    ];
    const keyword = phone(40);
    const jid = `${keyword.slice(1)}@s.whatsapp.net`;
    const stop: InboundMessage = {
      event_id: asEventId(newId('evt')), occurred_at: T0 + 4_000, account_id: accountId, project_id: asProjectId(account.project_id),
      instance_id: asInstanceId('inst_old_shop'), origin: 'customer', message_id: asMessageId(newId('msg')), wa_message_id: 'WA_STOP', chat_jid: jid,
      sender: { jid, lid: null, name: 'Leaving', phone: null }, from: jid, to: null, quoted_id: null, quoted_participant: null,
      group: null, mentions: [], content: { kind: 'text', body: 'STOP' },
    };
    await clients.producer.send(topics.contacts, changes.map((value) => ({ key: accountId, value })));
    await clients.producer.send(topics.inboundMessages, [{ key: stop.instance_id, value: stop }]);
    live = await runProjection(clients, contactsProjection({ producer: clients.producer, mode: 'live' }));
    await waitUntilCaughtUp(clients, 'contacts', contactInputs(), Date.now() + 60_000);
    const before = await contactRows();
    expect(before).toHaveLength(31);
    expect(before.filter((r) => r.opted_out).map((r) => r.phone).sort()).toEqual([phone(3), phone(11), phone(19), keyword].sort());

    // Retention deletes every record of both topics; the projection is lost with its database.
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      for (const topic of contactInputs()) {
        await admin.fetchTopicMetadata({ topics: [topic] });
        const marks = await watermarks(clients.kafka, topic);
        await admin.deleteTopicRecords({ topic, partitions: [...marks].map(([partition, { high }]) => ({ partition, offset: String(high) })) });
      }
    } finally {
      await admin.disconnect();
    }
    await live.stop();
    live = undefined;
    await clients.pool.query('DROP SCHEMA contacts CASCADE');

    const result = await replayProjection(clients, contactsProjection({ producer: clients.producer, mode: 'replay' }), { deadlineMs: 120_000 });
    expect(result.gaps).toEqual([]);
    expect(await contactRows()).toEqual(before);

    // The API refuses a send to a customer who opted out, as before.
    instances = await runProjection(clients, instancesProjection);
    const number = newId('inst');
    const state: InstanceState = {
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: accountId, project_id: asProjectId(account.project_id),
      instance_id: asInstanceId(number), phone: '+5511900000000', nickname: null, status: 'connected', previous_status: null, reason: null,
      health_score: 100, pool_ids: [], connector: 'sandbox', deleted: false,
    };
    await clients.producer.send(topics.instances, [{ key: number, value: state }]);
    await waitUntilCaughtUp(clients, 'instances', [topicName(topics.instances, clients.serdes.prefix)], Date.now() + 20_000);
    api = await startApi(clients, { listen: false });
    await api.directory.until(() => canSignIn(api!.directory, account.account_id));
    const send = (to: string) =>
      api!.app.inject({ method: 'POST', url: '/messages/text', headers: { authorization: `Bearer ${account.api_key}` }, payload: { to, body: 'Sale today' } });
    for (const optedOut of [phone(3), keyword]) {
      const refused = await send(optedOut);
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json()).toMatchObject({ code: 'contact_opted_out' });
    }
    expect((await send(phone(7))).statusCode).toBe(202);
  });

  it('writes the contacts of a deployment older than the changelog to it once, at the first start', async () => {
    const upgraded = await createTestEnv();
    const upgradedClients = await testClients(upgraded);
    try {
      // Contacts as an earlier version left them: in the projection, none on the changelog.
      const projection = await runProjection(upgradedClients, contactsProjection({ producer: upgradedClients.producer, mode: 'live' }));
      await projection.stop();
      await upgradedClients.pool.query(
        `INSERT INTO contacts.contacts (contact_id, account_id, phone, name, tags, opted_out, opted_out_at, opt_out_source, opt_changed_at, opt_event_id, created_at, updated_at)
         SELECT 'ct_' || n, 'acc_upgraded', '+5511' || (900000000 + n), 'Old ' || n, '{}', n % 3 = 0,
                CASE WHEN n % 3 = 0 THEN now() END, CASE WHEN n % 3 = 0 THEN 'api' END, CASE WHEN n % 3 = 0 THEN now() END,
                CASE WHEN n % 3 = 0 THEN 'evt_old_' || n END, now(), now()
         FROM generate_series(1, 2500) AS n`,
      );
      expect(await seedContactStates(upgradedClients)).toBe(2500);
      expect(await seedContactStates(upgradedClients)).toBe(0);
      const name = topicName(topics.contactStates, upgradedClients.serdes.prefix);
      const marks = [...(await watermarks(upgradedClients.kafka, name))];
      const states = await readRange(upgradedClients, topics.contactStates, new Map(marks.map(([p, m]) => [p, m.low])), new Map(marks.map(([p, m]) => [p, m.high])));
      const values = states.flatMap((r) => (r.decoded.ok && r.decoded.value !== null ? [r.decoded.value] : []));
      expect(new Set(values.map((v) => v.contact_id)).size).toBe(2500);
      expect(values.filter((v) => v.opted_out)).toHaveLength(833);
    } finally {
      await upgradedClients.close();
      await upgraded.dispose();
    }
  });
});
