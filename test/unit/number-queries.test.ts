import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { checkPhones } from '../../connectors/baileys/phone-checks.js';
import type { NumberSession } from '../../connectors/network/index.js';
import { QueryRefused } from '../../connectors/network/index.js';
import { QueryAnswers } from '../../connectors/network/query-answers.js';
import type { Answer, SessionQuery } from '../../connectors/network/query.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { NumberQuery, NumberReply } from '../../schemas/records.js';
import { MemoryProducer } from '../support/memory-topics.js';

const quiet = pino({ level: 'silent' });

function query(overrides: Partial<NumberQuery> = {}): NumberQuery {
  return {
    event_id: asEventId('qry_1'),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_1'),
    project_id: asProjectId('prj_1'),
    instance_id: asInstanceId('inst_1'),
    request_id: 'req_1',
    expires_at: Date.now() + 5_000,
    query: { kind: 'check_phones', phones: ['+5511988887777'] },
    ...overrides,
  };
}

/** A session whose `query` does what the test says; nothing else of it is used. */
const sessionAnswering = (answer: (query: SessionQuery) => Promise<Answer>) => ({ query: answer }) as unknown as NumberSession;

describe('the connector role answering queries', () => {
  const answered = (producer: MemoryProducer) => producer.sent.flatMap((s) => s.records as { key: string; value: NumberReply }[]);

  it('writes the session\'s answer under the request id', async () => {
    const producer = new MemoryProducer();
    const session = sessionAnswering(async () => ({ kind: 'phone_checks', results: [{ phone: '+5511988887777', on_network: true, jid: '5511988887777@s.whatsapp.net', lid: null }] }));
    await new QueryAnswers({ producer, logger: quiet, sessionOf: () => session }).apply(query());
    expect(producer.sent.map((s) => s.topic)).toEqual(['gw.numbers.replies']);
    expect(answered(producer)).toMatchObject([{ key: 'req_1', value: { request_id: 'req_1', instance_id: 'inst_1', answer: { kind: 'phone_checks', results: [{ on_network: true }] } } }]);
  });

  it('answers not_connected for a number without a session here, and the code of a refusal', async () => {
    const producer = new MemoryProducer();
    await new QueryAnswers({ producer, logger: quiet, sessionOf: () => undefined }).apply(query());
    const refusing = sessionAnswering(async () => Promise.reject(new QueryRefused('not_supported', 'the sandbox has no labels')));
    await new QueryAnswers({ producer, logger: quiet, sessionOf: () => refusing }).apply(query({ request_id: 'req_2' }));
    expect(answered(producer).map((r) => r.value.answer)).toEqual([
      { kind: 'failed', error_code: 'not_connected', error_reason: 'the number has no session on this worker' },
      { kind: 'failed', error_code: 'not_supported', error_reason: 'the sandbox has no labels' },
    ]);
  });

  it('carries out nothing its asker stopped waiting for, and answers a session that outlives the deadline as timed out', async () => {
    const producer = new MemoryProducer();
    let asked = 0;
    const slow = sessionAnswering(async () => {
      asked += 1;
      return new Promise(() => undefined);
    });
    const answers = new QueryAnswers({ producer, logger: quiet, sessionOf: () => slow });
    await answers.apply(query({ expires_at: Date.now() - 1 }));
    expect(asked).toBe(0);
    expect(producer.sent).toEqual([]);
    await answers.apply(query({ expires_at: Date.now() + 50 }));
    expect(asked).toBe(1);
    expect(answered(producer)[0]?.value.answer).toMatchObject({ kind: 'failed', error_code: 'service_unavailable' });
  });
});

describe('checking phones on the real network (Baileys)', () => {
  it('asks the phones in one query, keeps the order asked, and answers lids from the mapping the number learnt', async () => {
    const asked: string[][] = [];
    const socket = {
      onWhatsApp: async (...jids: string[]) => {
        asked.push(jids);
        return [{ jid: '5511988887777@s.whatsapp.net', exists: true }];
      },
      signalRepository: { lidMapping: { getPNForLID: async (lid: string) => (lid === '111@lid' ? '5511955550000:3@s.whatsapp.net' : null) } },
    } as unknown as Parameters<typeof checkPhones>[0];
    expect(await checkPhones(socket, ['+5511900001111', '111@lid', '+5511988887777', '222@lid'])).toEqual([
      { phone: '+5511900001111', on_network: false, jid: null, lid: null },
      { phone: '111@lid', on_network: true, jid: '5511955550000@s.whatsapp.net', lid: '111@lid' },
      { phone: '+5511988887777', on_network: true, jid: '5511988887777@s.whatsapp.net', lid: null },
      { phone: '222@lid', on_network: true, jid: '222@lid', lid: '222@lid' },
    ]);
    expect(asked).toEqual([['5511900001111@s.whatsapp.net', '5511988887777@s.whatsapp.net']]);
  });
});
