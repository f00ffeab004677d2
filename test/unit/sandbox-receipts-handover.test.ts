import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvents, SessionFact, StatusFact } from '../../connectors/network/connector.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../../connectors/sandbox/index.js';
import { phoneJid } from '../../schemas/phones.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState, SendCommand } from '../../schemas/records.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';

const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const account = asAccountId('acc_handover');
const project = asProjectId('prj_handover');

function connectedNumber(): InstanceState {
  const id = asInstanceId(newId('inst'));
  return {
    event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: id,
    phone: '+5511911110001', nickname: 'handover', status: 'connected', previous_status: null, reason: null, health_score: 100,
    pool_ids: [], connector: 'sandbox', deleted: false,
  };
}

function sendCommand(instance: InstanceState): SendCommand {
  return {
    event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: instance.instance_id,
    message_id: asMessageId(newId('msg')), client_reference: null, to: phoneJid('+5511987650001'), origin: 'api', campaign_id: null,
    idempotency_key_hash: null, quoted_message_id: null, mentions: [], expires_at: null, content: { kind: 'text', body: 'hello' },
  };
}

/** The facts a worker's sessions emit; a status fact waits for `gate` (a slow log). */
function recorder(gate: Promise<void> = Promise.resolve()): SessionEvents & { readonly receipts: () => StatusFact[] } {
  const facts: SessionFact[] = [];
  return {
    emit: async (fact) => {
      if (fact.kind === 'status') await gate;
      facts.push(fact);
    },
    receipts: () => facts.filter((f): f is StatusFact => f.kind === 'status'),
  };
}

/** Receipts the sandbox network owes, on the real Postgres, as two workers of the connector share them. */
describe('sandbox receipts between two workers', () => {
  let db: TestDatabase;
  let receipts: PendingReceipts;
  let behaviours: SandboxBehaviours;

  beforeAll(async () => {
    db = await createTestDatabase();
    receipts = new PendingReceipts(db.pool);
    behaviours = new SandboxBehaviours(db.pool);
    await receipts.ensureSchema();
    await behaviours.ensureSchema();
  });

  afterAll(async () => {
    await db?.dispose();
  });

  const owedOf = async (instanceId: string) =>
    (await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM sandbox.pending_receipts WHERE instance_id = $1', [instanceId])).rows[0]!.n;

  it('keeps the behaviour a number was given for the worker it moves to, or a restarted one', async () => {
    const instance = connectedNumber();
    const first = await new SandboxNetwork({ logger: quiet, receipts, behaviours }).open(instance, recorder());
    await first.control({ event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: instance.instance_id,
      control: { kind: 'set_behaviour', delivered_after_ms: 5_000, read_after_ms: null, fail_to: ['+5511987650001'], block_from: null } });
    await first.close();

    const next = await new SandboxNetwork({ logger: quiet, receipts, behaviours }).open(instance, recorder());
    expect(next.view().behaviour).toMatchObject({ deliveredAfterMs: 5_000, readAfterMs: 150, failTo: new Set(['+5511987650001']) });
    expect(await next.send(sendCommand(instance))).toMatchObject({ kind: 'failed', error_code: 'delivery_failed' });
    await next.close();

    // A number never given a behaviour opens with the defaults.
    const fresh = await new SandboxNetwork({ logger: quiet, receipts, behaviours }).open(connectedNumber(), recorder());
    expect(fresh.view().behaviour).toMatchObject({ deliveredAfterMs: 50, readAfterMs: 150, failTo: new Set() });
    await fresh.close();
  });

  it('writes the receipts of a send made by the worker a number left after the new one opened it', async () => {
    const instance = connectedNumber();
    const leaving = new SandboxNetwork({ logger: quiet, receipts, behaviours, sweepEveryMs: 100 });
    const taking = new SandboxNetwork({ logger: quiet, receipts, behaviours, sweepEveryMs: 100 });
    const old = recorder();
    const current = recorder();
    const before = await leaving.open(instance, old);
    await before.control({ event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: instance.instance_id,
      control: { kind: 'set_behaviour', delivered_after_ms: 200, read_after_ms: 300, fail_to: null, block_from: null } });
    const after = await taking.open(instance, current);

    // The partition has moved, and the worker it left has not noticed yet: it sends, then closes.
    const sent = await before.send(sendCommand(instance));
    expect(sent.kind).toBe('accepted');
    await before.close();

    const waId = sent.kind === 'accepted' ? sent.wa_message_id : '';
    await waitFor('both receipts written by the worker that holds the number', () => current.receipts().length >= 2, { timeoutMs: 15_000 });
    expect(current.receipts().map((r) => [r.wa_message_id, r.status]).sort()).toEqual([[waId, 'delivered'], [waId, 'read']]);
    expect(old.receipts()).toEqual([]);
    await waitFor('no receipt owed', async () => (await owedOf(instance.instance_id)) === '0');
    await after.close();
  }, 30_000);

  it('leaves a receipt whose write is slow to the session writing it', async () => {
    const instance = connectedNumber();
    const overdue = receipts.overdue.bind(receipts);
    const sweptPast: number[] = [];
    const counting = Object.assign(Object.create(receipts) as PendingReceipts, {
      overdue: async (ids: readonly string[], dueBefore: number, limit: number) => {
        const found = await overdue(ids, dueBefore, limit);
        if (found.some((r) => r.instance_id === instance.instance_id)) sweptPast.push(dueBefore);
        return found;
      },
    });
    let open!: () => void;
    const slow = recorder(new Promise<void>((resolve) => (open = resolve)));
    const network = new SandboxNetwork({ logger: quiet, receipts: counting, behaviours, sweepEveryMs: 100 });
    const session = await network.open(instance, slow);
    await session.control({ event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: instance.instance_id,
      control: { kind: 'set_behaviour', delivered_after_ms: 0, read_after_ms: 0, fail_to: null, block_from: null } });
    const sent = await session.send(sendCommand(instance));
    expect(sent.kind).toBe('accepted');

    // The log holds the writes until sweeps have found both receipts overdue, twice.
    await waitFor('sweeps finding the receipts overdue', () => sweptPast.length >= 2, { timeoutMs: 15_000 });
    open();
    await waitFor('no receipt owed', async () => (await owedOf(instance.instance_id)) === '0');
    expect(slow.receipts().map((r) => r.status).sort()).toEqual(['delivered', 'read']);
    await session.close();
  }, 30_000);
});
