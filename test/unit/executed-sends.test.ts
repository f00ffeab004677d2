import type { Pool } from 'pg';
import { describe, expect, it } from 'vitest';
import { ExecutedSends, RECENT_SENDS, type SendRef } from '../../connectors/network/executed.js';
import { asAccountId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';

/** A pool that answers every statement with no rows and counts the lookups by network id. */
function fakePool() {
  const lookups: string[][] = [];
  const pool = {
    query: async (sql: string, params: unknown[]) => {
      if (sql.includes('wa_message_id = ANY')) lookups.push(params[1] as string[]);
      return { rows: [], rowCount: 0 };
    },
  };
  return { pool: pool as unknown as Pool, lookups };
}

const instance = asInstanceId('inst_1');
const send = (n: number): SendRef => ({
  message_id: asMessageId(`msg_${n}`),
  instance_id: instance,
  account_id: asAccountId('acc_1'),
  project_id: asProjectId('prj_1'),
  to: '+5511999990001',
  client_reference: null,
  campaign_id: null,
});

describe('ExecutedSends', () => {
  it(`remembers the newest ${RECENT_SENDS} accepted sends by network id; an older one is looked up`, async () => {
    const { pool, lookups } = fakePool();
    const executed = new ExecutedSends(pool);
    const total = RECENT_SENDS + 500;
    const results = Array.from({ length: total }, (_, n) => ({ send: send(n), result: { kind: 'accepted' as const, wa_message_id: `wa_${n}` } }));
    await executed.finish(results);

    const newest = await executed.byNetworkIds(instance, [`wa_${total - 1}`, `wa_${total - RECENT_SENDS}`]);
    expect([...newest.values()].map((s) => s.message_id)).toEqual([`msg_${total - 1}`, `msg_${total - RECENT_SENDS}`]);
    expect(lookups).toEqual([]);

    await executed.byNetworkIds(instance, [`wa_${total - RECENT_SENDS - 1}`, 'wa_0']);
    expect(lookups).toEqual([[`wa_${total - RECENT_SENDS - 1}`, 'wa_0']]);
  });
});
