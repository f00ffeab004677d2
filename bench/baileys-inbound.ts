/**
 * Memory across 100k received messages mapped by the real mapping code (`mapInbound`): Baileys
 * users report memory that grows per message; this shows whether ours does. Messages are a mix
 * of texts, replies with mentions, group messages, lid senders (a new lid every time, learnt into
 * a lid cache bounded like the connector's), own sends from the phone, media (no download: the
 * store answers null at once), wrapped messages, reactions, locations, polls and poll votes
 * decrypted against a poll; each is decoded from its protobuf bytes as the socket hands it over.
 *
 * Baseline: the least the same work can be, decoding the same bytes with no mapping. Each side
 * runs in a child process of its own over the same corpus of bytes (built before measuring),
 * warmed up first; heap and RSS are printed before (after a forced GC), right after the last
 * message, and after a forced GC, with ours as ratios of the baseline.
 *
 *   npm run bench:baileys-inbound   (BENCH_MESSAGES=100000)
 */
import { createHash } from 'node:crypto';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { mapInbound, type InboundContext } from '../connectors/baileys/inbound.js';
import type { KnownPoll } from '../connectors/baileys/poll-store.js';
import { boundedCache } from '../connectors/baileys/ttl-cache.js';
import { encryptVote } from '../test/support/poll-vote.js';
import { runMain } from './support.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const WARM_UP = Math.min(10_000, MESSAGES);
/** The connector's lid cache per number (`LIDS_KEPT` in connectors/baileys/protocol.ts). */
const LIDS_KEPT = 10_000;
const MB = 1024 * 1024;
const OWN = { jid: '5511900000000@s.whatsapp.net', lid: '900000000000001@lid', name: 'Padaria' };
const GROUP = '120363040000000000@g.us';
const SECRET = createHash('sha256').update('bench poll').digest();
const POLL: KnownPoll = { creatorJid: OWN.jid, secret: SECRET, options: ['Sim', 'Não', 'Talvez'] };

type Side = 'baseline' | 'mapping';
interface Usage {
  readonly rss: number;
  readonly heap: number;
}
interface Measured {
  readonly side: Side;
  readonly seconds: number;
  readonly results: number;
  readonly before: Usage;
  readonly after: Usage;
  readonly afterGc: Usage;
}

/** The protobuf bytes of message `i`: the shapes cycle, ids and senders never repeat. */
function bytesOf(i: number): Uint8Array {
  const phone = `55119${String(10_000_000 + (i % 9_000_000)).padStart(8, '0')}@s.whatsapp.net`;
  const lid = `${String(100_000_000_000_000 + i)}@lid`;
  const key = { remoteJid: phone, fromMe: false, id: `W${i}` };
  const shapes = [
    { key, pushName: 'Ana', message: { conversation: `mensagem ${i}` } },
    { key, message: { extendedTextMessage: { text: `resposta ${i} @5511900000000`, contextInfo: { stanzaId: `Q${i}`, participant: OWN.jid, mentionedJid: [OWN.jid] } } } },
    { key: { remoteJid: GROUP, participant: lid, id: `W${i}` }, pushName: 'Bruno', message: { conversation: `no grupo ${i}` } },
    { key: { remoteJid: lid, id: `W${i}` }, message: { conversation: `por lid ${i}` } },
    { key: { ...key, fromMe: true }, message: { conversation: `do celular ${i}` } },
    { key, message: { imageMessage: { caption: `foto ${i}`, mimetype: 'image/jpeg', fileLength: 52_000, mediaKey: SECRET, directPath: `/v/t62/${i}` } } },
    { key, message: { ephemeralMessage: { message: { extendedTextMessage: { text: `some ${i}` } } } } },
    { key, message: { reactionMessage: { key: { remoteJid: phone, fromMe: true, id: `OUR${i}` }, text: '👍' } } },
    { key, message: { locationMessage: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Loja' } } },
    { key, message: { messageContextInfo: { messageSecret: SECRET }, pollCreationMessageV3: { name: `Enquete ${i}`, options: [{ optionName: 'A' }, { optionName: 'B' }], selectableOptionsCount: 1 } } },
    { key, message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: phone, fromMe: true, id: 'POLL' }, vote: encryptVote({ secret: SECRET, pollId: 'POLL', creatorJid: OWN.jid, voterJid: phone, chosen: ['Sim'] }) } } },
  ];
  return proto.WebMessageInfo.encode(proto.WebMessageInfo.fromObject({ messageTimestamp: 1_764_000_000 + i, ...shapes[i % shapes.length]! })).finish();
}

