import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnectorRole, type ConnectorRole } from '../../connectors/network/index.js';
import { phoneJid } from '../../schemas/phones.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../../connectors/sandbox/index.js';
import { startDispatcher, type RunningDispatcher } from '../../connectors/webhooks/dispatcher.js';
import { conversationsProjection, instancesProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { eventsProjection } from '../../processors/events/index.js';
import { startUsageWriter, type RunningUsageWriter } from '../../processors/usage/writer.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId, type AccountId } from '../../schemas/ids.js';
import { newSigningSecret } from '../../events/signature.js';
import type { ConfigRecord, InstanceState, MessageStatus, PairingChallenge, PublicEvent, SandboxCommand, SendCommand } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, endOffsets, listDeadLetters, partitionOf, topicName, topics, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { otpCodes, testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';

const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const poisoned = asAccountId('acc_poisoned');
const healthy = asAccountId('acc_healthy');
const project = (account: AccountId) => asProjectId(account.replace('acc_', 'prj_'));
/** Not a date JavaScript can print: rendering or storing it throws a RangeError. */
const FAR_FUTURE = 9e15;
const NOT_AVRO = Buffer.from('not avro');

/**
 * A record no consumer can apply (undecodable bytes, or a NUL byte Postgres refuses, or a time
 * out of range) must go to the dead letters with its reason while the records after it, of other
 * accounts, flow on; and after a restart it must not come back nor hold anything up.
 */
describe('poison records never stop a consumer', () => {
  let env: TestEnv;
  let clients: Clients;
  let prefix: string;
  const deadOf = async (topic: TopicSpec<unknown>, by: RegExp) =>
    (await listDeadLetters(clients, 10_000)).filter((l) => l.topic === topicName(topic, prefix) && by.test(l.by));

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    prefix = clients.serdes.prefix;
  });
  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  function sendCommand(account: AccountId, instanceId: string, overrides: Partial<SendCommand> = {}): SendCommand {
    return {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project(account),
      instance_id: asInstanceId(instanceId),
      message_id: asMessageId(newId('msg')),
      client_reference: 'ref',
      to: phoneJid('+5511987650001'),
      origin: 'api',
      campaign_id: null,
      idempotency_key_hash: null,
      quoted_message_id: null,
      mentions: [],
      expires_at: null,
      content: { kind: 'text', body: 'hello' },
      ...overrides,
    };
  }

  function state(account: AccountId, instanceId: string, nickname: string): InstanceState {
    return {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project(account),
      instance_id: asInstanceId(instanceId),
      phone: null,
      nickname,
      status: 'pending',
      previous_status: null,
      reason: null,
      health_score: 90,
      pool_ids: [],
      connector: 'sandbox',
      deleted: false,
    };
  }

  /** An instance id on the same partition as `other`, so its records queue behind the poison. */
  function idBeside(other: string, spec: TopicSpec<unknown>): string {
    for (;;) {
      const id = newId('inst');
      if (partitionOf(id, spec.partitions) === partitionOf(other, spec.partitions)) return id;
    }
  }

  it('the connector dead-letters a send it cannot claim and executes the sends after it, also after a restart', async () => {
    const sandbox = new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool), otp: createCipher('poison-test') });
    const statuses: MessageStatus[] = [];
    const states: InstanceState[] = [];
    const reader: TopicConsumer = await createConsumer(clients.kafka, clients.serdes, {
      groupId: `${env.id}.connector-reader`,
      topics: [topics.messageStatus, topics.instances],
      fromBeginning: true,
    });
    await reader.run(async (batch) => {
      for (const r of batch.records) {
        if (!r.decoded.ok || r.decoded.value === null) continue;
        if (r.topic === topicName(topics.messageStatus, prefix)) statuses.push(r.decoded.value as MessageStatus);
        else states.push(r.decoded.value as InstanceState);
      }
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    let role: ConnectorRole = await startConnectorRole(clients, { connectors: [sandbox], otp: otpCodes(clients) });
    try {
      const bad = newId('inst');
      const good = idBeside(bad, topics.sendCommands);
      for (const [account, id, phone] of [[poisoned, bad, '+5511911120001'], [healthy, good, '+5511911120002']] as const) {
        await clients.producer.send(topics.instances, [{ key: id, value: state(account, id, 'n') }]);
        const connect: SandboxCommand = {
          event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project(account),
          instance_id: asInstanceId(id), control: { kind: 'connect', method: 'qr', phone, auto: true },
        };
        await clients.producer.send(topics.sandboxCommands, [{ key: id, value: connect }]);
      }
      await waitFor('both numbers connected', () => [bad, good].every((id) => states.some((s) => s.instance_id === id && s.status === 'connected')));
      const sentOf = (command: SendCommand) => () => statuses.find((s) => s.message_id === command.message_id && s.status === 'sent');

      await clients.producer.sendRaw(topicName(topics.sendCommands, prefix), [{ key: bad, value: NOT_AVRO }]);
      const nul = sendCommand(poisoned, bad, { client_reference: 'ref\u0000nul', content: { kind: 'text', body: 'hi\u0000there' } });
      const after = sendCommand(healthy, good);
      await clients.producer.send(topics.sendCommands, [{ key: bad, value: nul }, { key: good, value: after }]);
      await waitFor('the send after the poison', sentOf(after), { timeoutMs: 15_000 });
      const letters = await waitFor('two dead letters', async () => {
        const found = await deadOf(topics.sendCommands, /^connector$/);
        return found.length === 2 && found;
      });
      expect(letters.map((l) => l.reason)).toEqual([expect.stringMatching(/wire format/), expect.stringMatching(/0x00/)]);
      expect(statuses.some((s) => s.message_id === nul.message_id)).toBe(false);

      await role.stop();
      role = await startConnectorRole(clients, { connectors: [sandbox], otp: otpCodes(clients) });
      await waitFor('the numbers back', () => [bad, good].every((id) => sandbox.inspect(id) !== undefined), { timeoutMs: 30_000 });
      const later = sendCommand(healthy, good);
      await clients.producer.send(topics.sendCommands, [{ key: good, value: later }]);
      await waitFor('a send after the restart', sentOf(later), { timeoutMs: 30_000 });
      expect(await deadOf(topics.sendCommands, /^connector$/)).toHaveLength(2);
    } finally {
      await role.stop();
      await reader.stop();
    }
  });

  it('projections (instances, conversations, events) dead-letter what they cannot apply and go on, also after a restart', async () => {
    const projections = [instancesProjection, conversationsProjection({ producer: clients.producer, mode: 'live' }), eventsProjection({ producer: clients.producer, mediaLinks: clients.mediaLinks })];
    const start = () => Promise.all(projections.map((p) => runProjection(clients, p)));
    let running: RunningProjection[] = await start();
    const caughtUp = () =>
      Promise.all(
        projections.map((p) =>
          waitUntilCaughtUp(clients, p.name, p.handlers.map((h) => topicName(h.topic, prefix)), Date.now() + 20_000),
        ),
      );
    const bad = newId('inst');
    const good = idBeside(bad, topics.instances);
    const challenge = (account: AccountId, id: string, expires: number): PairingChallenge => ({
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project(account),
      instance_id: asInstanceId(id), method: 'qr', value: '2@abc', expires_at: expires,
    });
    try {
      for (const spec of [topics.instances, topics.sendCommands, topics.pairing]) {
        await clients.producer.sendRaw(topicName(spec, prefix), [{ key: bad, value: NOT_AVRO }]);
      }
      await clients.producer.send(topics.instances, [{ key: bad, value: state(poisoned, bad, 'nul\u0000name') }, { key: good, value: state(healthy, good, 'fine') }]);
      const goodSend = sendCommand(healthy, good);
      await clients.producer.send(topics.sendCommands, [
        { key: bad, value: sendCommand(poisoned, bad, { occurred_at: Date.now(), content: { kind: 'text', body: 'nul\u0000body' } }) },
        { key: good, value: goodSend },
      ]);
      await clients.producer.send(topics.pairing, [{ key: bad, value: challenge(poisoned, bad, FAR_FUTURE) }, { key: good, value: challenge(healthy, good, Date.now() + 60_000) }]);

      await caughtUp();
      const numbers = await clients.pool.query<{ instance_id: string }>('SELECT instance_id FROM instances.numbers');
      expect(numbers.rows.map((r) => r.instance_id)).toContain(good);
      expect(numbers.rows.map((r) => r.instance_id)).not.toContain(bad);
      const messages = await clients.pool.query<{ message_id: string }>('SELECT message_id FROM conversations.messages');
      expect(messages.rows.map((r) => r.message_id)).toContain(goodSend.message_id);
      // The connector's test wrote its own poison to the send commands too: the conversations projection has both.
      const lettersOf = async () =>
        Promise.all([deadOf(topics.instances, /instances/), deadOf(topics.sendCommands, /conversations/), deadOf(topics.pairing, /events/)]);
      let last: unknown;
      const [ofInstances, ofSends, ofPairing] = await waitFor('the dead letters of the projections', async () => {
        const found = await lettersOf();
        last = found.map((f) => f.map((l) => `${l.by}: ${l.reason}`));
        return found[0].length === 2 && found[1].length >= 2 && found[2].length === 2 && found;
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}; found ${JSON.stringify(last)}`);
      });
      expect(ofInstances.map((l) => l.reason)).toEqual([expect.stringMatching(/wire format/), expect.stringMatching(/0x00/)]);
      expect(ofSends.map((l) => l.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/wire format/), expect.stringMatching(/0x00|Unicode escape/)]));
      expect(ofPairing.map((l) => l.reason)).toEqual([expect.stringMatching(/wire format/), expect.stringMatching(/not renderable/)]);
      const counts = (found: readonly unknown[][]) => found.map((f) => f.length);
      const before = counts([ofInstances, ofSends, ofPairing]);

      await Promise.all(running.map((r) => r.stop()));
      running = await start();
      const again = newId('inst');
      await clients.producer.send(topics.instances, [{ key: good, value: state(healthy, again, 'later') }]);
      await caughtUp();
      const after = await clients.pool.query<{ instance_id: string }>('SELECT instance_id FROM instances.numbers ORDER BY instance_id');
      expect(after.rows.map((r) => r.instance_id)).toEqual(expect.arrayContaining([good, again]));
      expect(counts(await lettersOf()), 'nothing dead-lettered twice').toEqual(before);
    } finally {
      await Promise.all(running.map((r) => r.stop()));
    }
  });

  it('the usage writer dead-letters what it cannot count and counts the rest, also after a restart', async () => {
    let writer: RunningUsageWriter = await startUsageWriter(clients);
    const counted = async (command: SendCommand) =>
      (await clients.clickhouse.query<{ n: number }>(`SELECT toUInt8(count()) AS n FROM usage_events WHERE event_id = {id:String}`, { id: command.message_id }))[0]?.n === 1;
    try {
      const bad = newId('inst');
      const good = idBeside(bad, topics.sendCommands);
      await clients.producer.sendRaw(topicName(topics.usage, prefix), [{ key: poisoned, value: NOT_AVRO }]);
      const first = sendCommand(healthy, good);
      await clients.producer.send(topics.sendCommands, [{ key: bad, value: sendCommand(poisoned, bad, { occurred_at: FAR_FUTURE }) }, { key: good, value: first }]);
      await waitFor('the send after the poison counted', () => counted(first), { timeoutMs: 15_000 });
      const letters = async () => [...(await deadOf(topics.usage, /usage\.clickhouse/)), ...(await deadOf(topics.sendCommands, /usage\.clickhouse/))];
      // Besides these two, the undecodable send commands of the tests before.
      const found = await waitFor('the dead letters of the writer', async () => {
        const all = await letters();
        return all.some((l) => /Invalid time value/.test(l.reason)) && all.some((l) => l.topic === topicName(topics.usage, prefix)) && all;
      });
      expect(found.map((l) => l.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/wire format/), expect.stringMatching(/Invalid time value/)]));

      await writer.stop();
      writer = await startUsageWriter(clients);
      const second = sendCommand(healthy, good);
      await clients.producer.send(topics.sendCommands, [{ key: good, value: second }]);
      await waitFor('a send counted after the restart', () => counted(second), { timeoutMs: 30_000 });
      expect(await letters(), 'nothing dead-lettered twice').toHaveLength(found.length);
    } finally {
      await writer.stop();
    }
  });

  it('the dispatcher dead-letters events it cannot deliver and takes in the rest, also after a restart', async () => {
    const eventsTopic = topicName(topics.events, prefix);
    const event = (account: AccountId, payload: string): PublicEvent => ({
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project(account), instance_id: null,
      event_type: 'message.received', scope: 'project', client_reference: null, group: null, sender: null, mentions: [],
      payload_json: payload, connection: null, trigger: 'scheduled', webhook_id: null,
    });
    /** The dispatcher's committed position reached the end of `gw.events`. */
    const settled = async () => {
      const ends = await endOffsets(clients.kafka, eventsTopic);
      const admin = clients.kafka.admin();
      await admin.connect();
      try {
        const [committed] = await admin.fetchOffsets({ groupId: `${prefix}dispatcher`, topics: [eventsTopic] });
        return [...ends].every(([p, end]) => end === 0 || Number(committed?.partitions.find((c) => c.partition === p)?.offset ?? -1) >= end);
      } finally {
        await admin.disconnect();
      }
    };
    const key = project(poisoned);
    // A webhook of the poisoned project: its events are rendered for it, and one cannot be.
    const webhook: ConfigRecord = {
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: poisoned, project_id: key, instance_id: null, entity_id: 'wh_poisoned',
      entity: {
        kind: 'webhook', url: 'http://127.0.0.1:9/hook', event_types: ['message.received'], enabled: true, description: null, created_at: Date.now(),
        secret_ciphertext: createCipher(env.config.secretsKey).seal(newSigningSecret()),
      },
    };
    await clients.producer.send(topics.config, [{ key: webhook.entity_id, value: webhook }]);
    let dispatcher: RunningDispatcher = await startDispatcher(clients);
    try {
      await clients.producer.sendRaw(eventsTopic, [{ key, value: NOT_AVRO }]);
      await clients.producer.send(topics.events, [
        { key, value: event(poisoned, '{not json') },
        { key, value: event(healthy, '{"ok":true}') },
      ]);
      await waitFor('the events after the poison taken in', settled, { timeoutMs: 20_000 });
      const letters = () => deadOf(topics.events, /dispatcher$/);
      expect((await letters()).map((l) => l.reason)).toEqual([expect.stringMatching(/wire format/), expect.stringMatching(/cannot be rendered/)]);

      await dispatcher.stop();
      dispatcher = await startDispatcher(clients);
      await clients.producer.send(topics.events, [{ key, value: event(healthy, '{"ok":2}') }]);
      await waitFor('an event taken in after the restart', settled, { timeoutMs: 30_000 });
      expect(await letters()).toHaveLength(2);
    } finally {
      await dispatcher.stop();
    }
  });

  it('gateway dead-letters list shows them and retry writes them back where they came from', async () => {
    const list = spawnGateway(['dead-letters', 'list', '--json'], env.env);
    expect(await list.exited, list.output()).toBe(0);
    const letters = JSON.parse(list.stdout().trim().split('\n').pop()!) as { id: string; topic: string; by: string; reason: string; at: string }[];
    expect(letters.length).toBeGreaterThanOrEqual(10);
    const nul = letters.find((l) => l.by === 'connector' && /0x00/.test(l.reason))!;
    expect(nul.topic).toBe(topicName(topics.sendCommands, prefix));
    expect(nul.id).toMatch(/^\d+:\d+$/);
    expect(Date.parse(nul.at)).toBeGreaterThan(Date.now() - 600_000);
    const text = spawnGateway(['dead-letters', 'list', '--limit', '1'], env.env);
    expect(await text.exited, text.output()).toBe(0);
    expect(text.output()).toMatch(/^\d+:\d+\t\S+\/\d+\/\d+\t/m);

    const seen: { headers: Record<string, string>; value: Buffer | null }[] = [];
    const reader = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.redriven`, topics: [topics.sendCommands], fromBeginning: true });
    await reader.run(async (batch) => {
      for (const r of batch.records) if (r.headers['x-redriven-from']) seen.push({ headers: { ...r.headers }, value: r.raw });
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    try {
      const one = spawnGateway(['dead-letters', 'retry', nul.id], env.env);
      expect(await one.exited, one.output()).toBe(0);
      const back = await waitFor('the re-driven send', () => seen.find((s) => s.headers['x-redriven-from'] === nul.id));
      expect(Object.keys(back.headers).filter((h) => h.startsWith('x-dead-'))).toEqual([]);
      expect(await clients.serdes.for(topics.sendCommands).decode(back.value!)).toMatchObject({ client_reference: 'ref\u0000nul' });

      const all = spawnGateway(['dead-letters', 'retry', '--all'], env.env);
      expect(await all.exited, all.output()).toBe(0);
      expect(all.output()).toMatch(new RegExp(`re-drove ${letters.length} dead letter`));
      const again = spawnGateway(['dead-letters', 'retry', '--all'], env.env);
      expect(await again.exited, again.output()).toBe(0);
      expect(again.output()).toMatch(/re-drove 0 dead letter/);
    } finally {
      await reader.stop();
    }
  });
});
