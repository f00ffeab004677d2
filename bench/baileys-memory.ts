/**
 * Memory the Baileys connector holds per number (socket, caches, auth state), with 200 numbers
 * assigned and every socket open against a local WebSocket server that holds them (the network
 * cannot be reached from here, so no protocol traffic flows: this is the floor of a session, not
 * its weight under traffic).
 *
 * Each side runs in a child process of its own, measured after a forced GC before and after its
 * sockets are open: ours (BaileysNetwork: leases, auth state in Postgres, per-number caches) and
 * the baseline, the least a Baileys session can be: `makeWASocket` over an in-memory auth state
 * wrapped in Baileys' cacheable key store, nothing else. Physical anchor: WAHA's NOWEB engine
 * (Baileys-based) documents about 80-200 MB per session.
 *
 * A third child weighs *logged-in* sessions (BENCH_LOGGED_IN numbers, 20 by default): registered
 * creds, the socket told it is open (as after a login), a history sync of thousands of chats,
 * contacts, messages and lid mappings (`messaging-history.set`), then 10k received messages per
 * number handed over (`messages.upsert`, 100 a batch) and mapped to facts by the session. The
 * local server speaks no protocol, so these are emitted on each socket's own emitter, as Baileys
 * does once it decrypted them; no signal sessions or app state are built up, which real traffic
 * would add.
 *
 *   npm run bench:baileys-memory   (BENCH_NUMBERS=200 BENCH_LOGGED_IN=20)
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { initAuthCreds, makeCacheableSignalKeyStore, makeWASocket, proto, type SignalDataTypeMap, type SignalKeyStore, type WAMessage } from '@whiskeysockets/baileys';
import pg from 'pg';
import { pino } from 'pino';
import { BaileysNetwork, BaileysProtocol, leasePool } from '../connectors/baileys/index.js';
import { PINNED_WEB_VERSION } from '../connectors/baileys/web-version.js';
import { pairedBaileysNumber } from '../test/support/baileys-numbers.js';
import { NetworkServer } from '../test/support/network-server.js';
import { loggedIn } from '../test/support/received-messages.js';
import { benchSlice, runMain, until } from './support.js';

const NUMBERS = Number(process.env.BENCH_NUMBERS ?? 200);
const LOGGED_IN = Number(process.env.BENCH_LOGGED_IN ?? 20);
/** Per logged-in number: its history sync, and the messages it receives after it. */
const HISTORY = { chats: 3_000, contacts: 3_000, messages: 5_000, lids: 2_000 };
const RECEIVED = 10_000;
const MB = 1024 * 1024;

type Side = 'ours' | 'minimal' | 'loggedin';

interface Measured {
  readonly side: Side;
  readonly rssBefore: number;
  readonly rssAfter: number;
  readonly heapBefore: number;
  readonly heapAfter: number;
}

/** Sends a message to the parent and resolves once it is written (the child exits right after). */
function tell(message: object): Promise<void> {
  return new Promise((resolve, reject) => process.send!(message, undefined, {}, (err) => (err ? reject(err) : resolve())));
}

