import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryIdOf, startDispatcher, type RunningDispatcher } from '../../connectors/webhooks/index.js';
import { newSigningSecret, verify } from '../../events/signature.js';
import { asAccountId, asEventId, asProjectId, type ProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, ConnectionRef, DeliveryAttempt, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topics, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { connectionRecord, partnerRecord, type ConnectionFields } from '../support/partner-records.js';
import { Receiver } from '../support/webhook-receiver.js';

/** Spec 6.3: the retries of a partner webhook, each after the attempt before. */
const GAPS_MS = [1_000, 2_000, 4_000, 8_000];
/** How late a retry may come after its delay: the tier's pause timer, a fetch, the producer's ack. */
const SLACK_MS = 1_500;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('partner webhooks on the real stack (spec 6.3, 6.4)', () => {
  let env: TestEnv;
  let clients: Clients;
  let dispatcher: RunningDispatcher | undefined;
  const collectors: TopicConsumer[] = [];
  const attempts: DeliveryAttempt[] = [];
  const dead: DeliveryTask[] = [];
  const secrets = new Map<string, string>();
  let sequence = 0;

  const account = asAccountId('acc_partnerhook');
  const main = asProjectId('prj_ph_main');

  /**
   * Partners by behaviour: `ok_*` answer 200, `flaky` 500 four times then 200, `throttled` 429
   * once then 200, `bad` 400, `missing` 404, `down` listens nowhere (transport error).
   */
  const answers: Record<string, (earlier: number) => number> = {
    ptn_flaky: (earlier) => (earlier < 4 ? 500 : 200),
    ptn_throttled: (earlier) => (earlier < 1 ? 429 : 200),
    ptn_bad: () => 400,
    ptn_missing: () => 404,
  };
  const receiver = new Receiver((target, earlier) => answers[target]?.(earlier) ?? 200);

  /** Connection of each partner; `main` partners share one project, the others have one each. */
  const connections: Record<string, ConnectionFields> = {};
  const connectionOf = (partnerId: string, projectId: string, status: ConnectionFields['status'] = 'active'): ConnectionFields => {
    const fields: ConnectionFields = { id: randomUUID(), partnerId, externalId: `cust-${partnerId}`, accountId: account, projectId, status };
    connections[partnerId] = fields;
    return fields;
  };
  const blockOf = (c: ConnectionFields): ConnectionRef => ({
    id: c.id,
    external_id: c.externalId,
    account_id: c.accountId === null ? null : asAccountId(c.accountId),
    project_id: c.projectId === null ? null : asProjectId(c.projectId),
    status: c.status,
  });

  function partner(id: string, url?: string): ConfigRecord {
    const secret = newSigningSecret();
    secrets.set(id, secret);
    return partnerRecord(id, { webhook_url: url ?? `${receiver.base}/${id}`, webhook_secret_ciphertext: createCipher(env.config.secretsKey).seal(secret) });
  }

  function event(projectId: ProjectId, eventType: string, overrides: Partial<PublicEvent> = {}): PublicEvent {
    const n = ++sequence;
    return {
      event_id: asEventId(`evt_${env.id}_${n}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: projectId,
      instance_id: null,
      event_type: eventType,
      scope: 'project',
      client_reference: null,
      group: null,
      sender: { jid: '5511988887777@s.whatsapp.net', lid: null, name: 'Bia', phone: '+5511988887777' },
      mentions: [],
      payload_json: JSON.stringify({ type: 'text', body: `hello ${n}` }),
      connection: null,
      trigger: 'scheduled',
      webhook_id: null,
      ...overrides,
    };
  }

  const produce = (...events: PublicEvent[]) => clients.producer.send(topics.events, events.map((value) => ({ key: value.project_id ?? value.account_id, value })));
  const attemptsOf = (targetId: string, eventId: string) =>
    attempts.filter((a) => a.target_id === targetId && a.event_id === eventId).sort((a, b) => a.attempt - b.attempt);

  async function collect<V>(spec: TopicSpec<V>, into: V[]): Promise<void> {
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.test.${spec.name}`, topics: [spec], fromBeginning: true });
    await consumer.run(async (batch) => {
      for (const record of batch.records) if (record.decoded.ok && record.decoded.value !== null) into.push(record.decoded.value as V);
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    collectors.push(consumer);
  }

  beforeAll(async () => {
    env = await createTestEnv({ OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', SECRETS_KEY: `partner-webhook-test-${Date.now()}` });
    clients = await testClients(env);
    await receiver.start();
    const downUrl = `http://127.0.0.1:${await closedPort()}/ptn_down`;
    const accountWebhookSecret = newSigningSecret();
    secrets.set('wh_ph_received', accountWebhookSecret);
    const config: ConfigRecord[] = [
      ...['ptn_one', 'ptn_two', 'ptn_paused', 'ptn_flaky', 'ptn_throttled', 'ptn_bad', 'ptn_missing'].map((id) => partner(id)),
      partner('ptn_down', downUrl),
      {
        event_id: asEventId(`cfg_${env.id}_wh`),
        occurred_at: Date.now(),
        account_id: account,
        project_id: main,
        instance_id: null,
        entity_id: 'wh_ph_received',
        entity: {
          kind: 'webhook',
          url: `${receiver.base}/wh_ph_received`,
          event_types: ['message.received'],
          secret_ciphertext: createCipher(env.config.secretsKey).seal(accountWebhookSecret),
          enabled: true,
          description: null,
          created_at: Date.now(),
        },
      },
    ];
    await clients.producer.send(topics.config, config.map((value) => ({ key: value.entity_id, value })));
    const linked = [
      connectionOf('ptn_one', main),
      connectionOf('ptn_two', main),
      connectionOf('ptn_paused', main, 'suspended'),
      ...['ptn_flaky', 'ptn_throttled', 'ptn_bad', 'ptn_missing', 'ptn_down'].map((id) => connectionOf(id, `prj_ph_${id}`)),
    ];
    await clients.producer.send(topics.connections, linked.map((c) => ({ key: c.id, value: connectionRecord(c) })));
    await collect(topics.deliveryAttempts, attempts);
    await collect(topics.deliveryDead, dead);
    dispatcher = await startDispatcher(clients);
  });

  afterAll(async () => {
    await dispatcher?.stop();
    for (const consumer of collectors) await consumer.stop();
    await receiver.close().catch(() => undefined);
    await clients?.close();
    await env?.dispose();
  });

  // The slow cases run side by side: their events go out first, the fast tests check them last.
  const slow: Record<string, PublicEvent> = {};

  it('sends an operation event to both partners of a project and the account webhook, not to the suspended connection', async () => {
    for (const id of ['ptn_flaky', 'ptn_throttled', 'ptn_bad', 'ptn_missing', 'ptn_down']) slow[id] = event(asProjectId(`prj_ph_${id}`), 'message.sent');
    await produce(...Object.values(slow));

    const received = event(main, 'message.received');
    await produce(received);
    await waitFor('both partners and the account webhook', () =>
      ['ptn_one', 'ptn_two', 'wh_ph_received'].every((target) => attemptsOf(target, received.event_id).some((a) => a.outcome === 'delivered')),
    );
    for (const id of ['ptn_one', 'ptn_two']) {
      const [request, ...more] = receiver.of(id, received.event_id);
      expect(more).toEqual([]);
      expect(request!.eventType).toBe('message.received');
      expect(request!.contentType).toBe('application/json');
      // The connection block of spec 2.5 for this partner's connection, and sender.phone (partners only).
      expect(request!.body.connection).toEqual(blockOf(connections[id]!));
      expect(request!.body.sender?.phone).toBe('+5511988887777');
      const [attempt] = attemptsOf(id, received.event_id);
      expect(attempt).toMatchObject({
        target_kind: 'partner_webhook',
        attempt: 1,
        outcome: 'delivered',
        url: `${receiver.base}/${id}`,
        delivery_id: deliveryIdOf(received.event_id, 'partner_webhook', `${id}/${connections[id]!.id}`),
      });
      expect(attempt!.body_json).toBe(request!.raw.toString('utf8'));
    }
    // The account webhook listening to message.received gets the account body (no block, no phone).
    const [forAccount] = receiver.of('wh_ph_received', received.event_id);
    expect(forAccount!.body.connection).toBeUndefined();
    expect(forAccount!.body.sender?.phone).toBeUndefined();
    expect(verify(secrets.get('wh_ph_received')!, forAccount!.raw, forAccount!.signature)).toBe(true);
    // All targets of the event were judged at once: the suspended connection's partner had none.
    expect(receiver.of('ptn_paused')).toEqual([]);
    expect(attempts.filter((a) => a.target_id === 'ptn_paused')).toEqual([]);
  });

  it('signs with the partner webhook secret: it verifies with that secret and not with another partner', () => {
    const [one] = receiver.of('ptn_one');
    const [two] = receiver.of('ptn_two');
    expect(verify(secrets.get('ptn_one')!, one!.raw, one!.signature)).toBe(true);
    expect(verify(secrets.get('ptn_two')!, two!.raw, two!.signature)).toBe(true);
    expect(verify(secrets.get('ptn_two')!, one!.raw, one!.signature)).toBe(false);
    expect(verify(secrets.get('wh_ph_received')!, one!.raw, one!.signature)).toBe(false);
  });

  it('sends connect.suspended to the suspended connection\'s partner only, with the block the event carries', async () => {
    const block = blockOf(connections.ptn_paused!);
    const suspended = event(main, 'connect.suspended', { scope: 'connection', sender: null, connection: block, payload_json: JSON.stringify({ status: 'suspended' }) });
    await produce(suspended);
    await waitFor('connect.suspended at the partner', () => receiver.of('ptn_paused', suspended.event_id).length === 1);
    const [request] = receiver.of('ptn_paused', suspended.event_id);
    expect(request!.body).toMatchObject({ event_type: 'connect.suspended', connection: block, payload: { status: 'suspended' } });
    expect(verify(secrets.get('ptn_paused')!, request!.raw, request!.signature)).toBe(true);
    // The attempt is recorded once the partner has answered, and read here from its topic after that.
    await waitFor('its attempt recorded', () => attemptsOf('ptn_paused', suspended.event_id).length > 0);
    expect(attemptsOf('ptn_paused', suspended.event_id)).toHaveLength(1);
    for (const other of ['ptn_one', 'ptn_two', 'wh_ph_received']) expect(receiver.of(other, suspended.event_id)).toEqual([]);
  });

  it('finds the partner of a connection written just before its connect.completed event', async () => {
    const fresh = connectionOf('ptn_one', 'prj_ph_fresh');
    const completed = event(asProjectId('prj_ph_fresh'), 'connect.completed', { scope: 'connection', sender: null, connection: blockOf(fresh), payload_json: JSON.stringify({ status: 'active' }) });
    await clients.producer.send(topics.connections, [{ key: fresh.id, value: connectionRecord(fresh) }]);
    await produce(completed);
    await waitFor('connect.completed at the partner', () => receiver.of('ptn_one', completed.event_id).length === 1);
    expect(receiver.of('ptn_one', completed.event_id)[0]!.body.connection).toEqual(blockOf(fresh));
  });

  it('retries a 500 on the schedule of spec 6.3: gaps of 1, 2, 4 and 8 s, then delivered at the 5th attempt', async () => {
    const e = slow.ptn_flaky!;
    await waitFor('the 5th attempt delivered', () => attemptsOf('ptn_flaky', e.event_id).some((a) => a.outcome === 'delivered'), { timeoutMs: 40_000 });
    const requests = receiver.of('ptn_flaky', e.event_id);
    expect(requests).toHaveLength(5);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    console.log(`partner webhook retry gaps (ms): ${gaps.join(', ')}`);
    gaps.forEach((gap, i) => {
      expect(gap, `retry ${i + 1} after ${gap} ms`).toBeGreaterThanOrEqual(GAPS_MS[i]!);
      expect(gap, `retry ${i + 1} after ${gap} ms`).toBeLessThanOrEqual(GAPS_MS[i]! + SLACK_MS);
    });
    for (const r of requests) expect(r.raw.equals(requests[0]!.raw) && r.signature === requests[0]!.signature).toBe(true);
    const recorded = attemptsOf('ptn_flaky', e.event_id);
    expect(recorded.map((a) => [a.attempt, a.outcome, a.response_status])).toEqual([
      [1, 'failed_retryable', 500],
      [2, 'failed_retryable', 500],
      [3, 'failed_retryable', 500],
      [4, 'failed_retryable', 500],
      [5, 'delivered', 200],
    ]);
    expect(recorded.slice(0, 4).map((a) => a.next_attempt_at! - a.occurred_at - a.duration_ms)).toEqual(GAPS_MS.map((gap) => expect.closeTo(gap, -2) as number));
  });

  it('retries a 429', async () => {
    const e = slow.ptn_throttled!;
    await waitFor('delivered after the 429', () => attemptsOf('ptn_throttled', e.event_id).some((a) => a.outcome === 'delivered'));
    expect(attemptsOf('ptn_throttled', e.event_id).map((a) => [a.attempt, a.outcome, a.response_status])).toEqual([
      [1, 'failed_retryable', 429],
      [2, 'delivered', 200],
    ]);
  });

  it('retries a transport failure 5 attempts in all, then dead-letters the task', async () => {
    const e = slow.ptn_down!;
    await waitFor('the task dead-lettered', () => dead.find((t) => t.event_id === e.event_id), { timeoutMs: 40_000 });
    const recorded = attemptsOf('ptn_down', e.event_id);
    expect(recorded.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed_retryable'],
      [2, 'failed_retryable'],
      [3, 'failed_retryable'],
      [4, 'failed_retryable'],
      [5, 'failed_final'],
    ]);
    expect(recorded.every((a) => a.response_status === null && a.error !== null)).toBe(true);
    expect(dead.find((t) => t.event_id === e.event_id)).toMatchObject({ target_kind: 'partner_webhook', target_id: 'ptn_down', attempt: 6 });
  });

  it('never retries a 400 or a 404: exactly one attempt, final, dead-lettered', async () => {
    // By now the other slow cases have run for 15 s and more: a retry 1 s after these would have come.
    for (const id of ['ptn_bad', 'ptn_missing']) {
      const e = slow[id]!;
      await waitFor(`${id} dead-lettered`, () => dead.find((t) => t.event_id === e.event_id));
      expect(receiver.of(id, e.event_id)).toHaveLength(1);
      expect(attemptsOf(id, e.event_id).map((a) => [a.attempt, a.outcome, a.response_status])).toEqual([[1, 'failed_final', id === 'ptn_bad' ? 400 : 404]]);
    }
    expect(Date.now() - receiver.of('ptn_bad')[0]!.at).toBeGreaterThan(GAPS_MS[0]! + SLACK_MS);
  });
});
