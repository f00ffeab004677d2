/**
 * Campaign benchmark, in one run on this machine (`cli all`, 4 sandbox numbers): recipients
 * dispatched per second by one campaign (its send commands on the log, from the first to the last)
 * against the plain API path (`POST /messages/text` accepted per second, 64 connections, several
 * keys so the rate limit does not bind) over the same recipients; prints both and the ratio.
 *
 *   npm run bench:campaign      (BENCH_RECIPIENTS=10000, BENCH_SECONDS=10)
 */
import path from 'node:path';
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import { Pool, request } from 'undici';
import { loadSchemaFiles } from '../schemas/load.js';
import type { SendCommand } from '../schemas/records.js';
import { AvroSerdes } from '../schemas/serde.js';
import { loadConfig } from '../stack/config.js';
import { repoRoot } from '../shared/repo-root.js';
import { createConsumer, createKafka, topics, TopicSerdes } from '../topics/index.js';
import { benchSlice, numbersConnected, run, runMain, start, stop, until } from './support.js';

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 64;
const cli = path.join(repoRoot, 'dist', 'stack', 'cli.js');

async function main(): Promise<void> {
  const slice = await benchSlice('bench');
  const env = { ...slice.env, CHDB_PATH: path.join(tmpdir(), `${slice.id}-chdb`) };
  const port = 3900 + Math.floor(Math.random() * 90);
  const gateway = `http://127.0.0.1:${port}`;
  let all: ReturnType<typeof start> | undefined;
  try {
    const account = JSON.parse(
      await run([cli, 'accounts', 'create', '--name', 'Bench', '--email', 'bench@gateway.local', '--sandbox-numbers', '4', '--plan', 'scale', '--json'], env),
    ) as { api_key: string };
    all = start([cli, 'all'], { ...env, PORT: String(port) }, 'ignore');
    const auth = { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' };
    const post = async (url: string, body: unknown) => {
      const response = await request(`${gateway}${url}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      const answer = (await response.body.json()) as Record<string, unknown>;
      if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${JSON.stringify(answer)}`);
      return answer;
    };
    await numbersConnected(gateway, auth);
    const keys: string[] = [];
    for (let i = 0; i < 8; i++) keys.push((await post('/keys', { role: 'agent', scopes: ['messages:send'] })).api_key as string);

    const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+55119${String(20_000_000 + i)}`);
    const api = await saturate(gateway, keys, phones);

    const config = loadConfig();
    const kafka = createKafka(config.kafka, pino({ level: 'silent' }));
    const serdes = await TopicSerdes.register(new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles()), [topics.sendCommands], `${slice.id}.`);
    const created = await post('/campaigns', {
      name: 'Bench', message: { type: 'text', body: 'Hi {{name}}, your order is on its way.' },
      audience: { csv: `phone,name\n${phones.map((p, i) => `${p},C${i}`).join('\n')}` }, pace_per_minute: 600_000,
    });
    const times: number[] = [];
    const consumer = await createConsumer(kafka, serdes, { groupId: `${slice.id}.bench-campaign`, topics: [topics.sendCommands], fromBeginning: true });
    const seen = new Set<string>();
    await consumer.run(async (batch) => {
      for (const record of batch.records) {
        const command = record.decoded.ok ? (record.decoded.value as SendCommand | null) : null;
        if (command !== null && command.campaign_id === created.id && !seen.has(command.message_id)) {
          seen.add(command.message_id);
          times.push(record.timestamp);
        }
      }
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    await post(`/campaigns/${created.id as string}/start`, {});
    await until('every recipient dispatched', () => seen.size >= RECIPIENTS, 300_000);
    await consumer.stop();
    const campaign = (RECIPIENTS - 1) / ((Math.max(...times) - Math.min(...times)) / 1_000);
    console.log(`campaign benchmark: ${RECIPIENTS} recipients, 4 sandbox numbers`);
    console.log(`  API POST /messages/text   ${api.perSecond.toFixed(0).padStart(6)} accepted/s (${CONNECTIONS} connections, ${SECONDS} s; ${api.refused} refused)`);
    console.log(`  one campaign              ${campaign.toFixed(0).padStart(6)} dispatched/s`);
    console.log(`  ratio campaign/API        ${(campaign / api.perSecond).toFixed(2)}   (target 0.90 or better)`);
  } finally {
    if (all) await stop(all);
    await slice.dispose();
  }
}

async function saturate(base: string, keys: readonly string[], phones: readonly string[]): Promise<{ perSecond: number; refused: number }> {
  const pool = new Pool(base, { connections: CONNECTIONS, pipelining: 1 });
  let accepted = 0;
  let refused = 0;
  let n = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1_000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, connection) => {
      while (performance.now() < deadline) {
        const i = n++;
        const response = await pool.request({
          method: 'POST', path: '/messages/text',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[connection % keys.length]}` },
          body: JSON.stringify({ to: phones[i % phones.length], body: `Hi C${i}, your order is on its way.` }),
        });
        await response.body.dump();
        if (response.statusCode === 202) accepted++;
        else refused++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1_000;
  await pool.close();
  return { perSecond: accepted / elapsed, refused };
}

runMain(main);
