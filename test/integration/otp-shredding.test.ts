import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { OtpKeys } from '../../connectors/network/index.js';
import { asEventId, asMessageId, newId } from '../../schemas/ids.js';
import type { MessageStatus, SendCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { readRange, topicName, topics, watermarks, type ConsumedRecord } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

/**
 * An OTP code is sealed under a key of its own that the connector destroys once the send is done:
 * after that no topic and no table holds the code, in clear or in a form anyone can open. A send
 * read after its key's lifetime fails as `otp_expired` instead of going out.
 */
describe('OTP codes shredded after their send', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  const code = String(randomInt(10_000_000, 99_999_999));

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };

  /** From the first record each partition holds to its end. */
  const bounds = async (name: string): Promise<[Map<number, number>, Map<number, number>]> => {
    const marks = [...(await watermarks(clients.kafka, name))];
    return [new Map(marks.map(([p, m]) => [p, m.low])), new Map(marks.map(([p, m]) => [p, m.high]))];
  };

  /** Every record of every topic of this test's prefix, read from the start to the end of each partition. */
  const everyRecord = async (): Promise<ConsumedRecord<unknown>[]> => {
    const admin = clients.kafka.admin();
    await admin.connect();
    const names = (await admin.listTopics()).filter((name) => name.startsWith(clients.serdes.prefix));
    await admin.disconnect();
    const records: ConsumedRecord<unknown>[] = [];
    for (const name of names) {
      const [from, to] = await bounds(name);
      records.push(...(await readRange(clients, { name: name.slice(clients.serdes.prefix.length), value: undefined }, from, to)));
    }
    return records;
  };

  const sendCommands = async (): Promise<SendCommand[]> => {
    const read = await readRange(clients, topics.sendCommands, ...(await bounds(topicName(topics.sendCommands, clients.serdes.prefix))));
    return read.flatMap((r) => (r.decoded.ok && r.decoded.value !== null ? [r.decoded.value] : []));
  };

  const statuses = async (): Promise<MessageStatus[]> => {
    const read = await readRange(clients, topics.messageStatus, ...(await bounds(topicName(topics.messageStatus, clients.serdes.prefix))));
    return read.flatMap((r) => (r.decoded.ok && r.decoded.value !== null ? [r.decoded.value] : []));
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', GATEWAY_MODE: 'development' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    account = await createAccount(clients.producer, { name: 'Bank', email: 'otp@bank.test', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const { status, body } = await call('GET', '/instances');
      return status === 200 && (body.data as Array<{ status: string }>).some((n) => n.status === 'connected');
    }, { timeoutMs: 60_000, intervalMs: 100 });
  });

  afterAll(async () => {
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('leaves no code on any topic or table once the send is done, and no key that opens it', async () => {
    const { status, body } = await call('POST', '/messages/otp', { to: '+5511944443333', code, expiry_minutes: 5 });
    expect(status, JSON.stringify(body)).toBe(202);
    const messageId = body.message_id as string;
    await waitFor('the OTP sent', async () => (await statuses()).some((s) => s.message_id === messageId));

    const command = (await sendCommands()).find((c) => c.message_id === messageId)!;
    expect(command.content.kind).toBe('otp');
    const sealed = (command.content as { code_ciphertext: string }).code_ciphertext;
    const keys = new OtpKeys(clients.pool);
    await waitFor('the code\'s key destroyed', async () => (await keys.open(sealed)) === undefined);
    expect(() => clients.cipher.open(sealed)).toThrow();

    const records = await everyRecord();
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(record.raw?.toString('latin1') ?? '', `${record.topic} ${record.offset}`).not.toContain(code);
      if (record.decoded.ok) expect(JSON.stringify(record.decoded.value), record.topic).not.toContain(code);
    }
    const tables = await clients.pool.query<{ table_schema: string; table_name: string }>(
      `SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    for (const { table_schema: schema, table_name: table } of tables.rows) {
      const { rows } = await clients.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"."${table}" t WHERE t::text LIKE $1`, [`%${code}%`]);
      expect(Number(rows[0]!.n), `${schema}.${table}`).toBe(0);
    }
  });

  it('fails a send read after its code\'s lifetime as otp_expired, and sends nothing', async () => {
    const text = await call('POST', '/messages/text', { to: '+5511944443334', body: 'hello' });
    expect(text.status).toBe(202);
    const template = await waitFor('the text command', async () => (await sendCommands()).find((c) => c.message_id === text.body.message_id));
    const messageId = asMessageId(newId('msg'));
    const command: SendCommand = {
      ...template,
      event_id: asEventId(newId('evt')),
      message_id: messageId,
      occurred_at: Date.now(),
      content: { kind: 'otp', code_masked: '••••••42', code_ciphertext: await new OtpKeys(clients.pool).seal(code, 1), expiry_minutes: 1, body: 'Your code:' },
    };
    await clients.producer.send(topics.sendCommands, [{ key: command.instance_id, value: command }]);
    const failed = await waitFor('the send failed', async () => (await statuses()).find((s) => s.message_id === messageId && s.status === 'failed'));
    expect(failed.error_code).toBe('otp_expired');
    expect(failed.wa_message_id).toBeNull();
  });
});
