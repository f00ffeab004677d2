/**
 * Send benchmark, in one run on this machine:
 * 1. end to end: the gateway with every role in one process, at a steady 1,000 sends/s, the time
 *    from the 202 to the `delivered` fact of each message on the log (sandbox receipts set to
 *    answer at once); then the same run with every role in its own process and tracing on, and
 *    each hop's share from its spans (bench/send-hops.ts) and the CPU each role spent per send;
 * 2. saturation: accepted `POST /messages/text` per second and p50/p99 latency of the api role
 *    alone (as it scales in production) against a bare Fastify route writing the same command
 *    (Avro through the registry) with the gateway's own batching producer; prints the ratio, and
 *    the physical reference: the same records produced raw from one process (bench/bare-server.ts).
 *
 *   npm run bench:send      (BENCH_SECONDS=10, BENCH_CONNECTIONS=64, BENCH_RATE=1000)
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { availableParallelism, tmpdir } from 'node:os';
import { pino } from 'pino';
import { Pool, request } from 'undici';
import { loadSchemaFiles } from '../schemas/load.js';
import { AvroSerdes } from '../schemas/serde.js';
import type { MessageStatus } from '../schemas/records.js';
import { loadConfig } from '../stack/config.js';
import { repoRoot } from '../shared/repo-root.js';
import { createConsumer, createKafka, ensureTopics, topics, TopicSerdes } from '../topics/index.js';
import { spanCollector } from './send-hops.js';
import { benchSlice, cpuMs, memoryMb, deliverableCustomers, numbersConnected, percentiles, run, runMain, start, stop, until } from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const cli = path.join(repoRoot, 'dist', 'stack', 'cli.js');
const ROLES = ['api', 'processor', 'connector', 'dispatcher'] as const;
const IDLE_MS = 5_000;

interface Load {
  readonly accepted: number;
  readonly refused: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const slice = await benchSlice('bench');
  const { id } = slice;
  const env = { ...slice.env, CHDB_PATH: path.join(tmpdir(), `${id}-chdb`) };
  const children: ChildProcess[] = [];
  try {
    const account = JSON.parse(
      await run([cli, 'accounts', 'create', '--name', 'Bench', '--email', 'bench@gateway.local', '--sandbox-numbers', '4', '--plan', 'scale', '--json'], env),
    ) as { api_key: string; instance_ids: string[] };
    const gatewayPort = 3900 + Math.floor(Math.random() * 90);
    const all = start([cli, 'all'], { ...env, PORT: String(gatewayPort) });
    children.push(all);
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    const auth = { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' };
    await numbersConnected(gateway, auth);
    // The rate limit is per key (1,000/s on the scale plan): one key a connection, so saturation
    // measures the api role and not the limit (eight keys capped it at 8,000/s, refusing the rest).
    const keys: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const response = await request(`${gateway}/keys`, { method: 'POST', headers: auth, body: JSON.stringify({ role: 'agent', scopes: ['messages:send'] }) });
      keys.push(((await response.body.json()) as { api_key: string }).api_key);
    }
    await receiptsAtOnce(gateway, auth, account.instance_ids);

    const kafka = createKafka(config.kafka, pino({ level: 'silent' }));
    const barePrefix = `${id}.bare.`;
    await ensureTopics(kafka, [topics.sendCommands], { prefix: barePrefix, replicationFactor: 1 });
    const bareServer = path.join(repoRoot, 'dist', 'bench', 'bare-server.js');
    const bare = start([bareServer], { ...env, PORT: '0', BENCH_PREFIX: barePrefix });
    children.push(bare);
    const barePort = (JSON.parse(await firstLine(bare)) as { port: number }).port;
    const baseline = `http://127.0.0.1:${barePort}`;

    const customers = deliverableCustomers(1_000);
    let n = 0;
    const body = () => JSON.stringify({ to: customers[n++ % customers.length], body: `Your order ${n} is on its way.`, client_reference: `order-${n}` });

    const e2e = await steady(kafka, `${id}.`, 'untraced', gateway, auth, body);
    const allPeakRss = memoryMb(all.pid, 'VmHWM');

    // Where the time goes: the same run with every role in its own process, as they scale in
    // production, and tracing on: every hop's span is sent to a receiver here.
    await stop(all);
    const collector = await spanCollector();
    const roles = ROLES.map((role) =>
      start([cli, role], { ...env, PORT: String(gatewayPort), CHDB_PATH: path.join(tmpdir(), `${id}-chdb-${role}`), OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }, 'ignore'),
    );
    children.push(...roles);
    await numbersConnected(gateway, auth);
    // What each role spends with nothing to do (its fetches, heartbeats, timers), then what the run costs above that.
    const idle = await cpuRates(roles, IDLE_MS);
    const cpuBefore = roles.map((role) => cpuMs(role.pid));
    const wallBefore = performance.now();
    const tracedRun = await steady(kafka, `${id}.`, 'traced', gateway, auth, body);
    const wallMs = performance.now() - wallBefore;
    const cpuPerSend = roles.map((role, i) => ((cpuMs(role.pid) - cpuBefore[i]! - idle[i]! * wallMs) * 1_000) / tracedRun.sent);
    await Promise.all(roles.map(stop)); // sends the spans it still holds
    const breakdown = collector.hops(tracedRun.deliveredAt);
    await collector.close();

    // Saturation of the api role alone: the other roles stop, and their backlog waits on the log.
    const api = start([cli, 'api'], { ...env, PORT: String(gatewayPort) });
    children.push(api);
    await until('the api role', async () => (await request(`${gateway}/health`).then((r) => r.statusCode).catch(() => 0)) === 200);
    await saturate(baseline, [], body, 2); // warm-up of both
    await saturate(gateway, keys, body, 2);
    const bareRuns: Load[] = [];
    const gatewayRuns: Load[] = [];
    for (let round = 0; round < 2; round++) {
      bareRuns.push(await saturate(baseline, [], body, SECONDS));
      gatewayRuns.push(await saturate(gateway, keys, body, SECONDS));
    }
    const rawRun = start([bareServer, 'raw', '200000'], { ...env, BENCH_PREFIX: barePrefix });
    children.push(rawRun);
    const physical = JSON.parse(await firstLine(rawRun)) as { per_second: number; bytes: number };
    const best = (runs: Load[]) => runs.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
    const b = best(bareRuns);
    const g = best(gatewayRuns);
    console.log(`send benchmark: ${CONNECTIONS} connections, ${SECONDS} s a run, best of 2 runs each`);
    console.log(`  raw produce            ${physical.per_second.toFixed(0).padStart(6)} records/s   (the physical reference: the same ${physical.bytes}-byte records, encoded beforehand, 1,000 a request, one process)`);
    console.log(`  bare Fastify + Kafka   ${b.perSecond.toFixed(0).padStart(6)} accepted/s  p50 ${b.p50.toFixed(1)} ms  p99 ${b.p99.toFixed(1)} ms  (the same command, with the gateway's batching producer)`);
    console.log(`  gateway /messages/text ${g.perSecond.toFixed(0).padStart(6)} accepted/s  p50 ${g.p50.toFixed(1)} ms  p99 ${g.p99.toFixed(1)} ms  (refused: ${g.refused})`);
    console.log(`  ratio gateway/bare     ${(g.perSecond / b.perSecond).toFixed(2)}   (target 0.95)`);
    if (g.refused > 0) console.log(`  (the gateway refused ${g.refused} sends: what it accepted is bounded by a limit, not by the api role)`);
    console.log(`end to end at ${RATE} sends/s for ${SECONDS} s: ${e2e.sent} accepted, ${e2e.delivered} delivered; the one process's peak RSS ${allPeakRss.toFixed(0)} MB`);
    console.log(`  202 -> delivered fact   p50 ${e2e.p50.toFixed(1)} ms  p99 ${e2e.p99.toFixed(1)} ms  (target p50 under 30 ms, p99 under 100 ms)`);
    console.log(`the same, every role in its own process and tracing on: 202 -> delivered fact p50 ${tracedRun.p50.toFixed(1)} ms  p99 ${tracedRun.p99.toFixed(1)} ms; hop by hop over the ${breakdown.complete} sends all of whose spans came in:`);
    for (const { hop, p50, p99 } of breakdown.hops) console.log(`  ${hop.padEnd(76)} p50 ${p50.toFixed(1).padStart(7)} ms  p99 ${p99.toFixed(1).padStart(7)} ms`);
    const cores = (cpuPerSend.reduce((sum, us) => sum + us, 0) * RATE) / 1_000_000 + idle.reduce((sum, rate) => sum + rate, 0);
    console.log(`  CPU per send above idle (traced run): ${ROLES.map((role, i) => `${role} ${cpuPerSend[i]!.toFixed(0)} µs`).join(', ')}`);
    console.log(`  idle, the roles use ${ROLES.map((role, i) => `${role} ${(idle[i]! * 100).toFixed(1)}%`).join(', ')} of a core; at ${RATE} sends/s they need ${cores.toFixed(2)} cores (this machine has ${availableParallelism()}, shared with Kafka, Postgres and the registry)`);
  } finally {
    await Promise.all(children.map(stop));
    await slice.dispose();
  }
}

/** The sandbox answers each send's delivered and read receipts at once, not after its default delays. */
async function receiptsAtOnce(gateway: string, auth: Record<string, string>, numbers: readonly string[]): Promise<void> {
  for (const number of numbers) {
    const response = await request(`${gateway}/sandbox/instances/${number}/behaviour`, {
      method: 'POST', headers: auth, body: JSON.stringify({ delivered_after_ms: 0, read_after_ms: 0 }),
    });
    await response.body.dump();
  }
}