function measure(): { rss: number; heap: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

const ids = Array.from({ length: NUMBERS }, (_, i) => `inst_mem${i}`);

async function ours(url: string, databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const logger = pino({ level: 'silent' });
  const unused = (): never => {
    throw new Error('no traffic in this bench');
  };
  const mapping = new BaileysProtocol({ pool, logger, media: { store: unused }, mediaOf: unused, otp: { open: unused } });
  const network = new BaileysNetwork({
    pool,
    leasePool: leasePool(databaseUrl, 5_000, logger),
    logger,
    mapping,
    socket: { url: (id) => url.replace('{instance_id}', id), connectTimeoutMs: 600_000, version: () => Promise.resolve(PINNED_WEB_VERSION), reconnectBaseMs: 1_000, reconnectMaxMs: 60_000, leaseRenewMs: 5_000, baileysLogLevel: 'silent' },
  });
  await network.prepare();
  const states = [];
  for (const id of ids) states.push(await pairedBaileysNumber(pool, id, { account: 'acc_mem', project: 'prj_mem' }));
  const before = measure();
  for (const state of states) await network.open(state, { emit: async () => undefined });
  await tell({ opened: true });
  await new Promise((resolve) => process.once('message', resolve));
  const after = measure();
  await tell({ side: 'ours', rssBefore: before.rss, rssAfter: after.rss, heapBefore: before.heap, heapAfter: after.heap } satisfies Measured);
}

const text = (id: string, from: string, at: number): WAMessage =>
  proto.WebMessageInfo.fromObject({ key: { remoteJid: from, fromMe: false, id }, messageTimestamp: at, pushName: 'Cliente', message: { conversation: `mensagem ${id}` } }) as WAMessage;

async function loggedInSessions(url: string, databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const logger = pino({ level: 'silent' });
  const unused = (): never => {
    throw new Error('no media or sends in this bench');
  };
  const mapping = new BaileysProtocol({ pool, logger, media: { store: unused }, mediaOf: unused, otp: { open: unused } });
  const network = new BaileysNetwork({
    pool,
    leasePool: leasePool(databaseUrl, 5_000, logger),
    logger,
    mapping,
    socket: { url: (id) => url.replace('{instance_id}', id), connectTimeoutMs: 600_000, reconnectBaseMs: 1_000, reconnectMaxMs: 60_000, leaseRenewMs: 5_000, baileysLogLevel: 'silent', version: () => Promise.resolve(PINNED_WEB_VERSION) },
  });
  await network.prepare();
  const numbers = ids.slice(0, LOGGED_IN).map((id) => `${id}_in`);
  const states = [];
  // Registered creds with an identity: each session logs in at once.
  for (const id of numbers) states.push(await pairedBaileysNumber(pool, id, { account: 'acc_mem', project: 'prj_mem' }));
  const before = measure();
  let mapped = 0;
  for (const state of states) await network.open(state, { emit: async (fact) => void (fact.kind === 'inbound' && mapped++) });
  await tell({ opened: true });
  await new Promise((resolve) => process.once('message', resolve));
  for (const [n, id] of numbers.entries()) {
    const socket = network.sessionOf(id)!.liveSocket!;
    loggedIn(socket);
    const jid = (i: number) => `55119${String(n).padStart(2, '0')}${String(i).padStart(6, '0')}@s.whatsapp.net`;
    socket.ev.emit('messaging-history.set', {
      chats: Array.from({ length: HISTORY.chats }, (_, i) => ({ id: jid(i), conversationTimestamp: 1_764_000_000 + i, unreadCount: i % 3, name: `Chat ${i}` })),
      contacts: Array.from({ length: HISTORY.contacts }, (_, i) => ({ id: jid(i), name: `Contato ${i}`, notify: `C${i}` })),
      messages: Array.from({ length: HISTORY.messages }, (_, i) => text(`H${n}-${i}`, jid(i % HISTORY.chats), 1_763_000_000 + i)),
      lidPnMappings: Array.from({ length: HISTORY.lids }, (_, i) => ({ lid: `${900_000_000 + n * 10_000 + i}@lid`, pn: jid(i) })),
      isLatest: true,
      syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    });
    for (let i = 0; i < RECEIVED; i += 100) {
      socket.ev.emit('messages.upsert', { type: 'notify', messages: Array.from({ length: 100 }, (_, k) => text(`R${n}-${i + k}`, jid((i + k) % HISTORY.chats), 1_764_100_000 + i + k)) });
    }
  }
  await until(`${LOGGED_IN * RECEIVED} received messages mapped`, () => mapped >= LOGGED_IN * RECEIVED, 600_000);
  const after = measure();
  await tell({ side: 'loggedin', rssBefore: before.rss, rssAfter: after.rss, heapBefore: before.heap, heapAfter: after.heap } satisfies Measured);
}

async function minimal(url: string): Promise<void> {
  const before = measure();
  for (const id of ids) {
    const values = new Map<string, unknown>();
    const keys: SignalKeyStore = {
      get: async <T extends keyof SignalDataTypeMap>(type: T, wanted: string[]) =>
        Object.fromEntries(wanted.flatMap((k) => (values.has(`${type}:${k}`) ? [[k, values.get(`${type}:${k}`) as SignalDataTypeMap[T]]] : []))),
      set: async (data) => {
        for (const [type, entries] of Object.entries(data)) for (const [k, v] of Object.entries(entries ?? {})) values.set(`${type}:${k}`, v);
      },
    };
    const creds = { ...initAuthCreds(), me: { id: '5511988887777:3@s.whatsapp.net' } };
    makeWASocket({ waWebSocketUrl: url.replace('{instance_id}', id), auth: { creds, keys: makeCacheableSignalKeyStore(keys) }, logger: pino({ level: 'silent' }), connectTimeoutMs: 600_000 });
  }
  await tell({ opened: true });
  await new Promise((resolve) => process.once('message', resolve));
  const after = measure();
  await tell({ side: 'minimal', rssBefore: before.rss, rssAfter: after.rss, heapBefore: before.heap, heapAfter: after.heap } satisfies Measured);
}

/** Runs one side in a child process; answers what it measured once all its sockets are open. */
async function side(name: Side, server: NetworkServer, env: Record<string, string>, sockets = NUMBERS): Promise<Measured> {
  const child = fork(fileURLToPath(import.meta.url), [name, server.template()], { env: { ...process.env, ...env }, execArgv: ['--expose-gc'] });
  const opened = server.connections.length;
  const measured = new Promise<Measured>((resolve, reject) => {
    child.on('message', (message: { opened?: boolean } & Partial<Measured>) => {
      if (message.opened) {
        until(`${sockets} sockets of ${name}`, () => server.connections.length - opened >= sockets, 120_000).then(
          () => child.send('measure'),
          reject,
        );
      } else resolve(message as Measured);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited ${String(code)}`)));
  });
  try {
    return await measured;
  } finally {
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const [role, url] = process.argv.slice(2);
  if (role === 'ours') return ours(url!, process.env.DATABASE_URL!);
  if (role === 'minimal') return minimal(url!);
  if (role === 'loggedin') return loggedInSessions(url!, process.env.DATABASE_URL!);

  const slice = await benchSlice('baileysmem');
  const server = await NetworkServer.start();
  try {
    const results = [await side('minimal', server, slice.env), await side('ours', server, slice.env)];
    const per = (m: Measured) => ({ rss: (m.rssAfter - m.rssBefore) / NUMBERS / 1024, heap: (m.heapAfter - m.heapBefore) / NUMBERS / 1024 });
    for (const m of results) {
      const p = per(m);
      console.log(
        `${m.side.padEnd(8)} ${NUMBERS} sockets open: RSS ${(m.rssBefore / MB).toFixed(0)} → ${(m.rssAfter / MB).toFixed(0)} MB, heap ${(m.heapBefore / MB).toFixed(0)} → ${(m.heapAfter / MB).toFixed(0)} MB; per number ${p.rss.toFixed(0)} KB RSS, ${p.heap.toFixed(0)} KB heap`,
      );
    }
    const [base, our] = results.map(per) as [{ rss: number; heap: number }, { rss: number; heap: number }];
    console.log(`ours / minimal per number: heap ×${(our.heap / base.heap).toFixed(2)}, RSS ×${(our.rss / base.rss).toFixed(2)}`);
    console.log(`anchor: WAHA NOWEB documents ~80-200 MB per session; ours holds ${(our.rss / 1024).toFixed(2)} MB RSS per idle number here`);
    const logged = await side('loggedin', server, slice.env, LOGGED_IN);
    const each = { rss: (logged.rssAfter - logged.rssBefore) / LOGGED_IN / MB, heap: (logged.heapAfter - logged.heapBefore) / LOGGED_IN / MB };
    console.log(
      `logged in: ${LOGGED_IN} sessions, each with a history sync (${HISTORY.chats} chats, ${HISTORY.contacts} contacts, ${HISTORY.messages} messages, ${HISTORY.lids} lids) and ${RECEIVED} received messages mapped: RSS ${(logged.rssBefore / MB).toFixed(0)} → ${(logged.rssAfter / MB).toFixed(0)} MB, heap ${(logged.heapBefore / MB).toFixed(0)} → ${(logged.heapAfter / MB).toFixed(0)} MB; per session ${each.rss.toFixed(2)} MB RSS, ${each.heap.toFixed(2)} MB heap`,
    );
    console.log(`anchor: WAHA NOWEB ~80-200 MB per session; a logged-in session of ours holds ${each.rss.toFixed(2)} MB RSS after its history sync and ${RECEIVED} messages`);
  } finally {
    await server.close();
    await slice.dispose();
  }
}

runMain(main);
