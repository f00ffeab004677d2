import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeEvents } from '../../connectors/webhooks/first-attempts.js';
import type { RunningIntake } from '../../connectors/webhooks/intake.js';
import { EndpointLimiter } from '../../connectors/webhooks/limiter.js';
import { Load } from '../../connectors/webhooks/load.js';
import { newSigningSecret } from '../../events/signature.js';
import { ConnectionsView } from '../../processors/connections/view.js';
import { startDirectory, type RunningDirectory } from '../../processors/directory.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { endOffsets, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { connectionRecord, partnerRecord, type ConnectionFields } from '../support/partner-records.js';

/**
 * The dispatcher's first attempts against a view of connections the test holds back: a project's
 * event, whose account webhook is known at once, is judged again for partners once the view holds
 * every connection written before the event (spec 6.4: the events of every active connection's
 * project), so a connection activated a moment before the event is not missed.
 */
describe('first attempts catch up with the connections', () => {
  let env: TestEnv;
  let clients: Clients;
  let directory: RunningDirectory;
  let intake: RunningIntake;
  const view = new ConnectionsView();
  const delivered: DeliveryTask[] = [];
  const account = asAccountId('acc_catchup');
  const project = asProjectId('prj_catchup');

  beforeAll(async () => {
    env = await createTestEnv({ OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8' });
    clients = await testClients(env);
    directory = await startDirectory(clients);
    const cipher = createCipher(env.config.secretsKey);
    const config: ConfigRecord[] = [
      partnerRecord('ptn_catchup', { webhook_url: 'http://127.0.0.1:9/ptn', webhook_secret_ciphertext: cipher.seal(newSigningSecret()) }),
      {
        event_id: asEventId(`cfg_${env.id}_wh`),
        occurred_at: Date.now(),
        account_id: account,
        project_id: project,
        instance_id: null,
        entity_id: 'wh_catchup',
        entity: {
          kind: 'webhook',
          url: 'http://127.0.0.1:9/wh',
          event_types: ['message.received'],
          secret_ciphertext: cipher.seal(newSigningSecret()),
          enabled: true,
          description: null,
          created_at: Date.now(),
        },
      },
    ];
    await clients.producer.send(topics.config, config.map((value) => ({ key: value.entity_id, value })));
    await Promise.all(config.map((r) => directory.directory.applied(r.entity_id, r.event_id, 15_000)));
    intake = await consumeEvents({
      kafka: clients.kafka,
      serdes: clients.serdes,
      producer: clients.producer,
      load: new Load(100),
      logger: clients.logger,
      deliver: async (task) => void delivered.push(task),
      limiter: new EndpointLimiter(10, 100),
      directory: directory.directory,
      connections: view,
    });
  });

  afterAll(async () => {
    await intake?.intake.close();
    await intake?.stop();
    await directory?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('delivers to the account webhook at once and to the partner of a connection activated just before, once the view has it', async () => {
    const fresh: ConnectionFields = { id: randomUUID(), partnerId: 'ptn_catchup', externalId: 'cust-late', accountId: account, projectId: project, status: 'active' };
    const activation = connectionRecord(fresh);
    await clients.producer.send(topics.connections, [{ key: fresh.id, value: activation }]);
    const event: PublicEvent = {
      event_id: asEventId(`evt_${env.id}_late`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: null,
      event_type: 'message.received',
      scope: 'project',
      client_reference: null,
      group: null,
      sender: null,
      mentions: [],
      payload_json: JSON.stringify({ type: 'text', body: 'hello' }),
      connection: null,
      trigger: 'scheduled',
      webhook_id: null,
    };
    await clients.producer.send(topics.events, [{ key: project, value: event }]);

    await waitFor('the account webhook', async () => delivered.find((t) => t.target_kind === 'account_webhook'), { timeoutMs: 20_000 });
    expect(delivered.filter((t) => t.target_kind === 'partner_webhook')).toEqual([]);

    // The view now applies the activation and reaches the end of the topic.
    view.apply(fresh.id, activation);
    for (const [partition, end] of await endOffsets(clients.kafka, topicName(topics.connections, clients.serdes.prefix))) view.advance(partition, end);
    view.settled();
    const partner = await waitFor('the partner webhook', async () => delivered.find((t) => t.target_kind === 'partner_webhook'), { timeoutMs: 10_000 });
    expect(partner).toMatchObject({ target_id: 'ptn_catchup', event_id: event.event_id });
    expect(JSON.parse(partner.body_json)).toMatchObject({ connection: { id: fresh.id, status: 'active' } });
    expect(delivered.filter((t) => t.target_kind === 'account_webhook')).toHaveLength(1);
  });
});
