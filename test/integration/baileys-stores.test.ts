import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Curve, generateWAMessageContent, proto } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuthStore } from '../../connectors/baileys/auth-store.js';
import { LeaseLost, NumberLeases } from '../../connectors/baileys/lease.js';
import { PollStore } from '../../connectors/baileys/poll-store.js';
import { SentMessages } from '../../connectors/baileys/sent-messages.js';
import { baileysDdl, purgePolls, purgeSentMessages } from '../../connectors/baileys/tables.js';
import { runDdl } from '../../shared/ddl.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * What the Baileys connector keeps in Postgres besides the auth state: our sent messages (for
 * the network's retry requests and to know echoes), polls with their secrets, and the leases that
 * fence a number's writes to the worker holding it.
 */
describe('the Baileys stores in Postgres', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await runDdl(db.pool, 'baileys', baileysDdl);
  });

  afterAll(async () => {
    await db?.dispose();
  });

  it('gives back a sent message byte for byte; keeps an OTP code bubble as ours without its content; purges after 7 days', async () => {
    const sent = new SentMessages(db.pool);
    const message = proto.Message.fromObject({ extendedTextMessage: { text: 'Olá', contextInfo: { stanzaId: 'Q1' } }, messageContextInfo: { messageSecret: randomBytes(32) } });
    await sent.remember('inst_s', 'W1', message);
    const back = await sent.get('inst_s', 'W1');
    expect(Buffer.from(proto.Message.encode(back!).finish())).toEqual(Buffer.from(proto.Message.encode(message).finish()));
    await sent.remember('inst_s', 'CODE1', null);
    expect(await sent.get('inst_s', 'CODE1')).toBeUndefined();
    expect(await sent.isOurs('inst_s', 'CODE1')).toBe(true);
    expect(await sent.isOurs('inst_s', 'NOT-OURS')).toBe(false);
    expect(await sent.isOurs('inst_other', 'W1')).toBe(false);
    await db.pool.query(`UPDATE baileys.sent_messages SET sent_at = now() - interval '8 days' WHERE wa_message_id = 'W1'`);
    expect(await purgeSentMessages(db.pool)).toBe(1);
    expect(await sent.isOurs('inst_s', 'W1')).toBe(false);
    expect(await sent.isOurs('inst_s', 'CODE1')).toBe(true);
  });

  it('gives back a media message as Baileys generated it, byte for byte; a second remember of the same id keeps one row', async () => {
    const sent = new SentMessages(db.pool);
    const document = await generateWAMessageContent(
      { document: { stream: Readable.from([randomBytes(2048)]) }, mimetype: 'application/pdf', fileName: 'nota.pdf', caption: 'Sua nota' },
      { logger: pino({ level: 'silent' }), upload: async () => ({ mediaUrl: 'https://mmg.test/d', directPath: '/v/d' }) },
    );
    const bytes = Buffer.from(proto.Message.encode(document).finish());
    await sent.remember('inst_m', 'DOC1', document);
    await sent.remember('inst_m', 'DOC1', document);
    const back = await sent.get('inst_m', 'DOC1');
    expect(Buffer.from(proto.Message.encode(back!).finish())).toEqual(bytes);
    expect(Number(back!.documentMessage!.fileLength)).toBe(2048);
    expect(Buffer.from(back!.documentMessage!.mediaKey!)).toEqual(Buffer.from(document.documentMessage!.mediaKey!));
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM baileys.sent_messages WHERE instance_id = 'inst_m'`);
    expect(rows[0]!.n).toBe(1);

    await db.pool.query(`UPDATE baileys.sent_messages SET sent_at = now() - interval '6 days' WHERE wa_message_id = 'DOC1'`);
    expect(await purgeSentMessages(db.pool)).toBe(0);
    expect(await sent.get('inst_m', 'DOC1')).toBeDefined();
  });

  it('keeps a poll’s creator, secret and options per number; purges after 90 days', async () => {
    const polls = new PollStore(db.pool);
    const secret = randomBytes(32);
    await polls.remember('inst_p', 'POLL1', { creatorJid: '5511900000000@s.whatsapp.net', secret, options: ['Sim', 'Não'] });
    expect(await polls.find('inst_p', 'POLL1')).toEqual({ creatorJid: '5511900000000@s.whatsapp.net', secret, options: ['Sim', 'Não'] });
    expect(await polls.find('inst_q', 'POLL1')).toBeUndefined();
    // The same poll seen again (our echo, a history sync) keeps what was first remembered.
    await polls.remember('inst_p', 'POLL1', { creatorJid: 'other@s.whatsapp.net', secret: randomBytes(32), options: ['X'] });
    expect(await polls.find('inst_p', 'POLL1')).toEqual({ creatorJid: '5511900000000@s.whatsapp.net', secret, options: ['Sim', 'Não'] });
    await polls.remember('inst_p', 'POLL2', { creatorJid: '5511900000000@s.whatsapp.net', secret: randomBytes(32), options: ['A'] });
    await db.pool.query(`UPDATE baileys.polls SET created_at = now() - interval '91 days' WHERE wa_message_id = 'POLL1'`);
    await db.pool.query(`UPDATE baileys.polls SET created_at = now() - interval '89 days' WHERE wa_message_id = 'POLL2'`);
    expect(await purgePolls(db.pool)).toBe(1);
    expect(await polls.find('inst_p', 'POLL1')).toBeUndefined();
    expect(await polls.find('inst_p', 'POLL2')).toMatchObject({ options: ['A'] });
  });

  it('fences auth writes by lease: once another worker holds the number, the old one can write nothing', async () => {
    const leases = new NumberLeases(db.pool, 60_000);
    const first = await leases.acquire('inst_f', 'worker-a');
    expect(first).toMatchObject({ generation: 1, owner: 'worker-a' });
    expect(await leases.acquire('inst_f', 'worker-b')).toBeUndefined();
    const writerA = await PostgresAuthStore.open(db.pool, 'inst_f', first);
    await writerA.keys.set({ 'pre-key': { '1': Curve.generateKeyPair() } });

    // Worker A stopped renewing: its lease ran out and B took the number.
    await db.pool.query(`UPDATE baileys.leases SET expires_at = now() - interval '1 second' WHERE instance_id = 'inst_f'`);
    const second = await leases.acquire('inst_f', 'worker-b');
    expect(second).toMatchObject({ generation: 2, owner: 'worker-b' });
    expect(await leases.renew(first!)).toBe(false);
    await expect(writerA.keys.set({ 'pre-key': { '2': Curve.generateKeyPair() } })).rejects.toBeInstanceOf(LeaseLost);
    await expect(writerA.saveCreds()).rejects.toBeInstanceOf(LeaseLost);

    const writerB = await PostgresAuthStore.open(db.pool, 'inst_f', second);
    await writerB.keys.set({ 'pre-key': { '3': Curve.generateKeyPair() } });
    expect(Object.keys(await writerB.keys.get('pre-key', ['1', '2', '3']))).toEqual(['1', '3']);
    await leases.release(second!);
    expect(await leases.acquire('inst_f', 'worker-a')).toMatchObject({ generation: 3 });
  });
});
