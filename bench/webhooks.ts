/**
 * Webhook benchmark, in one run on this machine:
 * 1. saturation: signed deliveries per second of the dispatcher role (its own process) draining a
 *    backlog of events to one local receiver, against two bare loops in processes of their own at
 *    the same concurrency: one reading the same events from Kafka (decoded through the registry),
 *    rendering, signing and posting them, with nothing else (no attempt records, no per-endpoint
 *    queues), the honest baseline; and a pure undici loop posting precomputed bodies and headers,
 *    the HTTP ceiling. Prints both ratios, and each one's CPU time a delivery: the receiver and
 *    the broker share the machine's two cores with it, so the rate moves with their load more
 *    than the CPU does. The receiver verifies every signature, as a real one would, for all three.
 * 2. steady load: a steady rate of events written to `gw.events`, each timed from its write to its
 *    arrival at the receiver; p50 and p99.
 *
 *   npm run bench:webhooks   (BENCH_EVENTS=40000, BENCH_CONCURRENCY=32, BENCH_RATE=500, BENCH_SECONDS=10)
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { envelopeBody } from '../events/envelope.js';
import { deliveryHeaders, newSigningSecret, verify } from '../events/signature.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../schemas/ids.js';
import { loadSchemaFiles } from '../schemas/load.js';
import { AvroSerdes } from '../schemas/serde.js';
import type { ConfigRecord, PublicEvent } from '../schemas/records.js';
import { createCipher } from '../shared/cipher.js';
import { allTopics } from '../stack/clients.js';
import { loadConfig } from '../stack/config.js';
import { repoRoot } from '../shared/repo-root.js';
import { stackUp } from '../stack/local/index.js';
import { createConsumer, createKafka, createProducer, ensureTopics, removePrefixed, topics, TopicSerdes, type Producer } from '../topics/index.js';
import { cpuMs, percentiles, runMain, start, stop, until } from './support.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 40_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = 2;
const cli = path.join(repoRoot, 'dist', 'stack', 'cli.js');
const WEBHOOK = 'wh_bench';

interface Posted {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** Arrivals at the receiver: first arrival of each event id, and their times. */
class Arrivals {
  private readonly first = new Map<string, number>();
  /** Times of the first arrivals of each round's events (ids `evt_<round>_<n>`), in arrival order. */
  private readonly rounds = new Map<string, number[]>();
  unsigned = 0;

  add(eventId: string, verified: boolean): void {
    if (!verified) this.unsigned++;
    if (this.first.has(eventId)) return;
    const at = performance.now();
    this.first.set(eventId, at);
    const round = eventId.slice('evt_'.length, eventId.lastIndexOf('_'));
    let times = this.rounds.get(round);
    if (times === undefined) this.rounds.set(round, (times = []));
    times.push(at);
  }

  at(eventId: string): number | undefined {
    return this.first.get(eventId);
  }

  has(eventIds: readonly string[]): boolean {
    return eventIds.every((id) => this.first.has(id));
  }

  /** Events of `round` arrived so far. */
  arrived(round: string): number {
    return this.rounds.get(round)?.length ?? 0;
  }

  /** Deliveries per second of `round` from the arrival numbered `from` (0-based) to its last. */
  rateFrom(round: string, from: number): number {
    const times = this.rounds.get(round)!;
    return (times.length - 1 - from) / ((times[times.length - 1]! - times[from]!) / 1_000);
  }
}

/** One contender's round: deliveries a second, and its CPU time a delivery (µs), over the later half. */
interface Round {
  readonly rate: number;
  readonly cpuUs: number;
}

/**
 * Waits until all `count` events of `round` arrived from `child`, then stops it. Only the later
 * half is measured, for every contender alike: by then each process is warm (its code compiled,
 * its connections open), as a dispatcher running for hours is. The rate is that half's, and so is
 * the CPU a delivery: what one delivery costs the process, which the machine's other load (the
 * receiver and the broker share its two cores) moves less than the rate.
 */
