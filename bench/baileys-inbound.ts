/**
 * Memory across 100k received messages mapped by the real mapping code (`mapInbound`): Baileys
 * users report memory that grows per message; this shows whether ours does. Messages are a mix
 * of texts, replies with mentions, group messages, lid senders (a new lid every message, learnt
 * into the connector's bounded lid cache), reactions, locations and poll votes decrypted against
 * a poll, each decoded from its protobuf bytes as the socket hands it over.
 *
 * Baseline: the same decoding of the same bytes with no mapping. Both run in this process, one
 * after the other, each measured after a forced GC before and after; printed with the growth per
 * message. Needs `--expose-gc` (the npm script passes it).
 *
 *   npm run bench:baileys-inbound   (BENCH_MESSAGES=100000)
 */
import { randomBytes } from 'node:crypto';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { boundedCache } from '../connectors/baileys/ttl-cache.js';
import { mapInbound, type InboundContext } from '../connectors/baileys/inbound.js';
import type { KnownPoll } from '../connectors/baileys/poll-store.js';
import { encryptVote } from '../test/support/poll-vote.js';
import { runMain } from './support.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const MB = 1024 * 1024;
const OWN = { jid: '5511900000000@s.whatsapp.net', lid: '900000000000001@lid', name: 'Padaria' };
const GROUP = '120363040000000000@g.us';
const SECRET = randomBytes(32);
const POLL: KnownPoll = { creatorJid: OWN.jid, secret: SECRET, options: ['Sim', 'Não', 'Talvez'] };

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
    { key, message: { reactionMessage: { key: { remoteJid: phone, fromMe: true, id: `OUR${i}` }, text: '👍' } } },
    { key, message: { locationMessage: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Loja' } } },
    { key, message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: phone, fromMe: true, id: 'POLL' }, vote: encryptVote({ secret: SECRET, pollId: 'POLL', creatorJid: OWN.jid, voterJid: phone, chosen: ['Sim'] }) } } },
  ];
  return proto.WebMessageInfo.encode(proto.WebMessageInfo.fromObject({ messageTimestamp: 1_764_000_000 + i, ...shapes[i % shapes.length]! })).finish();
}

function measure(): { rss: number; heap: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

async function run(label: string, work: (message: WAMessage, i: number) => Promise<unknown>): Promise<void> {
  const before = measure();
  const started = performance.now();
  let mapped = 0;
  let half = before;
  for (let i = 0; i < MESSAGES; i++) {
    const message = proto.WebMessageInfo.decode(bytesOf(i)) as WAMessage;
    if ((await work(message, i)) !== undefined) mapped++;
    if (i === MESSAGES / 2) half = measure();
  }
  const seconds = (performance.now() - started) / 1000;
  const after = measure();
  console.log(
    `${label.padEnd(9)} ${MESSAGES} messages in ${seconds.toFixed(1)} s (${mapped} results): RSS ${(before.rss / MB).toFixed(1)} → ${(after.rss / MB).toFixed(1)} MB, heap ${(before.heap / MB).toFixed(1)} → ${(after.heap / MB).toFixed(1)} MB; heap growth ${((after.heap - before.heap) / MESSAGES).toFixed(2)} B/message overall, ${((after.heap - half.heap) / (MESSAGES / 2)).toFixed(2)} B/message over the second half`,
  );
}

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) throw new Error('run with node --expose-gc');
  const lids = boundedCache<string>(10_000);
  const ctx: InboundContext = {
    own: OWN,
    phoneOfLid: (lid) => lids.get(lid),
    isOurSend: async () => false,
    poll: async (id) => (id === 'POLL' ? POLL : undefined),
    rememberPoll: async () => undefined,
    storeMedia: async () => null,
  };
  // Warm both paths once, so the first measurement is not the JIT's.
  await run('warm-up', async (message) => mapInbound(message, ctx));
  await run('baseline', async (message) => message.key.id);
  const mapping = async (message: WAMessage, i: number) => {
    if (i % 7 === 3) lids.set(message.key.remoteJid!, `55118${String(i).padStart(8, '0')}@s.whatsapp.net`);
    return mapInbound(message, ctx);
  };
  // The first pass fills the bounded lid cache; the second shows the steady state.
  await run('mapping', mapping);
  await run('again', mapping);
  console.log(`lid cache bounded at ${lids.maxSize}: holds ${lids.size}`);
}

runMain(main);
