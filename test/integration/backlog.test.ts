import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDispatcher, type RunningDispatcher } from '../../connectors/webhooks/index.js';
import { newSigningSecret } from '../../events/signature.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, type ProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, InboundMessage, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { deadLetterTopic, endOffsets, topicName, topics, type Kafka, type OutgoingRecord, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';

const BACKLOG = 10_000;
/** Every LARGE_EVERY-th record carries LARGE_BYTES of text: a few of them fill what the broker takes in one request. */
const LARGE_EVERY = 100;
const LARGE_BYTES = 150 * 1024;
const PROJECTS = 4;

const text = (n: number) => (n % LARGE_EVERY === 0 ? `large ${n} ${'x'.repeat(LARGE_BYTES)}` : `message ${n}`);

/** Whether `groupId` has committed the end of `topic`: everything it read is settled. */
async function committedToEnd(kafka: Kafka, groupId: string, topic: string): Promise<boolean> {
  const ends = await endOffsets(kafka, topic);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return [...ends].every(([partition, end]) => end === 0 || Number(committed?.partitions.find((c) => c.partition === partition)?.offset ?? -1) >= end);
  } finally {
    await admin.disconnect();
  }
}

/** Writes records in sends of `chunk`, as producers of the gateway do. */
async function produceAll<V>(clients: Clients, spec: TopicSpec<V>, records: readonly OutgoingRecord<V>[], chunk = 500): Promise<void> {
  for (let i = 0; i < records.length; i += chunk) await clients.producer.send(spec, records.slice(i, i + chunk));
}

/**
 * A role restarted behind a backlog of 10,000 records, a hundred of them of 150 KiB: what it reads
 * at once is more than the broker takes in one request, so its writes must be cut by bytes.
 * Every event must come out once, and the role's committed position must reach the end, without
 * another restart.
 */
