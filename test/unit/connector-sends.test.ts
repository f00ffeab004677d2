import type { Pool } from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NumberSession, StatusFact } from '../../connectors/network/connector.js';
import { ExecutedSends } from '../../connectors/network/executed.js';
import { sentNetworkId } from '../../connectors/network/ids.js';
import type { OpenedOtpCodes } from '../../connectors/network/otp-keys.js';
import { Sends } from '../../connectors/network/sends.js';
import { phoneJid } from '../../schemas/phones.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { MessageStatus, SendCommand } from '../../schemas/records.js';
import { KeyedSerial } from '../../shared/serial.js';
import { topics } from '../../topics/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { MemoryProducer } from '../support/memory-topics.js';

const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const instance = asInstanceId('inst_sends');

function sendCommand(): SendCommand {
  return {
    event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: asAccountId('acc_sends'), project_id: asProjectId('prj_sends'),
    instance_id: instance, message_id: asMessageId(newId('msg')), client_reference: null, to: phoneJid('+5511987650001'), origin: 'api',
    campaign_id: null, idempotency_key_hash: null, quoted_message_id: null, mentions: [], expires_at: null, content: { kind: 'text', body: 'hi' },
  };
}

/** Sends executed on a network that takes everything, with the outcomes stored in the real Postgres. */
describe('Sends and the receipts of their messages', () => {
  let db: TestDatabase;
  let storing: 'fails' | 'fails for good' | 'works' = 'works';

  beforeAll(async () => {
    db = await createTestDatabase();
    await new ExecutedSends(db.pool).ensureSchema();
  });

  afterAll(async () => {
    await db?.dispose();
  });

  function sends() {
    const pool = {
      query: (sql: string, params?: unknown[]) => {
        if (storing !== 'works' && sql.trimStart().startsWith('UPDATE connector.executed')) {
          // A Postgres error of a value it can never take (SQLSTATE 22001) is permanent; one without a code is not.
          return Promise.reject(storing === 'fails' ? new Error('the database stalled') : Object.assign(new Error('value too long'), { code: '22001', severity: 'ERROR' }));
        }
        return db.pool.query(sql, params);
      },
    } as unknown as Pool;
    const session: Pick<NumberSession, 'send'> = { send: async (command) => ({ kind: 'accepted', wa_message_id: sentNetworkId(command.message_id, 0) }) };
    const producer = new MemoryProducer();
    const sent = new Sends({
      executed: new ExecutedSends(pool),
      writer: new KeyedSerial(),
      producer,
      logger: quiet,
      metrics: { sent: () => undefined },
      otp: {} as OpenedOtpCodes,
      numberOf: () => ({ session: session as NumberSession }),
    });
    const statuses = () => producer.sent.filter((s) => s.topic === topics.messageStatus.name).flatMap((s) => s.records as { value: MessageStatus }[]).map((r) => r.value.status);
    return { sent, statuses };
  }

  it('writes a receipt that came before its send outcome was stored once the retried batch stores it', async () => {
    const { sent, statuses } = sends();
    const command = sendCommand();
    const receipt: StatusFact = {
      kind: 'status', wa_message_id: sentNetworkId(command.message_id, 0), status: 'delivered', error_code: null, error_reason: null, occurred_at: Date.now(),
    };

    storing = 'fails';
    try {
      await expect(sent.send([command])).rejects.toThrow('the database stalled');
      await expect(sent.writeReceipt(instance, receipt, () => true)).rejects.toThrow(/before its send's outcome was stored/);
      expect(statuses()).toEqual([]);
    } finally {
      storing = 'works';
    }
    await sent.send([command]);
    await sent.writeReceipt(instance, receipt, () => true);
    expect(statuses()).toEqual(['sent', 'delivered']);
  });

  it('holds a receipt of ours whose send a stopped worker claimed until this one sends it again and stores the outcome', async () => {
    const { sent, statuses } = sends();
    const command = sendCommand();
    // The worker that had the number claimed the send, the network took it, and the worker was killed.
    expect(await new ExecutedSends(db.pool).claim([command])).toEqual([{ kind: 'new' }]);
    const receipt: StatusFact = {
      kind: 'status', wa_message_id: sentNetworkId(command.message_id, 0), status: 'delivered', error_code: null, error_reason: null, occurred_at: Date.now(), ours: true,
    };
    // The number's session opens here and writes what the network owes before the command is read again.
    await expect(sent.writeReceipt(instance, receipt, () => true)).rejects.toThrow(/before its send's outcome was stored/);
    // Not ours (a message the owner's phone sent), it is ignored as before.
    await sent.writeReceipt(instance, { ...receipt, ours: false }, () => true);
    expect(statuses()).toEqual([]);

    await sent.send([command]);
    await sent.writeReceipt(instance, receipt, () => true);
    expect(statuses()).toEqual(['sent', 'delivered']);
  });

  it("drops the receipt of a send whose batch failed for good, as nothing will store that send's outcome", async () => {
    const { sent, statuses } = sends();
    const command = sendCommand();
    storing = 'fails for good';
    try {
      await expect(sent.send([command])).rejects.toThrow('value too long');
    } finally {
      storing = 'works';
    }
    await sent.writeReceipt(instance, { kind: 'status', wa_message_id: sentNetworkId(command.message_id, 0), status: 'delivered', error_code: null, error_reason: null, occurred_at: Date.now() }, () => true);
    expect(statuses()).toEqual([]);
  });

  it('ignores a receipt of a message it did not send', async () => {
    const { sent, statuses } = sends();
    await sent.writeReceipt(instance, { kind: 'status', wa_message_id: 'not-ours', status: 'read', error_code: null, error_reason: null, occurred_at: Date.now() }, () => true);
    expect(statuses()).toEqual([]);
  });
});