async function drained(what: string, child: ChildProcess, arrivals: Arrivals, round: string, count: number): Promise<Round> {
  let half: { readonly cpu: number; readonly arrived: number } | undefined;
  await until(what, () => {
    const arrived = arrivals.arrived(round);
    if (half === undefined && arrived >= count / 2) half = { cpu: cpuMs(child.pid), arrived };
    return arrived >= count;
  }, 300_000, 20);
  const cpu = cpuMs(child.pid);
  await stop(child);
  return { rate: arrivals.rateFrom(round, half!.arrived - 1), cpuUs: ((cpu - half!.cpu) * 1_000) / (count - half!.arrived) };
}

let sequence = 0;

function event(round: string): PublicEvent {
  const n = ++sequence;
  return {
    event_id: asEventId(`evt_${round}_${n}`),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_bench'),
    project_id: asProjectId('prj_bench'),
    instance_id: asInstanceId(`inst_${n % 8}`),
    event_type: 'message.received',
    scope: 'project',
    client_reference: null,
    group: null,
    sender: { jid: `55119${String(n % 100_000).padStart(8, '0')}@s.whatsapp.net`, lid: null, name: 'Customer', phone: null },
    mentions: [],
    payload_json: JSON.stringify({
      type: 'text',
      message_id: `msg_${n}`,
      wa_message_id: `3EB0${n.toString(16).toUpperCase().padStart(16, '0')}`,
      from: `+55119${String(n % 100_000).padStart(8, '0')}`,
      body: `Hello, I would like to know where my order ${n} is. Thanks!`,
      timestamp: new Date().toISOString(),
    }),
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  await stackUp({ root: config.stackRoot });
  const id = `benchwh${Date.now().toString(36)}`;
  const prefix = `${id}.`;
  const logger = pino({ level: 'warn' });
  const kafka = createKafka(config.kafka, logger);
  await ensureTopics(kafka, allTopics(config), { prefix, replicationFactor: config.kafka.replicationFactor });
  const serdes = await TopicSerdes.register(new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles()), [topics.events, topics.config], prefix);
  const producer = await createProducer(kafka, serdes);
  const secret = newSigningSecret();
  const secretsKey = `bench-${id}`;

  const arrivals = new Arrivals();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const signature = req.headers['x-service-signature'];
      arrivals.add(String(req.headers['x-service-event-id']), verify(secret, Buffer.concat(chunks), Array.isArray(signature) ? signature[0] : signature));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/${WEBHOOK}`;

  const webhook: ConfigRecord = {
    event_id: asEventId(`cfg_${id}`),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_bench'),
    project_id: asProjectId('prj_bench'),
    instance_id: null,
    entity_id: WEBHOOK,
    entity: { kind: 'webhook', url, event_types: [], secret_ciphertext: createCipher(secretsKey).seal(secret), enabled: true, description: null, created_at: Date.now() },
  };
  await producer.send(topics.config, [{ key: WEBHOOK, value: webhook }]);

  const dispatcherEnv = {
    GATEWAY_MODE: 'development', // the local sandbox's defaults (PAYMENT_PROVIDER, CONNECTOR)
    KAFKA_TOPIC_PREFIX: prefix,
    SECRETS_KEY: secretsKey,
    ALLOW_PRIVATE_NETWORK: 'true',
    WEBHOOK_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
    CHDB_PATH: path.join(tmpdir(), `${id}-chdb`),
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
  };
  const bodiesFile = path.join(tmpdir(), `${id}-bodies.json`);
  const children: ChildProcess[] = [];
  try {
    /**
     * The dispatcher drains a backlog written before it starts, with the endpoint queue a
     * deployment has unless it sets one (1,000): the rest waits in the log, its partition paused.
     */
    const dispatcherRound = async (round: number): Promise<Round> => {
      const tag = `d${round}`;
      await produce(producer, Array.from({ length: EVENTS }, () => event(tag)));
      const child = start([cli, 'dispatcher'], dispatcherEnv, 'ignore');
      children.push(child);
      return drained(`round ${round} of the dispatcher`, child, arrivals, tag, EVENTS);
    };
    /** The same bodies and headers, posted by a bare undici loop in a process of its own. */
    const bareRound = async (round: number): Promise<Round> => {
      const tag = `b${round}`;
      const events = Array.from({ length: EVENTS }, () => event(tag));
      const posted: Posted[] = events.map((e) => {
        const body = envelopeBody(e);
        return { body, headers: deliveryHeaders(secret, body, e) };
      });
      writeFileSync(bodiesFile, JSON.stringify(posted));
      const child = start([fileURLToPath(import.meta.url), 'bare', bodiesFile, url, String(CONCURRENCY)], {}, 'ignore');
      children.push(child);
      return drained(`round ${round} of the bare loop`, child, arrivals, tag, EVENTS);
    };

    /** The same events read from gw.events by a bare loop: decode, render, sign, post; nothing recorded. */
    const kafkaRound = async (round: number): Promise<Round> => {
      const tag = `k${round}`;
      await produce(producer, Array.from({ length: EVENTS }, () => event(tag)));
      const child = start([fileURLToPath(import.meta.url), 'bare-kafka', prefix, url, String(CONCURRENCY), tag, String(EVENTS)], { BENCH_SIGNING_SECRET: secret }, 'ignore');
      children.push(child);
      return drained(`round ${round} of the Kafka-reading bare loop`, child, arrivals, tag, EVENTS);
    };

    const bare: Round[] = [];
    const kafkaBare: Round[] = [];
    const dispatched: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternated, so neither runs always first on a machine that warms up or slows down.
      const order = round % 2 === 0 ? [bareRound, kafkaRound, dispatcherRound] : [dispatcherRound, kafkaRound, bareRound];
      for (const run of order) {
        const result = await run(round);
        (run === bareRound ? bare : run === kafkaRound ? kafkaBare : dispatched).push(result);
      }
    }

    const steady = await steadyLoad(producer, arrivals, start([cli, 'dispatcher'], dispatcherEnv, 'ignore'), children);

    const body = envelopeBody(event('size')).length;
    const best = (rounds: readonly Round[]) => Math.max(...rounds.map((r) => r.rate));
    const cpu = (rounds: readonly Round[]) => Math.min(...rounds.map((r) => r.cpuUs));
    const line = (name: string, rounds: readonly Round[], what: string) =>
      console.log(
        `  ${name.padEnd(22)} ${best(rounds).toFixed(0).padStart(7)} deliveries/s  ${cpu(rounds).toFixed(0).padStart(4)} µs CPU a delivery  (${what}; rounds: ${rounds.map((r) => `${r.rate.toFixed(0)}/s ${r.cpuUs.toFixed(0)} µs`).join(', ')})`,
      );
    console.log(`webhook benchmark: ${EVENTS} deliveries a round (the later half measured), concurrency ${CONCURRENCY}, best of ${ROUNDS} rounds, ${body}-byte bodies`);
    line('bare undici loop', bare, 'same bodies and headers, precomputed: the HTTP ceiling');
    line('bare Kafka loop', kafkaBare, 'from gw.events: decode, render, sign, post; no attempt records');
    line('dispatcher', dispatched, 'from gw.events: decode, sign, post, record the attempt, commit; the default endpoint queue, 1,000');
    console.log(`  ratio dispatcher/Kafka loop  ${(best(dispatched) / best(kafkaBare)).toFixed(2)} (target 0.6); by CPU a delivery ${(cpu(kafkaBare) / cpu(dispatched)).toFixed(2)}`);
    console.log(`  ratio dispatcher/undici      ${(best(dispatched) / best(bare)).toFixed(2)}`);
    console.log(`steady load at ${RATE} events/s for ${SECONDS} s: ${steady.written} written, ${steady.delivered} delivered`);
    console.log(`  event written -> delivered   p50 ${steady.p50.toFixed(1)} ms  p99 ${steady.p99.toFixed(1)} ms`);
    if (arrivals.unsigned > 0) console.log(`  ${arrivals.unsigned} deliveries failed signature verification`);
  } finally {
    await Promise.all(children.map(stop));
    await producer.disconnect();
    receiver.closeAllConnections();
    receiver.close();
    rmSync(bodiesFile, { force: true });
    rmSync(dispatcherEnv.CHDB_PATH, { recursive: true, force: true });
    await removePrefixed(kafka, config.schemaRegistryUrl, prefix);
  }
}

/** `RATE` events a second for `SECONDS`, each timed from just before its write to its first arrival. */
async function steadyLoad(producer: Producer, arrivals: Arrivals, dispatcher: ChildProcess, children: ChildProcess[]) {
  children.push(dispatcher);
  // The dispatcher joins its group on start: write until it delivers (not measured).
  await until('the dispatcher to deliver', async () => {
    const e = event('warm');
    await produce(producer, [e]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    return arrivals.at(e.event_id) !== undefined;
  }, 120_000);
  const writtenAt = new Map<string, number>();
  const tickMs = 10;
  const perTick = RATE / (1_000 / tickMs);
  const writes: Promise<void>[] = [];
  const started = performance.now();
  for (let tick = 0; performance.now() - started < SECONDS * 1_000; tick++) {
    const wait = started + tick * tickMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const events = Array.from({ length: perTick }, () => event('steady'));
    const now = performance.now();
    for (const e of events) writtenAt.set(e.event_id, now);
    writes.push(produce(producer, events));
  }
  await Promise.all(writes);
  const ids = [...writtenAt.keys()];
  await until('the last steady deliveries', () => arrivals.has(ids), 60_000, 20).catch(() => undefined);
  const latencies = ids.flatMap((id) => {
    const at = arrivals.at(id);
    return at === undefined ? [] : [at - writtenAt.get(id)!];
  });
  return { written: ids.length, delivered: latencies.length, ...percentiles(latencies) };
}

/** Writes events in requests the broker takes (one project: one partition, 1 MB a request at most). */
async function produce(producer: Producer, events: readonly PublicEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1_000) {
    await producer.send(topics.events, events.slice(i, i + 1_000).map((value) => ({ key: value.project_id!, value })));
  }
}

/** The bare baseline: posts every body with its headers, `concurrency` at a time, then exits. */
async function bareLoop(file: string, url: string, concurrency: number): Promise<void> {
  const posted = JSON.parse(readFileSync(file, 'utf8')) as Posted[];
  const agent = new Agent();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < posted.length) {
        const { body, headers } = posted[next++]!;
        const response = await request(url, { dispatcher: agent, method: 'POST', headers, body });
        await response.body.dump();
      }
    }),
  );
  await agent.close();
}

/**
 * The Kafka-reading baseline: reads gw.events from the start in a group of its own, skips the
 * events of other rounds (they come before its own on the one partition, so before its first post),
 * and renders, signs and posts its round's events `concurrency` at a time; exits once all are posted.
 */
async function bareKafkaLoop(prefix: string, url: string, concurrency: number, tag: string, count: number): Promise<void> {
  const config = loadConfig();
  const secret = process.env.BENCH_SIGNING_SECRET!;
  const kafka = createKafka(config.kafka, pino({ level: 'warn' }));
  const serdes = await TopicSerdes.register(new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles()), [topics.events], prefix);
  const agent = new Agent();
  const consumer = await createConsumer(kafka, serdes, { groupId: `${prefix}bare.${tag}`, topics: [topics.events], fromBeginning: true });
  let posted = 0;
  const done = new Promise<void>((resolve) => {
    void consumer.run(async (batch) => {
      const mine = batch.records.flatMap((r) => (r.decoded.ok && r.decoded.value && (r.decoded.value as PublicEvent).event_id.startsWith(`evt_${tag}_`) ? [r.decoded.value as PublicEvent] : []));
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, mine.length) }, async () => {
          while (next < mine.length) {
            const e = mine[next++]!;
            const body = envelopeBody(e);
            const response = await request(url, { dispatcher: agent, method: 'POST', headers: deliveryHeaders(secret, body, e), body });
            await response.body.dump();
          }
        }),
      );
      posted += mine.length;
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
      if (posted >= count) resolve();
    });
  });
  await done;
  await consumer.stop();
  await agent.close();
}

const [mode, ...args] = process.argv.slice(2);
runMain(() =>
  mode === 'bare'
    ? bareLoop(args[0]!, args[1]!, Number(args[2]))
    : mode === 'bare-kafka'
      ? bareKafkaLoop(args[0]!, args[1]!, Number(args[2]), args[3]!, Number(args[4]))
      : main(),
);
