import { createHash, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiContext } from '../../api/context.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import { sandboxRoutes } from '../../api/sandbox/routes.js';
import { startConnectorRole, type ConnectorRole, type MediaSink } from '../../connectors/network/index.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../../connectors/sandbox/index.js';
import { instancesProjection } from '../../processors/instances/projection.js';
import { runProjection, type RunningProjection } from '../../processors/runtime/runner.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { ConnectorKind, InboundMessage, InstanceState, SandboxCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topics, type TopicConsumer } from '../../topics/index.js';
import { otpCodes, testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const account = asAccountId('acc_api');
const project = asProjectId('prj_api');
const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

const media: MediaSink = {
  async store(bytes, mime, filename) {
    const id = randomUUID();
    return { id, mime_type: mime, filename: filename ?? null, size: bytes.length, storage_key: `media/${id}`, sha256: createHash('sha256').update(bytes).digest('hex') };
  },
};

describe('sandbox routes, through the log to the connector', () => {
  let env: TestEnv;
  let clients: Clients;
  let projection: RunningProjection;
  let role: ConnectorRole;
  let reader: TopicConsumer;
  const app = Fastify({ ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } } }).withTypeProvider<TypeBoxTypeProvider>();
  const written = { commands: [] as SandboxCommand[], inbound: [] as InboundMessage[] };

  async function addNumber(connector: ConnectorKind = 'sandbox', projectId = project): Promise<string> {
    const id = newId('inst');
    const state: InstanceState = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: projectId,
      instance_id: asInstanceId(id),
      phone: null,
      nickname: null,
      status: 'pending',
      previous_status: null,
      reason: null,
      health_score: 100,
      pool_ids: [],
      connector,
      deleted: false,
    };
    await clients.producer.send(topics.instances, [{ key: id, value: state }]);
    await waitFor(`${id} in the projection`, () => numberRow(id));
    return id;
  }

  async function numberRow(id: string): Promise<{ status: string; phone: string | null } | undefined> {
    const { rows } = await clients.pool.query<{ status: string; phone: string | null }>('SELECT status, phone FROM instances.numbers WHERE instance_id = $1', [id]);
    return rows[0];
  }

  const post = (id: string, path: string, payload: object) => app.inject({ method: 'POST', url: `/sandbox/instances/${id}/${path}`, payload });

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    projection = await runProjection(clients, instancesProjection);
    role = await startConnectorRole(clients, { connectors: [new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool), media })], otp: otpCodes(clients) });
    reader = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.reader`, topics: [topics.sandboxCommands, topics.inboundMessages], fromBeginning: true });
    await reader.run(async (batch) => {
      for (const record of batch.records) {
        if (!record.decoded.ok || !record.decoded.value) continue;
        const value = record.decoded.value as SandboxCommand | InboundMessage;
        if ('control' in value) written.commands.push(value);
        else written.inbound.push(value);
      }
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });

    // Stands in for the auth plugin: a key of `project` with the sandbox scope.
    app.decorateRequest('auth', null as unknown as AuthContext);
    app.addHook('onRequest', async (request) => {
      request.auth = { accountId: account, projectId: project, keyId: 'key_1', role: 'owner', scopes: ['*'], locale: 'en', plan: 'pro', partnerKey: false };
    });
    await app.register(errorsPlugin);
    await app.register(sandboxRoutes, { ctx: { clients } as unknown as ApiContext });
  });

  afterAll(async () => {
    await app.close();
    await reader?.stop();
    await role?.stop();
    await projection?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('pairs a number and has a customer write to it', async () => {
    const id = await addNumber();
    const connect = await post(id, 'connect', { method: 'code', phone: '+5511933330001', auto: true });
    expect(connect.statusCode).toBe(202);
    expect(connect.json()).toEqual({ accepted: true });
    await waitFor('the number connected in the projection', async () => (await numberRow(id))?.status === 'connected');
    expect(await numberRow(id)).toMatchObject({ phone: '+5511933330001' });

    const message = await post(id, 'customer-messages', { from: '+5511933339999', name: 'Ana', content: { type: 'text', body: 'hello' } });
    expect(message.statusCode).toBe(202);
    const { wa_message_id: waId } = message.json<{ wa_message_id: string }>();
    const received = await waitFor('the inbound message', () => written.inbound.find((m) => m.wa_message_id === waId));
    expect(received).toMatchObject({ instance_id: id, project_id: project, sender: { name: 'Ana', phone: '+5511933339999' }, content: { kind: 'text', body: 'hello' } });

    const command = written.commands.find((c) => c.instance_id === id && c.control.kind === 'connect');
    expect(command).toMatchObject({ account_id: account, project_id: project, control: { kind: 'connect', method: 'code', phone: '+5511933330001', auto: true } });
  });

  it('carries inline media to the media store and the other controls to the log', async () => {
    const id = await addNumber();
    await post(id, 'connect', { auto: true });
    await waitFor('connected', async () => (await numberRow(id))?.status === 'connected');
    const bytes = Buffer.from('%PDF-1.4 sandbox');
    const document = await post(id, 'customer-messages', {
      from: '81234567890123@lid',
      content: { type: 'document', media: { base64: bytes.toString('base64'), mimetype: 'application/pdf', filename: 'offer.pdf' }, caption: 'the offer' },
    });
    const { wa_message_id: waId } = document.json<{ wa_message_id: string }>();
    const received = await waitFor('the document', () => written.inbound.find((m) => m.wa_message_id === waId));
    expect(received.content).toMatchObject({ kind: 'document', caption: 'the offer', media: { mime_type: 'application/pdf', filename: 'offer.pdf', size: bytes.length } });
    expect(received.sender).toMatchObject({ jid: '81234567890123@lid', lid: '81234567890123@lid' });

    for (const [path, payload] of [
      ['scan', { phone: '+5511933330002' }],
      ['status', { status: 'banned', reason: 'spam' }],
      ['phone-messages', { to: '120363040000000003@g.us', content: { type: 'location', latitude: 1, longitude: 2 } }],
      ['behaviour', { delivered_after_ms: 10, fail_to: ['+5511933330003'] }],
      ['lids', { lid: '81234567890123@lid', phone: '+5511933330004' }],
      ['group-events', { change: 'subject_changed', group: { jid: '120363040000000003@g.us' }, subject: 'New name' }],
    ] as const) {
      const answer = await post(id, path, payload);
      expect(answer.statusCode, `${path}: ${answer.body}`).toBe(202);
    }
    await waitFor('every control on the log', () =>
      ['scan', 'set_status', 'phone_message', 'set_behaviour', 'map_lid', 'group_update'].every((kind) =>
        written.commands.some((c) => c.instance_id === id && c.control.kind === kind),
      ),
    );
    expect(written.commands.find((c) => c.instance_id === id && c.control.kind === 'set_behaviour')!.control).toEqual({
      kind: 'set_behaviour',
      delivered_after_ms: 10,
      read_after_ms: null,
      fail_to: ['+5511933330003'],
      block_from: null,
    });
  });

  it('answers 404 for a number of another project or none, 422 for a real number, 400 for a bad body', async () => {
    const elsewhere = await addNumber('sandbox', asProjectId('prj_other'));
    const real = await addNumber('baileys');
    const mine = await addNumber();

    expect((await post(elsewhere, 'scan', {})).json()).toMatchObject({ code: 'not_found' });
    expect((await post('inst_missing', 'scan', {})).statusCode).toBe(404);
    const onReal = await post(real, 'scan', {});
    expect([onReal.statusCode, onReal.json<{ code: string }>().code]).toEqual([422, 'not_supported']);

    for (const [path, payload] of [
      ['connect', { phone: '5511933330001' }],
      ['customer-messages', { from: '+5511933339999', content: { type: 'telegram' } }],
      ['customer-messages', { from: 'nobody', content: { type: 'text', body: 'x' } }],
      ['status', { status: 'pending' }],
      ['lids', { lid: '+5511933330004', phone: '+5511933330004' }],
    ] as const) {
      const answer = await post(mine, path, payload);
      expect([answer.statusCode, answer.json<{ code: string }>().code], `${path} ${JSON.stringify(payload)}`).toEqual([400, 'invalid_request']);
    }
    expect(written.commands.filter((c) => [elsewhere, real].includes(c.instance_id))).toEqual([]);
  });
});
