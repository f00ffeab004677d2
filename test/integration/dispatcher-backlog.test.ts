import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningSecret } from '../../events/signature.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, DeliveryAttempt, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { deadLetterTopic, endOffsets, topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { collectTopic } from '../support/topic-collector.js';

const BACKLOG = 10_000;
/** Every event is large: twenty of them fill what the broker takes in one request. */
const PAYLOAD_BYTES = 48 * 1024;
const PROJECTS = 4;

/**
 * The dispatcher process started once behind a backlog of 10,000 large events (about 480 MB):
 * every event reaches its webhook once, its attempt record is written, nothing is dead-lettered,
 * and the same process is still the one running at the end. The records it writes (attempts,
 * tasks of the retry tiers carrying the events) must be cut into requests the broker accepts.
 */
describe('the dispatcher process started behind a backlog of large events', () => {
  let env: TestEnv;
  let clients: Clients;
  let dispatcher: GatewayProcess | undefined;
  let server: Server | undefined;
  let attempts: { values: DeliveryAttempt[]; consumer: TopicConsumer } | undefined;

  beforeAll(async () => {
    env = await createTestEnv({
      OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      // The endpoint queues overflow into the first retry tier, whose tasks carry the large events.
      WEBHOOK_ENDPOINT_QUEUE: '200',
      WEBHOOK_RETRY_DELAYS: '1s,1s',
      WEBHOOK_TIMEOUT_MS: '60000',
    });
    clients = await testClients(env);
  });

  afterAll(async () => {
    dispatcher?.kill('SIGKILL');
    await dispatcher?.exited;
    await attempts?.consumer.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await clients?.close();
    await env?.dispose();
  });

  it('delivers every event of the backlog without another restart', async () => {
    const account = asAccountId(`acc_${env.id}`);
    const projects = Array.from({ length: PROJECTS }, (_, i) => asProjectId(`prj_${env.id}_${i}`));
    const arrivals = new Map<string, number>();
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['x-service-event-id']);
        arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cipher = createCipher(env.config.secretsKey);
    const webhook = (i: number): ConfigRecord => ({
      event_id: asEventId(`evt_cfg_${env.id}_${i}`), occurred_at: Date.now(), account_id: account, project_id: projects[i]!, instance_id: null,
      entity_id: `wh_${env.id}_${i}`,
      entity: {
        kind: 'webhook', url: `${base}/hook/${i}`, event_types: [], secret_ciphertext: cipher.seal(newSigningSecret()),
        enabled: true, description: null, created_at: Date.now(),
      },
    });
    await clients.producer.send(topics.config, projects.map((_, i) => ({ key: `wh_${env.id}_${i}`, value: webhook(i) })));
    const filler = 'x'.repeat(PAYLOAD_BYTES);
    const event = (n: number): PublicEvent => ({
      event_id: asEventId(`evt_${env.id}_${n}`), occurred_at: Date.now(), account_id: account, project_id: projects[n % PROJECTS]!, instance_id: null,
      event_type: 'message.sent', scope: 'project', client_reference: null, group: null, sender: null, mentions: [],
      payload_json: JSON.stringify({ n, body: filler }), connection: null, trigger: 'scheduled', webhook_id: null,
    });
    // The backlog is written while no dispatcher runs: the process starts with all of it behind it.
    for (let from = 0; from < BACKLOG; from += 200) {
      const values = Array.from({ length: Math.min(200, BACKLOG - from) }, (_, i) => event(from + i));
      await clients.producer.send(topics.events, values.map((value) => ({ key: value.project_id!, value })));
    }

    attempts = await collectTopic(clients, topics.deliveryAttempts, `${env.id}.test.attempts`);
    const recorded = () => new Set(attempts!.values.filter((a) => a.outcome === 'delivered').map((a) => a.event_id));
    const started = Date.now();
    const child = spawnGateway(['dispatcher'], env.env);
    dispatcher = child;
    await waitFor('every event of the backlog at its webhook', () => {
      child.assertRunning();
      return arrivals.size >= BACKLOG;
    }, { timeoutMs: 240_000, intervalMs: 500 });
    const delivered = Date.now();
    await waitFor('an attempt record for each delivery', () => {
      child.assertRunning();
      return recorded().size >= BACKLOG;
    }, { timeoutMs: 120_000, intervalMs: 500 });
    console.log(`[dispatcher-backlog] ${BACKLOG} events of ${PAYLOAD_BYTES} B delivered in ${delivered - started} ms, recorded in ${Date.now() - started} ms`);

    const expected = Array.from({ length: BACKLOG }, (_, n) => asEventId(`evt_${env.id}_${n}`));
    expect(expected.filter((id) => !arrivals.has(id))).toEqual([]);
    expect(arrivals.size).toBe(BACKLOG);
    expect([...arrivals].filter(([, count]) => count > 1).map(([id]) => id), 'delivered twice').toEqual([]);
    expect(expected.filter((id) => !recorded().has(id)), 'deliveries without an attempt record').toEqual([]);
    const dead = await endOffsets(clients.kafka, topicName(deadLetterTopic, env.config.kafka.topicPrefix));
    expect([...dead.values()].reduce((sum, end) => sum + end, 0), 'records dead-lettered').toBe(0);
    // The one process spawned ran throughout: each wait above checked it had not exited.
    child.assertRunning();
    // Writing 480 MB of backlog and delivering it took over two minutes on a slower machine: the
    // test's limit is its waits' deadlines and the writing, not the suite's default.
  }, 480_000);
});
