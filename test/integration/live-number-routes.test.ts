import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { PublicEvent } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { collectTopic } from '../support/topic-collector.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

/**
 * The routes that act through a number's live session (`/presence`, `/calls`, `/chats`, `/labels`),
 * end to end on the sandbox: API → `gw.commands.queries` → the connector's session → its answer.
 */
describe('live number routes through the API on the sandbox', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let shop: CreatedAccount;
  let idle: CreatedAccount;
  let number: string;
  let events: { values: PublicEvent[]; consumer: TopicConsumer };

  const call = async (account: CreatedAccount, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${account.api_key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };

  const customerWrites = (from: string, text: string) => call(shop, 'POST', `/sandbox/instances/${number}/customer-messages`, { from, content: { type: 'text', body: text } });

  const connected = (instanceId: string) => async () => {
    const { rows } = await clients.pool.query<{ status: string }>('SELECT status FROM instances.numbers WHERE instance_id = $1', [instanceId]);
    return rows[0]?.status === 'connected' || undefined;
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    idle = await createAccount(clients.producer, { name: 'Idle', email: 'owner@idle.test', plan: 'pro', sandboxNumbers: 1 }, async () => undefined);
    number = shop.instance_ids[0]!;
    await waitFor('the shop number connected', connected(number), { timeoutMs: 90_000 });
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, idle.account_id), 30_000);
    events = await collectTopic(clients, topics.events, `${env.id}.events`);
  });

  afterAll(async () => {
    await events?.consumer.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  describe('/presence', () => {
    it('shows the number online and typing in a chat', async () => {
      expect(await call(shop, 'POST', '/presence', { instance_id: number, presence: 'available' })).toEqual({
        status: 200,
        body: { instance_id: number, presence: 'available', to: null },
      });
      expect(await call(shop, 'POST', '/presence', { instance_id: number, presence: 'composing', to: '+5511988887777' })).toEqual({
        status: 200,
        body: { instance_id: number, presence: 'composing', to: '5511988887777@s.whatsapp.net' },
      });
    });

    it("reads a contact's presence: online after writing, unknown when never heard of", async () => {
      await customerWrites('+5511988886666', 'hello');
      await waitFor('the customer seen online', async () => {
        const { body } = await call(shop, 'GET', `/presence/+5511988886666?instance_id=${number}`);
        return body.presence === 'available' || undefined;
      });
      const { status, body } = await call(shop, 'GET', `/presence/5511977770000@s.whatsapp.net?instance_id=${number}`);
      expect(status).toBe(200);
      expect(body).toEqual({ instance_id: number, jid: '5511977770000@s.whatsapp.net', presence: 'unknown', last_seen: null, heard_at: null });
    });

    it('refuses bad inputs with a code', async () => {
      const cases: [unknown, number, string][] = [
        [{ instance_id: number, presence: 'composing' }, 400, 'invalid_request'],
        [{ instance_id: number, presence: 'available', to: '+5511988887777' }, 400, 'invalid_request'],
        [{ instance_id: number, presence: 'dancing' }, 400, 'invalid_request'],
        [{ instance_id: number, presence: 'paused', to: 'not-a-phone' }, 400, 'invalid_request'],
        [{ presence: 'available' }, 400, 'invalid_request'],
        [{ instance_id: 'inst_elsewhere', presence: 'available' }, 404, 'not_found'],
      ];
      for (const [body, status, code] of cases) {
        const answer = await call(shop, 'POST', '/presence', body);
        expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([status, code]);
      }
      const notConnected = await call(idle, 'POST', '/presence', { instance_id: idle.instance_ids[0], presence: 'available' });
      expect([notConnected.status, notConnected.body.code]).toEqual([409, 'not_connected']);
      const noNumber = await call(shop, 'GET', '/presence/+5511988887777');
      expect([noNumber.status, noNumber.body.code]).toEqual([400, 'invalid_request']);
    });
  });

  describe('/calls', () => {
    const ring = (callId: string, from: string, extra: object = {}) => call(shop, 'POST', `/sandbox/instances/${number}/calls`, { from, call_id: callId, ...extra });
    const logged = (callId: string, status: string) => async () => {
      const { body } = await call(shop, 'GET', `/calls?instance_id=${number}`);
      const found = (body.data as { call_id: string; status: string }[]).find((c) => c.call_id === callId);
      return found?.status === status ? found : undefined;
    };

    it('logs a call that rings, announces call.received, and rejects it with a reply text', async () => {
      expect((await ring('CALL1', '+5511944443333', { is_video: true })).status).toBe(202);
      const ringing = await waitFor('the call in the log', logged('CALL1', 'offer'));
      expect(ringing).toMatchObject({ call_id: 'CALL1', instance_id: number, from: '5511944443333@s.whatsapp.net', is_video: true, rejected_by_us: false, offline: false });
      const announced = await waitFor('call.received on gw.events', async () => events.values.find((e) => e.event_type === 'call.received' && (JSON.parse(e.payload_json) as { call_id: string }).call_id === 'CALL1'));
      expect(JSON.parse(announced.payload_json) as unknown).toEqual({ call_id: 'CALL1', from: '5511944443333@s.whatsapp.net', is_video: true, offline: false });
      expect(announced).toMatchObject({ instance_id: number, sender: { jid: '5511944443333@s.whatsapp.net' } });

      const foreign = await call(shop, 'GET', `/calls?instance_id=${idle.instance_ids[0]}`);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
      const rejected = await call(shop, 'POST', '/calls/CALL1/reject', { reply_text: 'Busy now, I will call you back' });
      expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
      expect(rejected.body).toMatchObject({ call_id: 'CALL1', instance_id: number, status: 'reject' });
      expect(rejected.body.reply_message_id).toMatch(/^msg_/);
      expect(await waitFor('the reject in the log', logged('CALL1', 'reject'))).toMatchObject({ rejected_by_us: true });
      await waitFor('the reply sent', async () => {
        const { rows } = await clients.pool.query<{ message_id: string }>('SELECT message_id FROM conversations.messages WHERE message_id = $1', [rejected.body.reply_message_id]);
        return rows[0];
      });
    });

    it('refuses bad inputs with a code', async () => {
      await ring('CALL2', '+5511944442222');
      await waitFor('the second call', logged('CALL2', 'offer'));
      await ring('CALL2', '+5511944442222', { status: 'timeout' });
      await waitFor('the second call missed', logged('CALL2', 'timeout'));
      const over = await call(shop, 'POST', '/calls/CALL2/reject', {});
      expect([over.status, over.body.code]).toEqual([400, 'invalid_request']);
      const unknown = await call(shop, 'POST', '/calls/NOSUCHCALL/reject', {});
      expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
      const empty = await call(shop, 'POST', '/calls/CALL2/reject', { reply_text: '' });
      expect([empty.status, empty.body.code]).toEqual([400, 'invalid_request']);
      const badLimit = await call(shop, 'GET', '/calls?limit=0');
      expect([badLimit.status, badLimit.body.code]).toEqual([400, 'invalid_request']);
      const badCursor = await call(shop, 'GET', '/calls?cursor=nonsense');
      expect([badCursor.status, badCursor.body.code]).toEqual([400, 'invalid_request']);
      const otherProject = await call(idle, 'POST', '/calls/CALL2/reject', {});
      expect([otherProject.status, otherProject.body.code]).toEqual([404, 'not_found']);
    });
  });

  describe('/chats', () => {
    const chatOf = async (jid: string) => {
      const { status, body } = await call(shop, 'GET', `/chats?instance_id=${number}`);
      expect(status).toBe(200);
      return (body.data as { jid: string; unread_count: number; archived: boolean; pinned: boolean }[]).find((c) => c.jid === jid);
    };

    it('lists the chats a customer opened, and archives, reads and pins one', async () => {
      const jid = '5511933332222@s.whatsapp.net';
      await customerWrites('+5511933332222', 'first');
      await customerWrites('+5511933332222', 'second');
      expect(await waitFor('the chat with two unread', async () => ((await chatOf(jid))?.unread_count === 2 ? chatOf(jid) : undefined))).toMatchObject({ archived: false, pinned: false });
      for (const action of ['archive', 'read', 'pin']) {
        const done = await call(shop, 'POST', `/chats/+5511933332222/${action}`, { instance_id: number });
        expect(done).toEqual({ status: 200, body: { instance_id: number, jid, action } });
      }
      expect(await chatOf(jid)).toMatchObject({ archived: true, unread_count: 0, pinned: true });
      await call(shop, 'POST', `/chats/${jid}/unread`, { instance_id: number });
      await call(shop, 'POST', `/chats/${jid}/unpin`, { instance_id: number });
      expect(await chatOf(jid)).toMatchObject({ unread_count: -1, pinned: false });
    });

    it('refuses bad inputs with a code', async () => {
      const cases: [string, string, unknown, number, string][] = [
        ['POST', '/chats/+5511933332222/delete', { instance_id: number }, 400, 'invalid_request'],
        ['POST', '/chats/not-a-chat/archive', { instance_id: number }, 400, 'invalid_request'],
        ['POST', '/chats/+5511933332222/archive', {}, 400, 'invalid_request'],
        ['POST', '/chats/+5511911110000/archive', { instance_id: number }, 400, 'invalid_request'],
        ['POST', '/chats/+5511933332222/archive', { instance_id: 'inst_elsewhere' }, 404, 'not_found'],
        ['GET', '/chats', undefined, 400, 'invalid_request'],
        ['GET', `/chats?instance_id=${number}&limit=0`, undefined, 400, 'invalid_request'],
      ];
      for (const [method, url, body, status, code] of cases) {
        const answer = await call(shop, method as 'GET' | 'POST', url, body);
        expect([answer.status, answer.body.code], `${method} ${url}`).toEqual([status, code]);
      }
      const notConnected = await call(idle, 'GET', `/chats?instance_id=${idle.instance_ids[0]}`);
      expect([notConnected.status, notConnected.body.code]).toEqual([409, 'not_connected']);
    });
  });

  describe('/labels', () => {
    it("lists the number's labels and puts one on a chat and takes it off", async () => {
      const jid = '5511933334444@s.whatsapp.net';
      await customerWrites('+5511933334444', 'I want to order');
      await waitFor('the chat opened', async () => {
        const { body } = await call(shop, 'GET', `/chats?instance_id=${number}`);
        return (body.data as { jid: string }[]).some((c) => c.jid === jid) || undefined;
      });
      const put = await call(shop, 'POST', `/labels/2/chats/+5511933334444`, { instance_id: number });
      expect(put).toEqual({ status: 200, body: { instance_id: number, label_id: '2', jid, labelled: true } });
      const { status, body } = await call(shop, 'GET', `/labels?instance_id=${number}`);
      expect(status).toBe(200);
      expect((body.data as { id: string; name: string; chat_jids: string[] }[]).find((l) => l.id === '2')).toEqual({ id: '2', name: 'New order', color: 1, chat_jids: [jid] });
      const off = await call(shop, 'DELETE', `/labels/2/chats/${jid}?instance_id=${number}`);
      expect(off).toEqual({ status: 200, body: { instance_id: number, label_id: '2', jid, labelled: false } });
      const chats = await call(shop, 'GET', `/chats?instance_id=${number}`);
      expect((chats.body.data as { jid: string; label_ids: string[] }[]).find((c) => c.jid === jid)?.label_ids).toEqual([]);
    });

    it('refuses bad inputs with a code', async () => {
      const cases: [string, string, unknown, number, string][] = [
        ['POST', '/labels/99/chats/+5511933334444', { instance_id: number }, 400, 'invalid_request'],
        ['POST', '/labels/2/chats/+5511911112222', { instance_id: number }, 400, 'invalid_request'],
        ['POST', '/labels/2/chats/nobody', { instance_id: number }, 400, 'invalid_request'],
        ['POST', '/labels/2/chats/+5511933334444', {}, 400, 'invalid_request'],
        ['DELETE', '/labels/2/chats/+5511933334444', undefined, 400, 'invalid_request'],
        ['GET', '/labels', undefined, 400, 'invalid_request'],
        ['GET', '/labels?instance_id=inst_elsewhere', undefined, 404, 'not_found'],
      ];
      for (const [method, url, body, status, code] of cases) {
        const answer = await call(shop, method as 'GET' | 'POST' | 'DELETE', url, body);
        expect([answer.status, answer.body.code], `${method} ${url}`).toEqual([status, code]);
      }
      const notConnected = await call(idle, 'GET', `/labels?instance_id=${idle.instance_ids[0]}`);
      expect([notConnected.status, notConnected.body.code]).toEqual([409, 'not_connected']);
    });
  });

  describe('PATCH /instances/{id}', () => {
    it('renames a connected number; its session keeps it connected', async () => {
      const renamed = await call(shop, 'PATCH', `/instances/${number}`, { nickname: 'Loja centro' });
      expect(renamed).toMatchObject({ status: 200, body: { id: number, nickname: 'Loja centro', status: 'connected' } });
      const listed = (await call(shop, 'GET', '/instances')).body.data as { id: string; nickname: string; status: string }[];
      expect(listed.find((n) => n.id === number)).toMatchObject({ nickname: 'Loja centro', status: 'connected' });
    });

    it('refuses bad inputs with a code', async () => {
      const cases: [string, unknown, number, string][] = [
        [number, { nickname: '' }, 400, 'invalid_request'],
        [number, { nickname: '   ' }, 400, 'invalid_request'],
        [number, { nickname: 'x'.repeat(101) }, 400, 'invalid_request'],
        [number, { nickname: 'ok', status: 'connected' }, 400, 'invalid_request'],
        [number, {}, 400, 'invalid_request'],
        ['inst_elsewhere', { nickname: 'ok' }, 404, 'not_found'],
      ];
      for (const [id, body, status, code] of cases) {
        const answer = await call(shop, 'PATCH', `/instances/${id}`, body);
        expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([status, code]);
      }
      // Another account's number is not found: the write is scoped to the key's project.
      const foreign = await call(idle, 'PATCH', `/instances/${number}`, { nickname: 'mine' });
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
    });
  });
});