function usage(gc: boolean): Usage {
  if (gc) (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heap: heapUsed };
}

/** What one side does with each decoded message (true for a result): read its id (baseline), or map it as the connector does (a fact). */
function workOf(side: Side): (message: WAMessage) => Promise<boolean> {
  if (side === 'baseline') return async (message) => message.key.id != null;
  const lids = boundedCache<string>(LIDS_KEPT);
  const ctx: InboundContext = {
    own: OWN,
    phoneOfLid: (lid) => lids.get(lid),
    isOurSend: async () => false,
    poll: async (id) => (id === 'POLL' ? POLL : undefined),
    rememberPoll: async () => undefined,
    storeMedia: async () => null,
  };
  let seen = 0;
  return async (message) => {
    // Every other lid sender is learnt, as the socket's lid-mapping updates would teach the connector.
    const remote = message.key.remoteJid ?? '';
    if (remote.endsWith('@lid') && seen++ % 2 === 0) lids.set(remote, `55118${remote.slice(7, 15)}@s.whatsapp.net`);
    return (await mapInbound(message, ctx)).kind === 'fact';
  };
}

/** One side, in a child process: the corpus, a warm-up, then every message decoded and worked on. */
async function measureSide(side: Side): Promise<Measured> {
  const corpus = Array.from({ length: MESSAGES }, (_, i) => bytesOf(i));
  const work = workOf(side);
  for (let i = 0; i < WARM_UP; i++) await work(proto.WebMessageInfo.decode(corpus[i]!) as WAMessage);
  const before = usage(true);
  const started = performance.now();
  let results = 0;
  for (const bytes of corpus) if (await work(proto.WebMessageInfo.decode(bytes) as WAMessage)) results++;
  const seconds = (performance.now() - started) / 1000;
  const after = usage(false);
  return { side, seconds, results, before, after, afterGc: usage(true) };
}

function inChild(side: Side): Promise<Measured> {
  const child = fork(fileURLToPath(import.meta.url), [side], { execArgv: ['--expose-gc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message as Measured));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`${side} exited ${String(code)}`))));
  });
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const ratio = (ours: number, base: number) => `×${(ours / base).toFixed(2)}`;

function report(m: Measured): void {
  const retained = (m.afterGc.heap - m.before.heap) / MESSAGES;
  console.log(
    `${m.side.padEnd(8)} ${MESSAGES} messages in ${m.seconds.toFixed(2)} s (${m.results} results): ` +
      `heap ${mb(m.before.heap)} → ${mb(m.after.heap)} → ${mb(m.afterGc.heap)} after GC; ` +
      `RSS ${mb(m.before.rss)} → ${mb(m.after.rss)} → ${mb(m.afterGc.rss)} after GC; retained ${retained.toFixed(1)} B/message`,
  );
}

async function main(): Promise<void> {
  const role = process.argv[2];
  if (role === 'baseline' || role === 'mapping') {
    const measured = await measureSide(role);
    await new Promise<void>((resolve, reject) => process.send!(measured, undefined, {}, (err) => (err ? reject(err) : resolve())));
    return;
  }
  const base = await inChild('baseline');
  const ours = await inChild('mapping');
  report(base);
  report(ours);
  console.log(
    `mapping / baseline: time ${ratio(ours.seconds, base.seconds)}; heap right after ${ratio(ours.after.heap, base.after.heap)}, after GC ${ratio(ours.afterGc.heap, base.afterGc.heap)}; ` +
      `RSS right after ${ratio(ours.after.rss, base.after.rss)}, after GC ${ratio(ours.afterGc.rss, base.afterGc.rss)}`,
  );
}

runMain(main);