/** As many requests as `CONNECTIONS` keep in flight, for `seconds`, each connection with one of the keys. */
async function saturate(base: string, keys: readonly string[], body: () => string, seconds: number): Promise<Load> {
  const pool = new Pool(base, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let refused = 0;
  const started = performance.now();
  const deadline = started + seconds * 1_000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, connection) => {
      const headers: Record<string, string> = keys.length > 0 ? { authorization: `Bearer ${keys[connection % keys.length]}` } : {};
      while (performance.now() < deadline) {
        const t = performance.now();
        const response = await pool.request({ method: 'POST', path: '/messages/text', headers: { 'content-type': 'application/json', ...headers }, body: body() });
        await response.body.dump();
        if (response.statusCode === 202) latencies.push(performance.now() - t);
        else refused++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1_000;
  await pool.close();
  return { accepted: latencies.length, refused, perSecond: latencies.length / elapsed, ...percentiles(latencies) };
}

/** `RATE` sends a second for `SECONDS`, each timed from its 202 to its `delivered` fact on the log. */
async function steady(kafka: ReturnType<typeof createKafka>, prefix: string, label: string, base: string, headers: Record<string, string>, body: () => string) {
  const serdes = await TopicSerdes.register(new AvroSerdes(loadConfig().schemaRegistryUrl, loadSchemaFiles()), [topics.messageStatus], prefix);
  const acceptedAt = new Map<string, number>();
  const deliveredAfter: number[] = [];
  /** When each message's delivered fact was read, in epoch milliseconds (the spans' clock). */
  const deliveredAt = new Map<string, number>();
  const consumer = await createConsumer(kafka, serdes, { groupId: `${prefix}bench-delivered.${label}`, topics: [topics.messageStatus], fromBeginning: false });
  let joined = false;
  await consumer.run(async (batch) => {
    joined = true;
    const now = performance.now();
    for (const record of batch.records) {
      const status = record.decoded.ok ? (record.decoded.value as MessageStatus | null) : null;
      const at = status?.status === 'delivered' ? acceptedAt.get(status.message_id) : undefined;
      if (at !== undefined) {
        deliveredAfter.push(now - at);
        deliveredAt.set(status!.message_id, performance.timeOrigin + now);
        acceptedAt.delete(status!.message_id);
      }
    }
    batch.resolve(batch.records[batch.records.length - 1]!.offset);
  });
  const pool = new Pool(base, { connections: CONNECTIONS });
  // The group joins on the first fetch: send until it has (these are not measured), then measure.
  await until('the status reader', async () => {
    const response = await pool.request({ method: 'POST', path: '/messages/text', headers: { 'content-type': 'application/json', ...headers }, body: body() });
    await response.body.dump();
    return joined;
  });
  deliveredAfter.length = 0;
  acceptedAt.clear();
  let sent = 0;
  const inFlight: Promise<void>[] = [];
  const tickMs = 10;
  const perTick = RATE / (1_000 / tickMs);
  const started = performance.now();
  for (let tick = 0; performance.now() - started < SECONDS * 1_000; tick++) {
    const due = started + tick * tickMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // Whole sends only: below 100 sends/s a tick carries none or one, so the rate holds at any value.
    const sendsThisTick = Math.floor((tick + 1) * perTick) - Math.floor(tick * perTick);
    for (let i = 0; i < sendsThisTick; i++) {
      inFlight.push(
        pool.request({ method: 'POST', path: '/messages/text', headers: { 'content-type': 'application/json', ...headers }, body: body() }).then(async (response) => {
          const answer = (await response.body.json()) as { message_id?: string };
          if (response.statusCode === 202 && answer.message_id) {
            acceptedAt.set(answer.message_id, performance.now());
            sent++;
          }
        }),
      );
    }
  }
  await Promise.all(inFlight);
  await until('the last delivered facts', async () => deliveredAfter.length >= sent, 30_000).catch(() => undefined);
  await consumer.stop();
  await pool.close();
  return { sent, delivered: deliveredAfter.length, deliveredAt, ...percentiles(deliveredAfter) };
}

/** The share of a core each child uses over `ms` (1 is a whole core). */
async function cpuRates(children: readonly ChildProcess[], ms: number): Promise<number[]> {
  const before = children.map((child) => cpuMs(child.pid));
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const elapsed = performance.now() - started;
  return children.map((child, i) => (cpuMs(child.pid) - before[i]!) / elapsed);
}

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) return line;
  throw new Error('the process printed nothing');
}

runMain(main);
