import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redeliverDead } from '../../connectors/webhooks/dead-deliveries.js';
import { retrySchedules, startDispatcher, type RunningDispatcher } from '../../connectors/webhooks/index.js';
import { newSigningSecret } from '../../events/signature.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';
import { collectTopic } from '../support/topic-collector.js';

/**
 * Deliveries given up on while their endpoint was down are delivered again by the operator's
 * command once it is back: each once per command, whatever was dead-lettered twice, and an
 * `--all` sends nothing an earlier `--all` sent.
 */
describe('dead deliveries sent again by gateway dead-letters --deliveries', () => {
  let env: TestEnv;
  let clients: Clients;
  let dispatcher: RunningDispatcher | undefined;
  let server: Server;
  let up = false;
  /** Event ids posted while the endpoint answered 2xx, by webhook. */
  const delivered: string[] = [];
  let dead: { values: DeliveryTask[]; consumer: { stop(): Promise<void> } };

  const account = asAccountId('acc_dead');
  const projects = { wh_a: asProjectId('prj_dead_a'), wh_b: asProjectId('prj_dead_b') };

  const cli = async (...args: string[]) => {
    const run = spawnGateway(['dead-letters', ...args], env.env);
    const code = await run.exited;
    expect(code, run.output()).toBe(0);
    return run.stdout();
  };

  beforeAll(async () => {
    env = await createTestEnv({ OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_RETRY_DELAYS: '300ms', GATEWAY_MODE: 'development' });
    clients = await testClients(env);
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (!up) return void res.writeHead(500).end();
        delivered.push(`${req.url}|${String(req.headers['x-service-event-id'])}`);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cipher = createCipher(env.config.secretsKey);
    const webhook = (id: keyof typeof projects): ConfigRecord => ({
      event_id: asEventId(`cfg_${env.id}_${id}`), occurred_at: Date.now(), account_id: account, project_id: projects[id], instance_id: null, entity_id: id,
      entity: { kind: 'webhook', url: `${base}/${id}`, event_types: [], secret_ciphertext: cipher.seal(newSigningSecret()), enabled: true, description: null, created_at: Date.now() },
    });
    await clients.producer.send(topics.config, (['wh_a', 'wh_b'] as const).map((id) => ({ key: id, value: webhook(id) })));
    dead = await collectTopic(clients, topics.deliveryDead, `${env.id}.test.dead`);
    dispatcher = await startDispatcher(clients);
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await dead?.consumer.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await clients?.close();
    await env?.dispose();
  });

  it('delivers every dead delivery once when the endpoint is back, and an --all again sends nothing', async () => {
    const event = (n: number, webhook: keyof typeof projects): PublicEvent => ({
      event_id: asEventId(`evt_${env.id}_${n}`), occurred_at: Date.now(), account_id: account, project_id: projects[webhook], instance_id: null,
      event_type: 'message.sent', scope: 'project', client_reference: null, group: null, sender: null, mentions: [],
      payload_json: JSON.stringify({ n }), connection: null, trigger: 'scheduled', webhook_id: null,
    });
    const events = [event(1, 'wh_a'), event(2, 'wh_a'), event(3, 'wh_a'), event(4, 'wh_b'), event(5, 'wh_b')];
    await clients.producer.send(topics.events, events.map((value) => ({ key: value.project_id!, value })));
    await waitFor('five deliveries given up on', () => dead.values.length >= 5);
    // The same delivery dead-lettered twice (a dispatcher that crashed before committing): sent once.
    const copied = dead.values.find((d) => d.target_id === 'wh_a')!;
    await clients.producer.send(topics.deliveryDead, [{ key: copied.target_id, value: copied }]);
    await waitFor('the copy read', () => dead.values.length >= 6);

    const listed = JSON.parse(await cli('list', '--deliveries', '--json')) as { delivery_id: string; target_id: string; attempts: number; last_error: string }[];
    expect(listed).toHaveLength(6);
    expect(listed.every((d) => d.attempts === 2 && /500/.test(d.last_error))).toBe(true);
    expect(JSON.parse(await cli('list', '--deliveries', '--endpoint', 'wh_b', '--json'))).toHaveLength(2);

    up = true;
    expect(await cli('retry', '--deliveries', '--all')).toContain('delivering 5 dead deliveries again');
    const expected = events.map((e) => `/${e.project_id === projects.wh_a ? 'wh_a' : 'wh_b'}|${e.event_id}`).sort();
    await waitFor('each event at its endpoint', () => delivered.length >= 5);
    expect([...delivered].sort()).toEqual(expected);

    expect(await cli('retry', '--deliveries', '--all')).toContain('delivering 0 dead deliveries again');
    const schedules = retrySchedules(env.config.webhooks.retryDelaysMs);
    const again = await redeliverDead({ ...clients, schedules }, { kind: 'endpoint', targetId: 'wh_b' });
    expect(again.map((d) => d.target_id)).toEqual(['wh_b', 'wh_b']);
    await waitFor('the endpoint\'s two again', () => delivered.length >= 7);
    await expect(redeliverDead({ ...clients, schedules }, { kind: 'ids', ids: ['dlv_nobody'] })).rejects.toThrow(/no dead delivery dlv_nobody/);
    expect(delivered.filter((d) => d.startsWith('/wh_b'))).toHaveLength(4);
    expect(delivered.filter((d) => d.startsWith('/wh_a'))).toHaveLength(3);
  });
});