describe('roles restarted behind a backlog with large records', () => {
  let env: TestEnv;
  let clients: Clients;

  beforeAll(async () => {
    env = await createTestEnv({
      OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      // A backlog overflows the endpoint queues into the first retry tier: it must be written too.
      WEBHOOK_ENDPOINT_QUEUE: '200',
      WEBHOOK_RETRY_DELAYS: '1s,1s',
      // A loaded machine must not turn a slow answer into a second delivery: only a bug may.
      WEBHOOK_TIMEOUT_MS: '60000',
    });
    clients = await testClients(env);
  });

  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  it('the dispatcher delivers each event of the backlog once, and commits past all of them', async () => {
    const account = asAccountId(`acc_${env.id}`);
    const projects = Array.from({ length: PROJECTS }, (_, i) => asProjectId(`prj_${env.id}_${i}`));
    const arrivals = new Map<string, number>();
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = `${req.url}|${String(req.headers['x-service-event-id'])}`;
        arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cipher = createCipher(env.config.secretsKey);
    const webhook = (project: ProjectId, i: number): ConfigRecord => ({
      event_id: asEventId(`evt_cfg_${env.id}_${i}`), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: null,
      entity_id: `wh_${i}`,
      entity: {
        kind: 'webhook', url: `${base}/hook/${i}`, event_types: [], secret_ciphertext: cipher.seal(newSigningSecret()),
        enabled: true, description: null, created_at: Date.now(),
      },
    });
    await clients.producer.send(topics.config, projects.map((project, i) => ({ key: `wh_${i}`, value: webhook(project, i) })));
    const event = (n: number): PublicEvent => ({
      event_id: asEventId(`evt_${env.id}_${n}`), occurred_at: Date.now(), account_id: account, project_id: projects[n % PROJECTS]!, instance_id: null,
      event_type: 'message.sent', scope: 'project', client_reference: null, group: null, sender: null, mentions: [],
      payload_json: JSON.stringify({ n, body: text(n) }), connection: null, trigger: 'scheduled', webhook_id: null,
    });
    const records = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => event(from + i)).map((value) => ({ key: value.project_id!, value }));
    const expected = (to: number) => new Set(Array.from({ length: to }, (_, n) => `/hook/${n % PROJECTS}|evt_${env.id}_${n}`));

    const attempts = await collectTopic(clients, topics.deliveryAttempts, `${env.id}.test.attempts`);
    let dispatcher: RunningDispatcher | undefined = await startDispatcher(clients);
    try {
      await produceAll(clients, topics.events, records(0, 20));
      await waitFor('the first events', () => [...expected(20)].every((id) => arrivals.has(id)));
      await dispatcher.stop();
      dispatcher = undefined;

      await produceAll(clients, topics.events, records(20, 20 + BACKLOG));
      const started = Date.now();
      dispatcher = await startDispatcher(clients);
      const all = expected(20 + BACKLOG);
      await waitFor('every event of the backlog at its webhook', () => arrivals.size >= all.size, { timeoutMs: 240_000, intervalMs: 250 });
      await waitFor('the position committed past the backlog', () => committedToEnd(clients.kafka, `${env.config.kafka.topicPrefix}dispatcher`, topicName(topics.events, env.config.kafka.topicPrefix)), {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      console.log(`[backlog] dispatcher: ${BACKLOG} events delivered and committed in ${Date.now() - started} ms`);
      expect([...all].filter((id) => !arrivals.has(id))).toEqual([]);
      const twice = new Set([...arrivals].filter(([, count]) => count > 1).map(([id]) => id.split('|')[1]));
      const failedAttempts = attempts.values.filter((a) => a.outcome !== 'delivered').map((a) => `${a.event_id}: ${a.outcome} ${a.error ?? a.response_status}`);
      expect([...twice], `delivered twice; attempts that failed: ${failedAttempts.slice(0, 5).join('; ')}`).toEqual([]);
      expect(arrivals.size).toBe(all.size);
    } finally {
      await dispatcher?.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('the processor role publishes each event of the backlog once, and dead-letters nothing', async () => {
    const account = asAccountId(`acc_${env.id}`);
    /** Every 47th customer writes STOP: the contacts projection publishes its opt-out beside the events projection. */
    const optingOut = (n: number) => n % 47 === 3;
    const inbound = (n: number): InboundMessage => {
      // Fifty customers write, and each one who opts out is a customer of their own.
      const phone = `+55119${String(10_000_000 + (optingOut(n) ? 100 + n : n % 50)).padStart(8, '0')}`;
      const jid = `${phone.slice(1)}@s.whatsapp.net`;
      return {
        account_id: account,
        // Sixty numbers of twenty projects: a batch of one partition's facts has events for several partitions of gw.events.
        project_id: asProjectId(`prj_${env.id}_in${(n % 60) % 20}`),
        instance_id: asInstanceId(`inst_${env.id}_${n % 60}`),
        event_id: asEventId(`evt_in_${env.id}_${n}`),
        occurred_at: Date.now(),
        origin: 'customer',
        message_id: asMessageId(`msg_${env.id}_${n}`),
        wa_message_id: `WA${n}`,
        chat_jid: jid,
        sender: { jid, lid: null, name: 'Ana', phone },
        from: jid,
        to: null,
        quoted_id: null,
        quoted_participant: null,
        group: null,
        mentions: [],
        content: { kind: 'text', body: optingOut(n) ? 'STOP' : text(n) },
      };
    };
    const facts = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => inbound(from + i)).map((value) => ({ key: value.instance_id, value }));
    const published = await collectTopic(clients, topics.events, `${env.id}.test.events`);
    const received = () => published.values.filter((e) => e.event_id.startsWith(`evt_in_${env.id}_`));
    const optOuts = () => published.values.filter((e) => e.event_type === 'contact.opted_out');
    const total = 20 + BACKLOG;
    const expectedOptOuts = Array.from({ length: total }, (_, n) => n).filter(optingOut).length;

    let processor: RunningRoles | undefined = await startRoles(['processor'], clients);
    try {
      await produceAll(clients, topics.inboundMessages, facts(0, 20));
      await waitFor('the first events', () => received().length >= 20);
      await processor.stop();
      processor = undefined;

      await produceAll(clients, topics.inboundMessages, facts(20, total));
      const started = Date.now();
      processor = await startRoles(['processor'], clients);
      await waitFor('an event for each fact of the backlog', () => new Set(received().map((e) => e.event_id)).size >= total, { timeoutMs: 240_000, intervalMs: 250 });
      await waitFor('an opt-out for each STOP', () => optOuts().length >= expectedOptOuts, { timeoutMs: 60_000, intervalMs: 250 });
      console.log(`[backlog] processor role: ${BACKLOG} facts published in ${Date.now() - started} ms`);
      const prefix = env.config.kafka.topicPrefix;
      for (const projection of ['events', 'contacts']) {
        await waitFor(`the ${projection} projection caught up`, () => committedToEnd(clients.kafka, `${prefix}processor.${projection}`, topicName(topics.inboundMessages, prefix)), {
          timeoutMs: 120_000,
          intervalMs: 250,
        });
      }
      const ids = received().map((e) => e.event_id);
      expect(ids.length - new Set(ids).size, 'events published twice').toBe(0);
      expect(new Set(optOuts().map((e) => e.event_id)).size).toBe(expectedOptOuts);
      const dead = await endOffsets(clients.kafka, topicName(deadLetterTopic, prefix));
      expect([...dead.values()].reduce((sum, end) => sum + end, 0), 'records dead-lettered').toBe(0);
      const large = received().filter((e) => e.payload_json.length > LARGE_BYTES);
      expect(large.length).toBe(Array.from({ length: total }, (_, n) => n).filter((n) => n % LARGE_EVERY === 0 && !optingOut(n)).length);
    } finally {
      await processor?.stop();
      await published.consumer.stop();
    }
  });
});
