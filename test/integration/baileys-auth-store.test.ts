import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BufferJSON, Curve, makeCacheableSignalKeyStore, proto, signedKeyPair, type SignalDataSet } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuthStore } from '../../connectors/baileys/auth-store.js';
import { baileysDdl } from '../../connectors/baileys/tables.js';
import { repoRoot } from '../../shared/repo-root.js';
import { runDdl } from '../../shared/ddl.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';

const asText = (value: unknown) => JSON.stringify(value, BufferJSON.replacer);

/**
 * The Baileys auth state in Postgres (issue 12 item 1), with keys made by Baileys' own functions:
 * creds and every key type round-trip through a new store; a key set is written whole or not at
 * all and a failed write rejects; a writer SIGKILLed between writes loses none it had finished.
 */
describe('the Baileys auth store in Postgres', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await runDdl(db.pool, 'baileys-auth', baileysDdl);
  });

  afterAll(async () => {
    await db?.dispose();
  });

  it('round-trips the creds and every key type through a fresh store', async () => {
    const first = await PostgresAuthStore.open(db.pool, 'inst_roundtrip');
    const { creds } = first;
    expect(creds.noiseKey.public).toHaveLength(32);
    creds.me = { id: '5511988887777:3@s.whatsapp.net', lid: '81234567890123:3@lid', name: 'Padaria' };
    creds.registered = true;
    await first.saveCreds();

    const preKeys = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [String(i + 1), Curve.generateKeyPair()]));
    const signed = signedKeyPair(creds.signedIdentityKey, 7);
    const appStateKey = proto.Message.AppStateSyncKeyData.fromObject({ keyData: randomBytes(32), fingerprint: { rawId: 9, currentIndex: 1, deviceIndexes: [0, 1] }, timestamp: 1_700_000_000 });
    const data: SignalDataSet = {
      'pre-key': { ...preKeys, signed: signed.keyPair },
      session: { '5511988887777.0': randomBytes(120) },
      'sender-key': { '120363@g.us::5511988887777::0': randomBytes(80) },
      'sender-key-memory': { '120363@g.us': { '5511988887777:0@s.whatsapp.net': true } },
      'app-state-sync-key': { AAAAAJa9: appStateKey },
      'app-state-sync-version': { regular: { version: 3, hash: randomBytes(128), indexValueMap: { abc: { valueMac: randomBytes(32) } } } },
      'lid-mapping': { '5511988887777': '81234567890123' },
      'device-list': { '5511988887777': ['0', '3'] },
      tctoken: { '5511988887777@s.whatsapp.net': { token: randomBytes(16), timestamp: '1700000000' } },
      'identity-key': { '5511988887777.0': randomBytes(33) },
    };
    await first.keys.set(data);

    const again = await PostgresAuthStore.open(db.pool, 'inst_roundtrip');
    expect(asText(again.creds)).toBe(asText(creds));
    for (const [type, entries] of Object.entries(data)) {
      const ids = Object.keys(entries);
      const read = await again.keys.get(type as 'session', ids);
      expect(asText(read), type).toBe(asText(entries));
    }
    const syncKey = (await again.keys.get('app-state-sync-key', ['AAAAAJa9'])).AAAAAJa9;
    expect(syncKey).toBeInstanceOf(proto.Message.AppStateSyncKeyData);

    // Read through Baileys' own cache, as the socket does; a null removes.
    const cached = makeCacheableSignalKeyStore(again.keys, pino({ level: 'silent' }));
    expect(asText(await cached.get('pre-key', ['1']))).toBe(asText({ 1: preKeys['1'] }));
    await cached.set({ 'pre-key': { '1': null } });
    expect(Object.keys(await (await PostgresAuthStore.open(db.pool, 'inst_roundtrip')).keys.get('pre-key', ['1', '2']))).toEqual(['2']);
    // Another number's state is its own.
    expect(await (await PostgresAuthStore.open(db.pool, 'inst_other')).keys.get('pre-key', ['2'])).toEqual({});
  });

  it('writes a key set whole or not at all, and rejects a write it could not make', async () => {
    const store = await PostgresAuthStore.open(db.pool, 'inst_atomic');
    await store.keys.set({ 'pre-key': { keep: Curve.generateKeyPair() } });
    // The set removes `keep`, then fails on a key id Postgres cannot store (a NUL): nothing of it stays.
    const failing = store.keys.set({ 'pre-key': { keep: null, 'bad\u0000id': Curve.generateKeyPair() }, session: { fresh: randomBytes(8) } });
    await expect(failing).rejects.toThrow();
    expect(Object.keys(await store.keys.get('pre-key', ['keep']))).toEqual(['keep']);
    expect(await store.keys.get('session', ['fresh'])).toEqual({});
    await store.keys.set({ 'pre-key': { keep: null }, session: { fresh: randomBytes(8) } });
    expect(await store.keys.get('pre-key', ['keep'])).toEqual({});
    expect(Object.keys(await store.keys.get('session', ['fresh']))).toEqual(['fresh']);
  });

  it('loses no finished key write when the writer is SIGKILLed between writes', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'test', 'support', 'auth-writer.js')], {
      env: { ...process.env, DATABASE_URL: db.url, INSTANCE_ID: 'inst_crash' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: number[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) acked.push(Number(line));
    });
    await waitFor('40 finished writes', async () => (acked.length >= 40 ? true : undefined), { timeoutMs: 60_000 });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const store = await PostgresAuthStore.open(db.pool, 'inst_crash');
    const last = acked[acked.length - 1]!;
    for (let i = 0; i <= last + 1; i++) {
      const preKeys = Object.keys(await store.keys.get('pre-key', [`${i}-a`, `${i}-b`]));
      const sessions = Object.keys(await store.keys.get('session', [`peer-${i}.0`]));
      const found = preKeys.length + sessions.length;
      // Every finished write is all there; the one in flight at the kill is all there or not at all.
      if (i <= last) expect(found, `write ${i}`).toBe(3);
      else expect([0, 3], `write ${i}`).toContain(found);
    }
  });
});
