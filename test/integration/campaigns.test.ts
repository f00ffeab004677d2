import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { campaignMessageId } from '../../processors/campaigns/index.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';
import { topics } from '../../topics/index.js';
import type { PublicEvent } from '../../schemas/records.js';
import { canSignIn } from '../support/sign-in.js';

type Body = Record<string, unknown>;
interface Answer {
  readonly status: number;
  readonly body: Body;
}
interface Progress {
  recipients: number;
  pending: number;
  queued: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  opted_out: number;
  suppressed: number;
  blocklisted: number;
}

// The smallest valid PNG: a 1x1 transparent pixel.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * The campaign routes over HTTP on the real stack: the processor projects and runs the campaigns,
 * the sandbox connector sends them. Every refused input answers its code and writes nothing.
 */
describe('campaigns', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let shop: CreatedAccount;
  let other: CreatedAccount;
  let number: string;

  async function call(account: CreatedAccount, method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${account.api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text === '' ? {} : JSON.parse(text)) as Body };
  }
  const as = (account: CreatedAccount) => (method: string, path: string, body?: unknown) => call(account, method, path, body);
  const progress = async (id: string) => (await as(shop)('GET', `/campaigns/${id}`)).body.progress as Progress;
  const until = (what: string, id: string, done: (p: Progress, body: Body) => boolean, timeoutMs = 30_000) =>
    waitFor(what, async () => {
      const { body } = await as(shop)('GET', `/campaigns/${id}`);
      return done(body.progress as Progress, body) ? (body.progress as Progress) : undefined;
    }, { timeoutMs, intervalMs: 100 });
  const count = async () => ((await as(shop)('GET', '/campaigns?limit=200')).body.data as unknown[]).length;
  const phone = (n: number) => `+55119${String(70000000 + n).padStart(8, '0')}`;
  const list = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ to: phone(from + i), variables: { name: `P${from + i}` } }));
  const expectError = (answer: Answer, status: number, code: string) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.body.code).toBe(code);
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    roles = await startRoles(['processor', 'connector'], clients);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const connect = connectSandboxNumbers(clients.producer);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'shop@campaigns.test', plan: 'pro', sandboxNumbers: 1 }, connect);
    other = await createAccount(clients.producer, { name: 'Other', email: 'other@campaigns.test', plan: 'pro', sandboxNumbers: 0 }, connect);
    await api.directory.until(() => [shop, other].every((a) => canSignIn(api.directory, a.account_id)), 15_000);
    number = await waitFor('the shop number connected', async () => {
      const listed = (await as(shop)('GET', '/instances')).body.data as { id: string; status: string }[] | undefined;
      return listed?.[0]?.status === 'connected' ? listed[0].id : undefined;
    }, { timeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('refuses every bad input with its code and writes nothing', async () => {
    const valid = { name: 'Spring', message: { type: 'text', body: 'Hi {{name}}' }, audience: { list: list(2) } };
    const before = await count();
    expectError(await as(shop)('POST', '/campaigns', { ...valid, name: '' }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, message: { type: 'otp', code: '1234' } }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, message: { type: 'text' } }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, audience: {} }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, audience: { csv: 'name\nAna' } }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, schedule: { time_zone: 'Mars/Olympus' } }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, schedule: { sending_hours: { from: '25:00', to: '10:00' } } }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, pace_per_minute: 0 }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, sender: { instance_ids: ['inst_nope'] } }), 404, 'not_found');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, sender: { pool_id: 'pool_nope' } }), 404, 'not_found');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, sender: { instance_ids: [number], pool_id: 'pool_x' } }), 400, 'invalid_request');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, audience: { group_id: 'grp_nope' } }), 404, 'not_found');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, message: { type: 'audio', media: { base64: PNG, ptt: true } } }), 400, 'invalid_request');
    const big = Buffer.alloc(5_000_001, 1).toString('base64');
    expectError(await as(shop)('POST', '/campaigns', { ...valid, message: { type: 'image', media: { base64: big, mimetype: 'image/png' } } }), 413, 'media_too_large');
    expectError(await as(shop)('GET', '/campaigns/cmp_nope'), 404, 'not_found');
    expect(await count()).toBe(before);
  });

  it('creates from a list, reports invalid rows, and reads back; another project sees none of it', async () => {
    const created = await as(shop)('POST', '/campaigns', {
      name: 'Listed',
      message: { type: 'text', body: 'Hi {{name}}' },
      audience: { list: [...list(3), { to: '12345' }, { to: phone(0) }, { to: phone(9), time_zone: 'Nowhere/Land' }] },
      schedule: { time_zone: 'America/Sao_Paulo', sending_hours: { from: '08:00', to: '20:00' } },
      sender: { instance_ids: [number] },
      pace_per_minute: 120,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Listed', status: 'draft', recipients: 3, pace_per_minute: 120,
      message: { type: 'text', body: 'Hi {{name}}' },
      schedule: { start_at: null, time_zone: 'America/Sao_Paulo', sending_hours: { from: '08:00', to: '20:00' } },
      sender: { instance_ids: [number], pool_id: null },
      progress: { recipients: 3, pending: 3, queued: 0 },
    });
    expect(created.body.invalid_rows).toEqual([
      { index: 3, phone: '12345', reason: 'invalid_phone', problem: 'missing_country' },
      { index: 4, phone: phone(0), reason: 'duplicate' },
      { index: 5, phone: phone(9), reason: 'invalid_time_zone' },
    ]);
    const id = created.body.id as string;
    const recipients = await as(shop)('GET', `/campaigns/${id}/recipients?limit=2`);
    expect(recipients.body.data).toMatchObject([
      { index: 0, to: phone(0), status: 'pending', message_id: campaignMessageId(id, 0) },
      { index: 1, to: phone(1), status: 'pending' },
    ]);
    const next = await as(shop)('GET', `/campaigns/${id}/recipients?limit=2&cursor=${recipients.body.next_cursor as string}`);
    expect((next.body.data as Body[]).map((r) => r.index)).toEqual([2]);
    expect(next.body.next_cursor).toBeNull();

    const patched = await as(shop)('PATCH', `/campaigns/${id}`, { name: 'Renamed', pace_per_minute: 30 });
    expect(patched.body).toMatchObject({ name: 'Renamed', pace_per_minute: 30, status: 'draft' });
    expect((await as(shop)('GET', '/campaigns?status=draft')).body.data).toEqual(expect.arrayContaining([expect.objectContaining({ id, name: 'Renamed' })]));

    expectError(await as(other)('GET', `/campaigns/${id}`), 404, 'not_found');
    expectError(await as(other)('POST', `/campaigns/${id}/start`), 404, 'not_found');
    expect((await as(other)('GET', '/campaigns')).body.data).toEqual([]);

    const cancelled = await as(shop)('POST', `/campaigns/${id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    expectError(await as(shop)('PATCH', `/campaigns/${id}`, { name: 'Again' }), 409, 'campaign_state');
    expectError(await as(shop)('POST', `/campaigns/${id}/start`), 409, 'campaign_state');
    expectError(await as(shop)('POST', `/campaigns/${id}/cancel`), 409, 'campaign_state');
    expect((await as(shop)('GET', `/campaigns/${id}`)).body).toMatchObject({ name: 'Renamed', status: 'cancelled' });
  });

  it('reads a CSV audience as a spreadsheet exports it, and refuses one it cannot read', async () => {
    const csv = `\uFEFFphone,name,country,time_zone\r\n"${phone(0)}","Ana, Maria",,America/Sao_Paulo\r\n11987650001,"Bo ""B""",BR\r\n\r\n12345,X,,\r\n`;
    const created = await as(shop)('POST', '/campaigns', { name: 'Sheet', message: { type: 'text', body: 'Hi {{name}}' }, audience: { csv } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ recipients: 2 });
    expect(created.body.invalid_rows).toEqual([{ index: 2, phone: '12345', reason: 'invalid_phone', problem: 'missing_country' }]);
    const recipients = await as(shop)('GET', `/campaigns/${created.body.id as string}/recipients`);
    expect((recipients.body.data as Body[]).map((r) => r.to)).toEqual([phone(0), '+5511987650001']);
    expectError(await as(shop)('POST', '/campaigns', { name: 'Torn', message: { type: 'text', body: 'Hi' }, audience: { csv: `phone\n"${phone(0)}` } }), 400, 'invalid_request');
  });

  it('skips recipients opted out, suppressed or blocklisted at the moment of their send, and fills each message', async () => {
    const rows = [0, 1, 2, 3].map((n) => ({ phone: phone(100 + n), name: `Contact ${n}`, tags: ['spring'] }));
    expect((await as(shop)('POST', '/contacts/import', { rows })).status).toBe(200);
    await waitFor('the contacts projected', async () => ((await as(shop)('GET', '/contacts?tag=spring')).body.data as unknown[]).length === 4);
    const created = await as(shop)('POST', '/campaigns', { name: 'Tagged', message: { type: 'text', body: 'Hello {{name}}!' }, audience: { tag: 'spring' }, pace_per_minute: 600 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect(created.body.recipients).toBe(4);
    // After creation, before their turn: each of the first three stops being reachable in its own way.
    const contacts = (await as(shop)('GET', '/contacts?tag=spring')).body.data as { id: string; phone: string }[];
    const first = contacts.find((c) => c.phone === phone(100))!;
    expect((await as(shop)('POST', `/contacts/${first.id}/optout`)).status).toBe(200);
    expect((await as(shop)('POST', '/suppressions', { phone: phone(101) })).status).toBe(201);
    expect((await as(shop)('POST', '/blocklist', { phone: phone(102) })).status).toBe(201);

    expect((await as(shop)('POST', `/campaigns/${id}/start`)).body).toMatchObject({ status: 'running' });
    expectError(await as(shop)('POST', `/campaigns/${id}/start`), 409, 'campaign_state');
    expectError(await as(shop)('POST', `/campaigns/${id}/resume`), 409, 'campaign_state');
    const done = await until('the tagged campaign delivered', id, (p, body) => p.delivered === 1 && body.status === 'finished');
    expect(done).toMatchObject({ recipients: 4, pending: 0, queued: 1, sent: 1, delivered: 1, failed: 0, opted_out: 1, suppressed: 1, blocklisted: 1 });
    const skipped = (await as(shop)('GET', `/campaigns/${id}/recipients?status=skipped`)).body.data as Body[];
    expect(skipped.map((r) => [r.to, r.skip_reason]).sort()).toEqual([[phone(100), 'opted_out'], [phone(101), 'suppressed'], [phone(102), 'blocklisted']]);
    const all = (await as(shop)('GET', `/campaigns/${id}/recipients`)).body.data as Body[];
    const sent = all.filter((r) => r.status !== 'skipped');
    // Contacts imported together come in any order: the recipient's index is its own.
    expect(sent).toMatchObject([{ to: phone(103), instance_id: number, message_id: campaignMessageId(id, sent[0]!.index as number) }]);
    expect(['delivered', 'read']).toContain(sent[0]!.status);
    const jid = `${phone(103).slice(1)}@s.whatsapp.net`;
    const messages = await waitFor('the message in the inbox', async () => {
      const data = (await as(shop)('GET', `/conversations/${encodeURIComponent(jid)}/messages`)).body.data as Body[] | undefined;
      return data !== undefined && data.length > 0 ? data : undefined;
    });
    expect(messages).toMatchObject([{ message_id: sent[0]!.message_id, origin: 'campaign', body: 'Hello Contact 3!' }]);
  });

  it("keeps the sending hours in each contact's time zone, the campaign's for a contact without one", async () => {
    // A window of the campaign's zone (UTC) five to seven hours from now: now is outside it in UTC
    // and in UTC-3, inside it in UTC+6.
    const hour = (later: number) => `${String((new Date().getUTCHours() + later) % 24).padStart(2, '0')}:00`;
    const rows = [
      { phone: phone(600), name: 'East', tags: ['zoned'], time_zone: 'Etc/GMT-6' },
      { phone: phone(601), name: 'Here', tags: ['zoned'] },
      { phone: phone(602), name: 'West', tags: ['zoned'], time_zone: 'Etc/GMT+3' },
    ];
    expect((await as(shop)('POST', '/contacts/import', { rows })).status).toBe(200);
    await waitFor('the zoned contacts projected', async () => ((await as(shop)('GET', '/contacts?tag=zoned')).body.data as unknown[]).length === 3);
    const created = await as(shop)('POST', '/campaigns', {
      name: 'Zoned', message: { type: 'text', body: 'Hi' }, audience: { tag: 'zoned' }, pace_per_minute: 600,
      schedule: { time_zone: 'UTC', sending_hours: { from: hour(5), to: hour(7) } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await as(shop)('POST', `/campaigns/${id}/start`);
    const sent = await until('the contact within its hours sent', id, (p) => p.sent === 1);
    // The tick that took the first recipient excluded the other two in the same query.
    expect(sent).toMatchObject({ recipients: 3, queued: 1, pending: 2 });
    const recipients = (await as(shop)('GET', `/campaigns/${id}/recipients`)).body.data as Body[];
    expect(recipients.filter((r) => r.status !== 'pending').map((r) => r.to)).toEqual([phone(600)]);
    expect((await as(shop)('POST', `/campaigns/${id}/cancel`)).body).toMatchObject({ status: 'cancelled' });
  });

  it('pauses, resumes and cancels; a scheduled campaign waits for its time', async () => {
    const created = await as(shop)('POST', '/campaigns', { name: 'Paced', message: { type: 'text', body: 'Hi' }, audience: { list: list(30, 200) }, pace_per_minute: 600 });
    const id = created.body.id as string;
    expectError(await as(shop)('POST', `/campaigns/${id}/pause`), 409, 'campaign_state');
    await as(shop)('POST', `/campaigns/${id}/start`);
    await until('some recipients dispatched', id, (p) => p.queued >= 3);
    expect((await as(shop)('POST', `/campaigns/${id}/pause`)).body).toMatchObject({ status: 'paused', pause_reason: 'requested' });
    expectError(await as(shop)('POST', `/campaigns/${id}/pause`), 409, 'campaign_state');
    // A tick under way when the pause landed may still finish: what counts is that nothing follows it.
    const settled = await until('the paused campaign settled', id, () => true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const paused = await progress(id);
    expect(paused.queued).toBeLessThan(30);
    expect(paused.queued - settled.queued).toBeLessThanOrEqual(10);
    const later = await progress(id);
    expect(later.queued).toBe(paused.queued);
    expect((await as(shop)('POST', `/campaigns/${id}/resume`)).body).toMatchObject({ status: 'running', pause_reason: null });
    await until('the resumed campaign finished', id, (p, body) => p.sent === 30 && body.status === 'finished');
    expectError(await as(shop)('POST', `/campaigns/${id}/cancel`), 409, 'campaign_state');

    const second = await as(shop)('POST', '/campaigns', { name: 'Stopped', message: { type: 'text', body: 'Hi' }, audience: { list: list(30, 300) }, pace_per_minute: 120 });
    const stopped = second.body.id as string;
    await as(shop)('POST', `/campaigns/${stopped}/start`);
    await until('the first recipient dispatched', stopped, (p) => p.queued >= 1);
    expect((await as(shop)('POST', `/campaigns/${stopped}/cancel`)).body).toMatchObject({ status: 'cancelled' });
    const atCancel = await progress(stopped);
    expect(atCancel.pending).toBeGreaterThan(20);

    const scheduled = await as(shop)('POST', '/campaigns', { name: 'Later', message: { type: 'text', body: 'Hi' }, audience: { list: list(1, 400) }, schedule: { start_at: new Date(Date.now() + 3_600_000).toISOString() } });
    const later2 = scheduled.body.id as string;
    expect((await as(shop)('POST', `/campaigns/${later2}/start`)).body).toMatchObject({ status: 'scheduled' });
    expect((await as(shop)('POST', `/campaigns/${later2}/pause`)).body).toMatchObject({ status: 'paused' });
    expect((await as(shop)('POST', `/campaigns/${later2}/resume`)).body).toMatchObject({ status: 'scheduled' });
    expect((await progress(later2)).queued).toBe(0);
  });

  it('takes its image once (5 MB at most) and sends it to every recipient', async () => {
    const created = await as(shop)('POST', '/campaigns', { name: 'Picture', message: { type: 'image' }, audience: { list: list(2, 500) }, pace_per_minute: 600 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect(created.body.message).toEqual({ type: 'image', media: null, caption: null });
    expectError(await as(shop)('POST', `/campaigns/${id}/start`), 400, 'invalid_request');
    expectError(await as(shop)('POST', `/campaigns/${id}/image`, { media: { base64: Buffer.alloc(5_000_001, 1).toString('base64'), mimetype: 'image/png' } }), 413, 'media_too_large');
    const text = await as(shop)('POST', '/campaigns', { name: 'Words', message: { type: 'text', body: 'x' }, audience: { list: list(1, 600) } });
    expectError(await as(shop)('POST', `/campaigns/${text.body.id as string}/image`, { media: { base64: PNG } }), 400, 'invalid_request');
    const uploaded = await as(shop)('POST', `/campaigns/${id}/image`, { media: { base64: PNG, mimetype: 'image/png' } });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body.message).toMatchObject({ type: 'image', media: { mime_type: 'image/png' } });
    await as(shop)('POST', `/campaigns/${id}/start`);
    await until('both images sent', id, (p) => p.sent === 2);
    expectError(await as(shop)('POST', `/campaigns/${id}/image`, { media: { base64: PNG } }), 409, 'campaign_state');
  });

  it('is paused by the safety autopilot with campaign.paused when its recipients start blocking, before its number is banned', async () => {
    const connect = connectSandboxNumbers(clients.producer);
    const risky = await createAccount(clients.producer, { name: 'Risky', email: `risky-${env.id}@campaigns.test`, plan: 'pro', sandboxNumbers: 1 }, connect);
    await api.directory.until(() => canSignIn(api.directory, risky.account_id), 15_000);
    const riskyNumber = await waitFor('the number connected', async () => {
      const listed = (await as(risky)('GET', '/instances')).body.data as { id: string; status: string }[] | undefined;
      return listed?.[0]?.status === 'connected' ? listed[0].id : undefined;
    }, { timeoutMs: 30_000 });
    const events = await collectTopic(clients, topics.events, `${env.id}.autopilot.events`);
    try {
      // 20 recipients who read, then 30 who block the number (the sandbox's blockers end in 0404; it bans a number at 10 blocks).
      const blockers = Array.from({ length: 30 }, (_, i) => ({ to: `+55119${String(7100 + i)}0404` }));
      const created = await as(risky)('POST', '/campaigns', { name: 'Risky', message: { type: 'text', body: 'Hi' }, audience: { list: [...list(20, 500), ...blockers] }, pace_per_minute: 240 });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      expect((await as(risky)('POST', `/campaigns/${id}/start`)).status).toBe(200);
      const paused = await waitFor('the campaign paused', async () => {
        const { body } = await as(risky)('GET', `/campaigns/${id}`);
        return body.status === 'paused' ? body : undefined;
      }, { timeoutMs: 60_000, intervalMs: 100 });
      expect(paused.pause_reason).toBe('block_rate');
      const event = await waitFor('campaign.paused', async () => events.values.find((e: PublicEvent) => e.event_type === 'campaign.paused' && e.payload_json.includes(id)));
      const payload = JSON.parse(event.payload_json) as Record<string, unknown>;
      expect(payload).toMatchObject({ campaign_id: id, reason: 'block_rate', scope: 'number', instance_id: riskyNumber });
      expect((payload.figures as { blocked: number }).blocked).toBeGreaterThanOrEqual((payload.thresholds as { max_count: number }).max_count);
      // The number is not banned, and stays usable: nothing more of the campaign goes out.
      const sentAtPause = (paused.progress as Progress).sent + (paused.progress as Progress).failed;
      const numbers = (await as(risky)('GET', '/instances')).body.data as { id: string; status: string }[];
      expect(numbers.find((n) => n.id === riskyNumber)?.status).toBe('connected');
      expect(sentAtPause).toBeLessThan(50);
    } finally {
      await events.consumer.stop();
    }
  });
});
